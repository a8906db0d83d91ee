"""``git memhtml install|uninstall`` and the entry points git calls: ``hook <name>``, ``merge-driver``.

Thin commands over :mod:`git_memhtml.hooks` (docs/design.md §3.9–3.10; docs/hooks.md).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import click

from git_memhtml.cli.common import app_of, json_option, respond
from git_memhtml.cli.hook_entry import guard as run_guard_entry
from git_memhtml.cli.hook_entry import run as run_hook_entry
from git_memhtml.hooks.guard import GUARD_HOOKS
from git_memhtml.hooks.shims import HOOK_NAMES
from git_memhtml.output import log

if TYPE_CHECKING:
    from git_memhtml.hooks.install import InstallReport


def _human(report: InstallReport) -> str:
    lines = [f"{a.hook}: {a.action}" for a in report.hooks]
    if report.hooks_dir:
        lines.append(f"hooks folder: {report.hooks_dir}")
    lines.append(f"merge-driver config ({report.scope}): {'changed' if report.config_changed else 'unchanged'}")
    lines += [f"note: {note}" for note in report.notes]
    return "\n".join(lines)


@click.command("install")
@click.option("--local", "scope", flag_value="local", default=True,
              help="Hooks and merge-driver config for this repository (default).")
@click.option("--global", "scope", flag_value="global",
              help="Only the merge-driver definition, in your global git config (no hooks).")
@click.option("--hooks-path", type=click.Choice(["follow"]), default=None,
              help="Install into core.hooksPath when it is set (refused otherwise).")
@click.option("--force", is_flag=True, help="Replace a git-memhtml hook that was edited by hand.")
@json_option
@click.pass_context
def install_cmd(ctx: click.Context, scope: str, hooks_path: str | None, force: bool, as_json: bool) -> int:
    """Install the index hooks (post-commit, post-merge, post-checkout, post-rewrite) and the merge driver.

    A foreign hook is kept as <hook>.legacy and still runs first. Running it again changes nothing.
    """
    from git_memhtml.hooks.install import install

    if scope == "global":
        report = install(Path.cwd(), Path.cwd(), scope="global", env=app_of(ctx).env)
    else:
        repo = app_of(ctx).repo()
        report = install(repo.root, repo.common_dir, scope="local", hooks_path_follow=hooks_path == "follow",
                         force=force, env=repo.env)
    respond(as_json, "hooks.install", asdict(report), lambda: _human(report))
    return 0


@click.command("uninstall")
@click.option("--local", "scope", flag_value="local", default=True, help="This repository (default).")
@click.option("--global", "scope", flag_value="global", help="The global merge-driver definition.")
@json_option
@click.pass_context
def uninstall_cmd(ctx: click.Context, scope: str, as_json: bool) -> int:
    """Remove exactly what install wrote: our hooks (chained ones are put back) and our git config."""
    from git_memhtml.hooks.install import uninstall

    if scope == "global":
        report = uninstall(Path.cwd(), Path.cwd(), scope="global", env=app_of(ctx).env)
    else:
        repo = app_of(ctx).repo()
        report = uninstall(repo.root, repo.common_dir, scope="local", env=repo.env)
    respond(as_json, "hooks.uninstall", asdict(report), lambda: _human(report))
    return 0


@click.command("hook", hidden=True, context_settings={"ignore_unknown_options": True})
@click.argument("name", type=click.Choice(HOOK_NAMES))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def hook_cmd(ctx: click.Context, name: str, args: tuple[str, ...]) -> int:
    """Run by the installed shims: catch the index up to HEAD (exit 0), or, for a commit guard, finish a killed
    write before git commits (exit 1 refuses the commit)."""
    cwd = app_of(ctx).repo_path or Path.cwd()
    if name in GUARD_HOOKS:
        code, line = run_guard_entry(name, cwd)
        log(line)
        return code
    log(run_hook_entry(name, cwd))
    return 0


@click.command("merge-driver", hidden=True)
@click.argument("base", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("ours", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("theirs", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("path")
@click.pass_context
def merge_driver_cmd(ctx: click.Context, base: Path, ours: Path, theirs: Path, path: str) -> int:
    """Called by git as `git-memhtml merge-driver %O %A %B %P` for generated listings, sitemap, access sidecar."""
    from git_memhtml.hooks.merge_driver import DRIVER_FAILED, run_merge_driver

    try:
        return run_merge_driver(base, ours, theirs, path, env=app_of(ctx).env)
    except Exception as exc:
        log(f"git-memhtml merge-driver: {path}: {type(exc).__name__}: {exc}")
        return DRIVER_FAILED


