"""``git memhtml sleep plan|run|resume|status|review|merge|abort``."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import click

from git_memhtml.cli.app import utc_now
from git_memhtml.cli.common import app_of, json_option, respond
from git_memhtml.errors import UsageError
from git_memhtml.output import kv, log, stderr_is_tty, table, warn
from git_memhtml.sleep.contract import select_phases
from git_memhtml.sleep.env import PhaseReport
from git_memhtml.sleep.merge import merge_run
from git_memhtml.sleep.plan import plan
from git_memhtml.sleep.review import diff_text, resolve_run, review_run
from git_memhtml.sleep.run import RunReport, abort_run, resume_sleep, run_sleep
from git_memhtml.sleep.runs import all_runs, phase_rows

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@click.group("sleep")
def sleep_group() -> None:
    """Curate the memory on a sleep/<date> branch that a person reviews and merges."""


def _progress(report: PhaseReport) -> None:
    """One stderr line per finished phase, only on a terminal (DESIGN §3.8)."""
    if stderr_is_tty():
        log(f"  {report.phase:<20} {report.status}" + (f" ({report.detail})" if report.detail else ""))


def _run_table(report: RunReport) -> str:
    rows = [
        [i + 1, p.phase, p.status, (p.commit_sha or "")[:12], p.detail or " ".join(f"{k}={v}" for k, v in p.counts.items())[:90]]
        for i, p in enumerate(report.phases)
    ]
    head = f"run {report.run_id}{' (dry run)' if report.dry_run else ''}: base {report.base_sha[:12]} → head {report.head_sha[:12]}"
    tail = f"failed: {', '.join(report.failed_phases)}" if report.failed_phases else "all phases ok"
    hint = "" if report.dry_run else f"\nnext: git memhtml sleep review {report.run_id}"
    return head + "\n" + table(["#", "phase", "status", "commit", "detail / counts"], rows) + "\n" + tail + hint


@sleep_group.command("plan")
@json_option
@click.pass_context
def plan_cmd(ctx: click.Context, as_json: bool) -> int:
    """Would a run change anything? Reads index counts; runs no phase."""
    app = app_of(ctx)
    with app.index(catch_up=False) as db:
        result = plan(app.repo(), db)

    def human() -> str:
        lines = [f"verdict: {result['verdict']}", f"index fresh: {result['indexFresh']} (indexed {str(result['indexedCommit'])[:12]})"]
        if result["dirty"]:
            lines.append(f"checkout has {len(result['dirty'])} uncommitted path(s): {', '.join(result['dirty'][:5])}"
                         " — sleep runs on committed main only")
        lines += [f"  {k}: {v['count']} → {', '.join(v['feeds'])}" for k, v in result["signals"].items()]
        return "\n".join(lines)

    respond(as_json, "sleep.plan", result, human)
    return 0


@sleep_group.command("run")
@click.option("--date", help="Run date YYYY-MM-DD (default: today, UTC).")
@click.option("--phases", help="Comma-separated subset of phases (run in canonical order).")
@click.option("--dry-run", is_flag=True, help="Compute per-phase counts; make no branch and write nothing.")
@click.option("--deep", is_flag=True, help="The occasional budgeted cycle (placement-triage).")
@json_option
@click.pass_context
def run_cmd(ctx: click.Context, date: str | None, phases: str | None, dry_run: bool, deep: bool, as_json: bool) -> int:
    """Run the seventeen phases on sleep/<date>[-N]; your checkout is never touched."""
    app = app_of(ctx)
    if date is not None and not _DATE.match(date):
        raise UsageError(f"--date {date!r} is not YYYY-MM-DD", hint="e.g. --date 2026-11-30")
    try:
        selected = select_phases(phases)
    except ValueError as exc:
        raise UsageError(str(exc), hint="git memhtml sleep run --help") from exc
    with app.index(catch_up=False) as db:
        report = run_sleep(app.repo(), db, date=date or utc_now()[:10], phases=selected, dry_run=dry_run, deep=deep,
                           embedder=app.embedder(), clock=utc_now, after_phase=_progress)
    respond(as_json, "sleep.report", report.as_json(), lambda: _run_table(report))
    return 1 if report.failed_phases else 0


@sleep_group.command("resume")
@click.argument("run_id")
@json_option
@click.pass_context
def resume_cmd(ctx: click.Context, run_id: str, as_json: bool) -> int:
    """Finish an interrupted run: re-run only phases without a commit on its branch."""
    app = app_of(ctx)
    with app.index(catch_up=False) as db:
        report = resume_sleep(app.repo(), db, run_id, embedder=app.embedder(), clock=utc_now, after_phase=_progress)
    respond(as_json, "sleep.report", report.as_json(), lambda: _run_table(report))
    return 1 if report.failed_phases else 0


@sleep_group.command("status")
@json_option
@click.pass_context
def status_cmd(ctx: click.Context, as_json: bool) -> int:
    """The runs and the latest run's per-phase outcomes (always exits 0)."""
    app = app_of(ctx)
    with app.index(catch_up=False) as db:
        runs = all_runs(db)
        latest = runs[0] if runs else None
        phases = [p.as_json() for p in phase_rows(db, latest.run_id)] if latest else []
    data: dict[str, Any] = {
        "runs": [{"runId": r.run_id, "status": r.status, "baseSha": r.base_sha, "headSha": r.head_sha,
                  "startedAt": r.started_at, "endedAt": r.ended_at} for r in runs],
        "latest": None if latest is None else {"runId": latest.run_id, "status": latest.status, "phases": phases},
    }
    respond(as_json, "sleep.status", data, lambda: "no sleep run yet" if not runs else table(
        ["run", "status", "started", "head"], [[r.run_id, r.status, r.started_at, (r.head_sha or "")[:12]] for r in runs]))
    return 0


@sleep_group.command("review")
@click.argument("run_id", required=False)
@click.option("--diff", "with_diff", is_flag=True, help="Append the raw git diff.")
@json_option
@click.pass_context
def review_cmd(ctx: click.Context, run_id: str | None, with_diff: bool, as_json: bool) -> int:
    """Classify every file a run changed: meta-only, body-changed, archived, created, deleted (exits 0)."""
    app = app_of(ctx)
    with app.index(catch_up=False) as db:
        result = review_run(app.repo(), db, run_id)
        if with_diff:
            _, _, base, tip = resolve_run(app.repo(), db, result["runId"])
            result["diff"] = diff_text(app.repo(), base, tip)

    def human() -> str:
        lines = [f"run {result['runId']} ({result['status']}): {result['baseSha'][:12]}..{result['headSha'][:12]}",
                 "memories: " + ", ".join(f"{k} {v}" for k, v in result["summary"].items())
                 + f"; artifacts {result['artifacts']}"]
        lines.append(table(["class", "kind", "path", "from"], [[f["classification"], f["kind"], f["path"], f["fromPath"] or ""]
                                                             for f in result["files"]]))
        lines.append(table(["commit", "phase", "subject"], [[c["sha"][:12], c["phase"], c["subject"]] for c in result["commits"]]))
        if with_diff:
            lines.append(result["diff"])
        return "\n".join(lines)

    respond(as_json, "sleep.review", result, human)
    return 0


@sleep_group.command("merge")
@click.argument("run_id")
@click.option("--skip-gate", is_flag=True, help="Merge without the discrimination gate (a deliberate override).")
@json_option
@click.pass_context
def merge_cmd(ctx: click.Context, run_id: str, skip_gate: bool, as_json: bool) -> int:
    """Fast-forward main to the run after the discrimination gate; refusals exit 1."""
    from git_memhtml.eval.discriminate import gate as discrimination_gate

    app = app_of(ctx)
    if skip_gate:
        warn("--skip-gate: merging without the discrimination gate")

    def gate() -> object:
        with tempfile.TemporaryDirectory(prefix="memhtml-gate-") as folder:
            return discrimination_gate(workdir=Path(folder))

    with app.index(catch_up=False) as db:
        result = merge_run(app.repo(), db, run_id, gate=None if skip_gate else gate, embedder=app.embedder(),
                           clock=utc_now)
    data = result.as_json()
    respond(as_json, "sleep.merge", data, lambda: (
        f"merged {result.run_id}: main is now {str(result.head_sha)[:12]}" if result.merged
        else f"refused ({result.refusal}): {result.reason}"))
    return 0 if result.merged else 1


@sleep_group.command("abort")
@click.argument("run_id")
@json_option
@click.pass_context
def abort_cmd(ctx: click.Context, run_id: str, as_json: bool) -> int:
    """Drop a run: remove its worktree and branch. main never moved."""
    app = app_of(ctx)
    with app.index(catch_up=False) as db:
        result = abort_run(app.repo(), db, run_id, clock=utc_now)
    respond(as_json, "sleep.abort", result, lambda: kv(result))
    return 0


COMMANDS = [sleep_group]
