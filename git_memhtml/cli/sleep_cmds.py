"""``git memhtml sleep plan|run|resume|status|review|merge|rebase|abort|pr``."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from datetime import date as date_type
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from git_memhtml.cli.app import App, utc_now
from git_memhtml.cli.common import app_of, json_option, respond, writes
from git_memhtml.cli.model_binding import bind_model, max_llm_calls_option
from git_memhtml.cli.probe_view import probe_settings, run_probes, verdict_text
from git_memhtml.cut import clip, clip_join
from git_memhtml.errors import (
    DirtyTree,
    DiscriminationFailed,
    GitError,
    MemhtmlError,
    ProbesFailed,
    RunNotFound,
    UsageError,
)
from git_memhtml.output import emit, kv, log, table, terminal_text, warn
from git_memhtml.progress import Progress
from git_memhtml.sleep.engine.contract import framing_added, select_phases
from git_memhtml.sleep.presentation.model_usage import HEADERS as MODEL_HEADERS
from git_memhtml.sleep.presentation.model_usage import cells, review_model_lines
from git_memhtml.sleep.probes.verdict import Verdict

if TYPE_CHECKING:
    from git_memhtml.gitrepo import GitRepo
    from git_memhtml.index.db import IndexDB
    from git_memhtml.sleep.engine.env import PhaseReport
    from git_memhtml.sleep.engine.run import RunReport
    from git_memhtml.sleep.landing.merge import MergeReport
    from git_memhtml.sleep.landing.reconcile import Reconciled

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _is_date(text: str) -> bool:
    """``YYYY-MM-DD`` naming a real day (``2026-13-45`` and ``2026-02-30`` are not)."""
    try:
        return bool(_DATE.match(text)) and date_type.fromisoformat(text).isoformat() == text
    except ValueError:
        return False


@click.group("sleep")
def sleep_group() -> None:
    """Curate the memory on a sleep/<date> branch that a person reviews and merges."""


def _phase_bar(app: App, as_json: bool, total: int) -> tuple[Progress, Callable[[PhaseReport], None]]:
    """The run's progress (a bar of ``total`` phases, ``0``: unknown, on a terminal without ``--quiet``/``--json``)
    and the ``after_phase`` callback that advances it once per finished phase (docs/cli.md "Progress")."""
    progress = app.progress(as_json=as_json)
    progress.stage("sleep", total)

    def after_phase(_: PhaseReport) -> None:
        progress.advance()

    return progress, after_phase


def _reconcile(repo: GitRepo, db: IndexDB, *, quiet: bool = False) -> list[Reconciled]:
    """Recognise runs merged on a forge before anything reads run rows (docs/forge-ci.md); log what landed."""
    from git_memhtml.sleep.landing.reconcile import reconcile_landed_runs

    done = reconcile_landed_runs(repo, db, utc_now())
    for item in done:
        if item.error:
            warn(f"{item.run_id}: reached main but could not be recorded: {item.error}")
        elif not quiet:
            log(f"{item.run_id} landed on main ({item.how}); applied {item.marks_applied} of "
                f"{item.marks_pending} pending marks")
    return done


def _run_table(report: RunReport) -> str:
    rows = [
        [i + 1, p.phase, p.status, (p.commit_sha or "")[:12],
         clip(p.detail or " ".join(f"{k}={v}" for k, v in p.counts.items()), 90)]
        for i, p in enumerate(report.phases)
    ]
    head = (f"run {report.run_id}{' (dry run)' if report.dry_run else ''}: "
            f"base {report.base_sha[:12]} → head {report.head_sha[:12]}")
    tail = f"failed: {', '.join(report.failed_phases)}" if report.failed_phases else "all phases ok"
    hint = "" if report.dry_run else f"\nnext: git memhtml sleep review {report.run_id}"
    return head + "\n" + table(["#", "phase", "status", "commit", "detail / counts"], rows) + "\n" + tail + hint


@sleep_group.command("plan")
@json_option
@click.pass_context
def plan_cmd(ctx: click.Context, as_json: bool) -> int:
    """Would a run change anything? Reads index counts; runs no phase."""
    from git_memhtml.sleep.presentation.plan import plan

    app = app_of(ctx)
    with app.index(catch_up=False) as db:
        result = plan(app.repo(), db, at=utc_now()[:10] + "T00:00:00Z")

    def human() -> str:
        lines = [f"verdict: {result['verdict']}",
                 f"index fresh: {result['indexFresh']} (indexed {str(result['indexedCommit'])[:12]})"]
        if result["dirty"]:
            lines.append(f"checkout has {len(result['dirty'])} uncommitted path(s): {clip_join(result['dirty'], 5)}"
                         " — sleep runs on committed main only")
        lines += [f"  {k}: {v['count']} → {', '.join(v['feeds'])}" for k, v in result["signals"].items()]
        return "\n".join(lines)

    respond(as_json, "sleep.plan", result, human)
    return 0


@sleep_group.command("run")
@click.option("--date", help="Run date YYYY-MM-DD (default: today, UTC).")
@click.option("--phases", help="Comma-separated subset of phases (run in canonical order); preflight and report "
                               "always run too, so the run can be merged.")
@click.option("--dry-run", is_flag=True, help="Compute per-phase counts; make no branch and write nothing.")
@click.option("--deep", is_flag=True,
              help="The occasional budgeted cycle: relationship-mining also groups the band [0.72, 0.85) as "
                   "laterally_related edges, compress adds entity-keyed groups and repeats until quiet (at most "
                   "3 passes), and placement-triage files inbox memories into topic folders. With --dry-run: "
                   "the mining and grouping counts, no model call.")
@max_llm_calls_option
@json_option
@click.pass_context
@writes(on_head=False)
def run_cmd(ctx: click.Context, date: str | None, phases: str | None, dry_run: bool, deep: bool,
            max_llm_calls: int | None, as_json: bool) -> int:
    """Run every sleep phase on sleep/<date>[-N]; your checkout is never touched."""
    from git_memhtml.sleep.engine.run import run_sleep

    app = app_of(ctx)
    if date is not None and not _is_date(date):
        raise UsageError(f"--date {date!r} is not a calendar date YYYY-MM-DD", hint="e.g. --date 2026-11-30")
    try:
        selected = select_phases(phases)
    except ValueError as exc:
        raise UsageError(str(exc), hint="git memhtml sleep run --help") from exc
    added = framing_added(phases)
    if added:
        log(f"--phases: also running {' and '.join(added)} (a run reads a fresh index and ends with its report, "
            "or sleep merge could never take it)")
    model = bind_model(app, max_llm_calls)
    with app.index(catch_up=True) as db:  # a fresh, clean checkout index seeds the run's own index
        if not dry_run:
            _reconcile(app.repo(), db)
        progress, after_phase = _phase_bar(app, as_json, len(selected))
        try:
            report = run_sleep(app.repo(), db, date=date or utc_now()[:10], phases=selected, dry_run=dry_run,
                               deep=deep, embedder=app.embedder(), clock=utc_now, after_phase=after_phase,
                               model=model)
        except KeyboardInterrupt:
            _resume_hint(db)
            raise
        finally:
            progress.close()
    for run_id in report.extra.get("unfinished", []):
        warn(f"{run_id} is unfinished; finish it with `git memhtml sleep resume {run_id}` "
             f"or drop it with `git memhtml sleep abort {run_id}`")
    respond(as_json, "sleep.report", report.as_json(), lambda: _run_table(report))
    return 1 if report.failed_phases else 0


def _resume_hint(db: IndexDB) -> None:
    """After Ctrl-C: name the interrupted run and how to finish it."""
    from git_memhtml.index.runs import unfinished_runs

    unfinished = unfinished_runs(db)
    if unfinished:
        log(f"hint: git memhtml sleep resume {unfinished[0].run_id}")


@sleep_group.command("resume")
@click.argument("run_id")
@click.option("--deep", is_flag=True,
              help="Resume as a --deep run. Not needed once the run made a phase commit: its Memhtml-Deep "
                   "trailer says so.")
@max_llm_calls_option
@json_option
@click.pass_context
@writes(on_head=False)
def resume_cmd(ctx: click.Context, run_id: str, deep: bool, max_llm_calls: int | None, as_json: bool) -> int:
    """Finish an interrupted run: re-run only phases without a commit on its branch."""
    from git_memhtml.sleep.engine.run import resume_sleep

    app = app_of(ctx)
    model = bind_model(app, max_llm_calls)
    with app.index(catch_up=False) as db:
        progress, after_phase = _phase_bar(app, as_json, 0)  # how many phases are left shows as the run goes
        try:
            report = resume_sleep(app.repo(), db, run_id, deep=deep, embedder=app.embedder(), clock=utc_now,
                                  after_phase=after_phase, model=model)
        except KeyboardInterrupt:
            _resume_hint(db)
            raise
        finally:
            progress.close()
    for path in report.extra.get("recoveredLocks", []):
        warn(f"removed the stale lock {path} (no live process owned {run_id})")
    respond(as_json, "sleep.report", report.as_json(), lambda: _run_table(report))
    return 1 if report.failed_phases else 0


@sleep_group.command("status")
@json_option
@click.pass_context
def status_cmd(ctx: click.Context, as_json: bool) -> int:
    """The runs, how each landed on main, and the latest run's per-phase outcomes (always exits 0)."""
    from git_memhtml.index.landings import landing_rows
    from git_memhtml.index.runs import all_runs
    from git_memhtml.sleep.engine.lock import live_holder
    from git_memhtml.sleep.engine.run import settle_finished
    from git_memhtml.sleep.engine.runs import mark_interrupted, phase_rows

    app = app_of(ctx)
    with app.index(catch_up=False) as db:
        holder = live_holder(app.repo())
        live = () if holder is None else (holder.run_id,)
        mark_interrupted(db, now=utc_now(), live=live)
        settle_finished(app.repo(), db, now=utc_now(), live=live)  # killed in its teardown: finished
        reconciled = _reconcile(app.repo(), db, quiet=as_json)
        landed = landing_rows(db)
        runs = all_runs(db)
        latest = runs[0] if runs else None
        phases = [p.as_json() for p in phase_rows(db, latest.run_id)] if latest else []
    data: dict[str, Any] = {
        "runs": [{"runId": r.run_id, "status": r.status, "baseSha": r.base_sha, "headSha": r.head_sha,
                  "startedAt": r.started_at, "endedAt": r.ended_at,
                  "landed": landed[r.run_id].as_json() if r.run_id in landed else None} for r in runs],
        "latest": None if latest is None else {"runId": latest.run_id, "status": latest.status, "phases": phases},
        "reconciled": [item.as_json() for item in reconciled],
    }
    respond(as_json, "sleep.status", data, lambda: "no sleep run yet" if not runs else table(
        ["run", "status", "landed", "started", "head"],
        [[r.run_id, r.status,
          _landed_text(landed[r.run_id].how, landed[r.run_id].commit_sha) if r.run_id in landed else "",
          r.started_at, (r.head_sha or "")[:12]] for r in runs]))
    return 0


_LANDED_WORDS = {"sleep-merge": "by sleep merge", "fast-forward": "fast-forward", "merge-commit": "merge commit",
                 "squash": "squash"}


def _landed_text(how: str, sha: str | None) -> str:
    return f"{_LANDED_WORDS.get(how, how)} {str(sha or '')[:12]}".strip()


@sleep_group.command("review")
@click.argument("run_id", required=False)
@click.option("--diff", "with_diff", is_flag=True, help="Append the raw git diff.")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown"]), default="text", show_default=True,
              help="markdown: a pull-request description (at most 60,000 bytes, memory text escaped).")
@click.option("--no-probes", is_flag=True, help="Skip the run gate's probes on your memory (docs/gate.md §9).")
@json_option
@click.pass_context
def review_cmd(ctx: click.Context, run_id: str | None, with_diff: bool, fmt: str, no_probes: bool,
               as_json: bool) -> int:
    """Classify every file a run changed (meta-only, body-changed, archived, created, deleted) and show the run
    gate's probes on your memory (exits 0)."""
    from git_memhtml.sleep.presentation.review import diff_text, review_run
    from git_memhtml.sleep.presentation.review_markdown import render_markdown

    app = app_of(ctx)
    if fmt == "markdown":
        if with_diff:
            raise UsageError("--diff cannot be combined with --format markdown", hint="drop --diff")
        with app.index(catch_up=False) as db:
            review = review_run(app.repo(), db, run_id)
            probed = None if no_probes else _review_probes(app, db, review)
            review["probes"] = None if probed is None else probed["verdict"]
            body = render_markdown(app.repo(), review)
        respond(as_json, "sleep.review.markdown", body.as_json(), lambda: body.text.rstrip("\n"))
        return 0
    with app.index(catch_up=False) as db:
        result = review_run(app.repo(), db, run_id)
        probes = None if no_probes else _review_probes(app, db, result)
        result["probes"] = None if probes is None else probes["verdict"]
        if with_diff:
            result["diff"] = diff_text(app.repo(), result["baseSha"], result["headSha"])

    def human() -> str:
        lines = [f"run {result['runId']} ({result['status']}): {result['baseSha'][:12]}..{result['headSha'][:12]}",
                 "memories: " + ", ".join(f"{k} {v}" for k, v in result["summary"].items())
                 + f"; artifacts {result['artifacts']}"]
        if probes is not None:  # first, before the file list: the one figure a reviewer needs
            lines.append(verdict_text(probes["verdict"], probes["timing"]))
        # paths and subjects are whatever the run's commits say: shown with control characters escaped
        lines.append(table(["class", "kind", "path", "from"],
                           [[f["classification"], f["kind"], terminal_text(f["path"]),
                             terminal_text(f["fromPath"] or "")] for f in result["files"]]))
        lines.append(table(["commit", "phase", "subject"],
                           [[c["sha"][:12], terminal_text(str(c["phase"] or "")), terminal_text(c["subject"])]
                            for c in result["commits"]]))
        used = review_model_lines(result)
        if used:  # only phases that had a model bound; none on a night without one
            lines.append(table(list(MODEL_HEADERS), [[terminal_text(c) for c in cells(line)] for line in used]))
        if with_diff:
            lines.append(result["diff"])
        return "\n".join(lines)

    respond(as_json, "sleep.review", result, human)
    return 0


def _review_probes(app: App, db: IndexDB, review: dict[str, Any]) -> dict[str, Any] | None:
    """The run gate's verdict of a reviewed run, over the commits the review read; ``None`` (with a warning naming
    why and ``probesError`` set on ``review``) when it cannot be computed: a review still shows what changed."""
    try:
        report = run_probes(app, db, str(review["runId"]), probe_settings(app), base_sha=str(review["baseSha"]),
                            tip_sha=str(review["headSha"]))
    except MemhtmlError as exc:
        review["probesError"] = exc.message
        warn(f"the run gate's probes could not run: {exc.message}" + (f" (hint: {exc.hint})" if exc.hint else ""))
        return None
    return report.as_json()


_ALLOW_FAILED = click.option("--allow-failed", is_flag=True,
                             help="Accept a run with failed phases (they are printed); refused without it.")


@sleep_group.command("merge")
@click.argument("run_id")
@click.option("--skip-gate", is_flag=True,
              help="Merge without the discrimination gate and the run gate (a deliberate override).")
@_ALLOW_FAILED
@json_option
@click.pass_context
def merge_cmd(ctx: click.Context, run_id: str, skip_gate: bool, allow_failed: bool, as_json: bool) -> int:
    """Fast-forward main to a finished run after the discrimination gate and the run gate; refusals exit 1."""
    from git_memhtml.eval.discriminate import TempFolderGate, gate_figures
    from git_memhtml.sleep.landing.merge import merge_run

    app = app_of(ctx)
    if skip_gate:
        warn("--skip-gate: merging without the discrimination gate and the run gate")
    gate = TempFolderGate()
    settings = probe_settings(app)
    probe_timing: dict[str, Any] = {}
    with app.index(catch_up=False) as db:
        _reconcile(app.repo(), db)

        def run_gate(name: str, base: str, tip: str) -> Verdict:
            report = run_probes(app, db, name, settings, base_sha=base, tip_sha=tip)
            probe_timing.update(report.timing)
            return report.verdict

        result = merge_run(app.repo(), db, run_id, gate=None if skip_gate else gate, embedder=app.embedder(),
                           clock=utc_now, allow_failed=allow_failed, run_gate=None if skip_gate else run_gate)
    for phase in result.failed_phases:
        warn(f"{result.run_id}: phase {phase} failed" + (" (merged anyway: --allow-failed)" if result.merged else ""))
    data = result.as_json()
    data["gate"] = None if gate.report is None else gate.report.to_dict()["summary"]
    if gate.report is not None and not as_json:
        emit(gate_figures(gate.report))
    if result.probes is not None and not as_json:
        emit(verdict_text(result.probes.as_json(), probe_timing))
    if not result.merged:
        raise _refusal_error(result, data)
    if result.reason and not as_json:  # merged, but the ledger could not be applied (the next reconcile retries)
        warn(f"{result.run_id}: {result.reason}")
    marks = (f"; applied {result.marks_applied} of {result.marks_pending} pending marks"
             if result.marks_pending else "")
    respond(as_json, "sleep.merge", data, lambda: (
        f"merged {result.run_id}: {result.trunk} is now {str(result.head_sha)[:12]}{marks}"))
    return 0


_REFUSAL_ERRORS: dict[str, type[MemhtmlError]] = {
    "no-run": RunNotFound, "not-a-run": RunNotFound, "gate-failed": DiscriminationFailed, "dirty-checkout": DirtyTree,
    "probes-failed": ProbesFailed,
    "main-advanced": GitError,
}
"""The error class (so the ``--json`` code) of each ``sleep merge`` refusal (sleep/landing/merge.py); others:
GitError."""


def _refusal_error(result: MergeReport, data: dict[str, Any]) -> MemhtmlError:
    """The refusal as the one error the translator prints (exit 1; ``--json``: the error envelope carrying
    ``refusal``, ``runId``, ``merged`` false and the gate's summary)."""
    error = _REFUSAL_ERRORS.get(str(result.refusal), GitError)(
        f"sleep merge {result.run_id}: refused ({result.refusal}): {result.reason}", hint=result.hint)
    error.details = {"refusal": result.refusal, "runId": result.run_id, "merged": False, "gate": data["gate"],
                     "probes": data["probes"], "failedPhases": list(result.failed_phases)}
    return error


@sleep_group.command("rebase")
@click.argument("run_id")
@click.option("--skip-gate", is_flag=True, help="Rebase without re-running the discrimination gate.")
@_ALLOW_FAILED
@json_option
@click.pass_context
def rebase_cmd(ctx: click.Context, run_id: str, skip_gate: bool, allow_failed: bool, as_json: bool) -> int:
    """Replay a finished run's phase commits onto the current main, so sleep merge can fast-forward."""
    from git_memhtml.eval.discriminate import TempFolderGate
    from git_memhtml.sleep.landing.rebase import rebase_run

    app = app_of(ctx)
    if skip_gate:
        warn("--skip-gate: rebasing without the discrimination gate")
    with app.index(catch_up=True) as db:  # the index rows speed up re-rendering listings
        _reconcile(app.repo(), db)
        result = rebase_run(app.repo(), db, run_id, gate=None if skip_gate else TempFolderGate(), clock=utc_now,
                            allow_failed=allow_failed)

    def human() -> str:
        if not result.rebased:
            return f"nothing to do: {result.reason}"
        return (f"rebased {result.run_id} onto {result.trunk} {result.new_base[:12]}: {len(result.commits)} "
                f"commit(s) replayed, head {result.new_head[:12]}; {len(result.regenerated)} artifact(s) "
                f"regenerated" + (f"; {result.marks_pending} pending marks carried, applied when it merges"
                                  if result.marks_pending else "")
                + f"\nnext: git memhtml sleep merge {result.run_id}")

    respond(as_json, "sleep.rebase", result.as_json(), human)
    return 0


@sleep_group.command("abort")
@click.argument("run_id")
@json_option
@click.pass_context
def abort_cmd(ctx: click.Context, run_id: str, as_json: bool) -> int:
    """Drop a run: remove its worktree and branch. main never moved."""
    from git_memhtml.sleep.engine.run import abort_run

    app = app_of(ctx)
    with app.index(catch_up=False) as db:
        result = abort_run(app.repo(), db, run_id, clock=utc_now)
    for path in result["recoveredLocks"]:
        warn(f"removed the stale lock {path} (no live process owned {run_id})")
    respond(as_json, "sleep.abort", result, lambda: kv({k: v for k, v in result.items() if k != "recoveredLocks"}))
    return 0


@sleep_group.command("pr")
@click.argument("run_id")
@click.option("--remote", default="origin", show_default=True, help="The remote to push the run's branch to.")
@click.option("--base", default=None, help="The branch the pull request merges into (default: the trunk).")
@_ALLOW_FAILED
@json_option
@click.pass_context
def pr_cmd(ctx: click.Context, run_id: str, remote: str, base: str | None, allow_failed: bool, as_json: bool) -> int:
    """Push a run's branch and open or update its pull request (gh), else print the compare address."""
    from git_memhtml.sleep.landing.forge import open_pull_request

    app = app_of(ctx)
    gh_found = shutil.which("gh")
    with app.index(catch_up=False) as db:
        report = open_pull_request(app.repo(), db, run_id, remote=remote, base=base,
                                   gh=Path(gh_found) if gh_found else None, allow_failed=allow_failed)

    def human() -> str:
        lines = [f"pushed {report.branch} ({report.pushed_sha[:12]}) to {report.remote}",
                 f"body: {report.body_file}" + (" (truncated)" if report.body.truncated else "")]
        if report.action in ("created", "updated"):
            lines.append(f"pull request {report.action}: {report.url or '(gh printed no address)'}")
        elif report.url:
            lines.append(f"open the pull request: {report.url}")
        if report.note:
            lines.append(report.note)
        return "\n".join(lines)

    respond(as_json, "sleep.pr", report.as_json(), human)
    return 0


