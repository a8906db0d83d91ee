"""``git memhtml doctor [--fix] [--json]`` and ``git memhtml index verify [--json]`` (issue 4 item 6).

``index verify`` is attached to the ``index`` group defined in :mod:`git_memhtml.cli.index_cmds` when this
module is registered. Both exit 1 while problems remain.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import click

from git_memhtml.cli.app import App, utc_now
from git_memhtml.cli.common import app_of, json_option, respond
from git_memhtml.cli.model_binding import model_client
from git_memhtml.errors import ConfigError, ModelUnavailable, UsageError
from git_memhtml.tree.leftovers import LEFTOVER_MODES

if TYPE_CHECKING:
    from git_memhtml.doctor import DoctorReport
    from git_memhtml.index.verify import IndexDrift


def drift_data(drift: IndexDrift) -> dict[str, Any]:
    """JSON shape of an :class:`IndexDrift` (camelCase keys, ``clean`` and ``driftedPaths`` included)."""
    return {
        "clean": drift.clean, "notBuilt": drift.not_built, "indexedHead": drift.indexed_head, "head": drift.head,
        "stale": drift.stale,
        "missing": list(drift.missing), "extra": list(drift.extra),
        "differing": [{"path": p, "tables": list(t)} for p, t in drift.differing],
        "ftsOk": drift.fts_ok, "missingVectors": drift.missing_vectors, "driftedPaths": list(drift.drifted_paths),
        "matrixDamage": drift.matrix_damage,
        "refused": [{"path": p, "reason": why, "hint": f"git memhtml validate {p}"} for p, why in drift.refused],
    }


def drift_lines(drift: IndexDrift) -> list[str]:
    """Human lines of an :class:`IndexDrift`, one per finding."""
    lines: list[str] = []
    if drift.not_built:
        return [f"index: not built ({len(drift.missing)} memory files to index): run git memhtml index rebuild, "
                "or git memhtml doctor --fix"]
    if drift.stale:
        lines.append(f"index: stale: indexed {str(drift.indexed_head)[:12]}, HEAD is {str(drift.head)[:12]}")
    lines += [f"index: missing {p}" for p in drift.missing]
    lines += [f"index: extra {p}" for p in drift.extra]
    lines += [f"index: drifted {p} ({', '.join(t)})" for p, t in drift.differing]
    if not drift.fts_ok:
        lines.append("index: the full-text table disagrees with files")
    if drift.missing_vectors:
        lines.append(f"index: {drift.missing_vectors} chunk(s) lack a vector")
    if drift.matrix_damage:
        lines.append(f"index: damaged vector matrix {drift.matrix_damage} — fix: git memhtml index rebuild, or "
                     "git memhtml doctor --fix")
    return lines


def _report_data(report: DoctorReport) -> dict[str, Any]:
    return {
        "problems": report.problems, "index": drift_data(report.index),
        "unparseable": [{"path": p, "violations": v} for p, v in report.tree.unparseable],
        "duplicates": [{"path": p, "holder": h} for p, h in report.tree.duplicates],
        "danglingLinks": [{"src": s, "rel": r, "dst": d} for s, r, d in report.tree.dangling],
        "staleRuns": [asdict(s) for s in report.stale_runs],
        "leftoverWorktrees": list(report.leftover_worktrees),
        "gitattributesMissing": list(report.gitattributes_missing),
        "leftovers": [asdict(f) for f in report.leftovers], "fixed": list(report.fixed),
    }


def _human(report: DoctorReport, extra: int = 0) -> str:
    lines = [f"fixed: {a}" for a in report.fixed] + drift_lines(report.index)
    lines += [f"unparseable: {p}: {v}" for p, v in report.tree.unparseable]
    lines += [f"duplicate: {p} has the content of {h} (archive or delete one)" for p, h in report.tree.duplicates]
    lines += [f"dangling link: {s} {r} -> {d}" for s, r, d in report.tree.dangling]
    lines += [f"stale run: {s.run_id} ({s.reason})" for s in report.stale_runs]
    lines += [f"leftover worktree: {n}" for n in report.leftover_worktrees]
    lines += [f".gitattributes lacks: {line} (run git memhtml init)" for line in report.gitattributes_missing]
    lines += [f"leftover: {f.path} ({f.state}, not as HEAD has it; --fix-leftovers commit|remove)"
              for f in report.leftovers]
    problems = report.problems + extra
    hint = (
        "" if report.fixed or not report.problems
        else "; `git memhtml doctor --fix` repairs the index, runs and worktrees"
    )
    lines.append(f"{problems} problem(s){hint}" if problems else "no problems")
    return "\n".join(lines)


def _setting_problem(app: App) -> ConfigError | None:
    """The settings' first invalid value, as the error every other command would stop on (issue 27: with
    ``memhtml.llmmaxprompt 0`` every command exited 2 and ``doctor`` said "no problems"); ``None`` when all hold."""
    try:
        app.settings()
    except ConfigError as exc:
        return exc
    return None



@click.command("doctor")
@click.option("--fix", "do_fix", is_flag=True,
              help="Repair what is safe: the index, stale run rows, leftover worktrees (never memory files).")
@click.option("--fix-leftovers", "leftover_mode", type=click.Choice(LEFTOVER_MODES),
              help="Also settle memory files that differ from HEAD: commit them as they are, or remove them "
                   "(put back as HEAD has them). Implies --fix.")
@click.option("--model", "check_the_model", is_flag=True,
              help="Instead, make one tiny call to the configured model (memhtml.llm) and report its latency, or "
                   "the exact error.")
@json_option
@click.pass_context
def doctor_cmd(ctx: click.Context, do_fix: bool, leftover_mode: str | None, check_the_model: bool,
               as_json: bool) -> int:
    """Report index drift, unparseable files, dangling links, stale sleep runs and leftover worktrees."""
    from git_memhtml.doctor import diagnose, fix
    from git_memhtml.hooks.checks import git_integration_checks
    from git_memhtml.sleep.engine.lock import lock_findings
    from git_memhtml.sleep.engine.runs import mark_interrupted

    app = app_of(ctx)
    if check_the_model:
        if do_fix or leftover_mode:
            raise UsageError("--model checks the model only; it does not combine with --fix or --fix-leftovers",
                             hint="run git memhtml doctor --fix and git memhtml doctor --model separately")
        return _model_check(app, as_json)
    with app.index(catch_up=False) as db:
        interrupted = mark_interrupted(db, now=utc_now())
        if do_fix or leftover_mode:
            report = fix(app.repo(), db, app.embedder(), now=utc_now(), leftover_mode=leftover_mode)
        else:
            report = diagnose(app.repo(), db, now=utc_now())
    checks = git_integration_checks(app.repo())
    failing = [c for c in checks if not c.ok and c.name == "merge-driver"]
    data = _report_data(report)
    data["git"] = [asdict(c) for c in checks]
    data["interruptedRuns"] = interrupted
    locks = lock_findings(app.repo())
    data["staleLocks"] = locks
    bad_setting = _setting_problem(app)
    data["settings"] = None if bad_setting is None else {"error": bad_setting.message, "hint": bad_setting.hint}
    data["problems"] = (report.problems + len(failing) + sum(1 for lock in locks if lock["kind"] != "sleep-lock")
                        + (bad_setting is not None))

    def human() -> str:
        lines = [] if bad_setting is None else [f"settings: {bad_setting.message} — fix: {bad_setting.hint}"]
        lines += [f"interrupted run: {r} (finish it: git memhtml sleep resume {r})" for r in interrupted]
        lines += [f"stale {lock['kind']}: {lock['path']} — fix: {lock['hint']}" for lock in locks]
        lines += [f"{c.name}: {c.message}" + (f" — fix: {c.hint}" if c.hint and not c.ok else "") for c in checks]
        return "\n".join(lines + [_human(report, extra=data["problems"] - report.problems)])

    respond(as_json, "doctor.report", data, human)
    return 1 if data["problems"] else 0


def _model_check(app: App, as_json: bool) -> int:
    """``doctor --model``: exit 0 when the model answered within the contract, 1 otherwise."""
    from git_memhtml.doctor import check_model

    client = model_client(app)
    if client is None:
        raise ModelUnavailable("no model is configured (memhtml.llm is off)",
                               hint="git config memhtml.llm openai (or anthropic), then memhtml.llmurl and "
                                    "memhtml.llmmodel; see docs/models.md")
    check = check_model(client)
    data = {"ok": check.ok, "dialect": check.dialect, "model": check.model, "url": check.url,
            "latencyMs": check.latency_ms, "attempts": check.attempts, "inputTokens": check.input_tokens,
            "outputTokens": check.output_tokens, "error": check.error, "code": check.code, "hint": check.hint}

    def human() -> str:
        if check.ok:
            return (f"model: {check.describe}: answered in {check.latency_ms} ms ({check.attempts} attempt(s), "
                    f"{check.input_tokens} input + {check.output_tokens} output tokens)")
        return f"model: {check.describe}: failed after {check.latency_ms} ms: {check.error}\nhint: {check.hint}"

    respond(as_json, "doctor.model", data, human)
    return 0 if check.ok else 1


@click.command("verify")
@json_option
@click.pass_context
def verify_cmd(ctx: click.Context, as_json: bool) -> int:
    """Compare the index with a re-projection of HEAD + work tree (reads only; `doctor --fix` repairs)."""
    from git_memhtml.index.verify import verify

    app = app_of(ctx)
    with app.index(catch_up=False) as db:
        drift = verify(app.repo(), db, now=utc_now())
    respond(as_json, "index.verify", drift_data(drift), lambda: _verify_text(drift))
    return 0 if drift.clean and not drift.refused else 1


def _verify_text(drift: IndexDrift) -> str:
    """``index verify`` for people: the drift, then each file a rebuild refuses (as ``index rebuild`` lists it)."""
    lines = drift_lines(drift) or [
        "the index equals a rebuild of the tree" + (f", which refuses {len(drift.refused)} file(s):"
                                                    if drift.refused else "")]
    lines += [f"{path}: not indexed: {reason}" for path, reason in drift.refused]
    if drift.refused:
        lines.append(f"hint: git memhtml validate {drift.refused[0][0]} shows why a file is refused; fix it and "
                     "commit, then git memhtml index update")
    return "\n".join(lines)


