"""``git memhtml validate [PATHS…] [--strict] [--json]`` — also the entry of the ``memhtml-validate`` pre-commit
hook (``.pre-commit-hooks.yaml``; docs/git.md §3)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from git_memhtml.cli.common import app_of, json_option
from git_memhtml.output import emit, envelope

if TYPE_CHECKING:
    from git_memhtml.store.validate_files import ValidationReport


def _summary(report: ValidationReport, strict: bool) -> str:
    files = len(report.checked)
    verdict = "failed" if report.failed(strict=strict) else "ok"
    skipped = f", {len(report.skipped)} skipped (generated or scaffold)" if report.skipped else ""
    return (
        f"validate {verdict}: {files} file{'s' if files != 1 else ''} checked{skipped}, "
        f"{report.violation_count} violation{'s' if report.violation_count != 1 else ''}, "
        f"{report.warning_count} warning{'s' if report.warning_count != 1 else ''}"
        + (" (--strict: warnings fail)" if strict and report.warning_count else "")
    )


@click.command("validate")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--strict", is_flag=True, help="Fail on warnings too (unknown elements, dropped metas, …).")
@json_option
@click.pass_context
def validate_cmd(ctx: click.Context, paths: tuple[str, ...], strict: bool, as_json: bool) -> int:
    """Check memory files: WHATWG parse errors (html5lib) and the memory format rules.

    With no PATHS, every memory file of the work tree is checked. Prints one `path: reason` line per
    finding (`path: warning: reason` for warnings), then a summary line, on stdout; exits 1 on any violation
    (with --strict, on any warning too). Generated index.html and sitemap.xml are skipped; symlinks are
    refused, not followed.
    """
    from git_memhtml.store.validate_files import default_memory_paths, validate_files

    app = app_of(ctx)
    repo = app.repo()
    base = (app.repo_path or Path.cwd()).resolve()
    if paths:
        report = validate_files(repo.root, paths, base=base, progress=app.progress(as_json=as_json))
    else:
        report = validate_files(repo.root, default_memory_paths(repo), base=repo.root,
                                progress=app.progress(as_json=as_json))
    failed = report.failed(strict=strict)
    if as_json:
        data = {
            "ok": not failed,
            "strict": strict,
            "checked": list(report.checked),
            "skipped": list(report.skipped),
            "violations": report.violation_count,
            "warnings": report.warning_count,
            "findings": [
                {"path": finding.path, "reason": finding.reason,
                 "severity": "warning" if finding.warning else "violation"}
                for finding in report.findings
            ],
        }
        emit(envelope("validate.report", data))
    else:
        for finding in report.findings:  # the report is the result: stdout, like every command's (docs/cli.md)
            emit(finding.line())
        emit(_summary(report, strict))
    return 1 if failed else 0


