"""``sleep run`` and ``sleep resume``: execute the phases on a branch, in a linked work tree (docs/design.md §3.3).

The branch ``sleep/<date>[-N]`` is cut from the trunk (``main``) before any phase runs and worked in a linked
worktree under the git dir, so the user's checkout is never touched. Every phase is isolated: a failure is a
value, its writes are undone, later phases still run, except the hard prerequisites (docs/phases.md §0.2). Resume reads
the ``Memhtml-Phase`` trailers of ``base..branch`` (docs/sleep.md §2.5).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from git_memhtml.cut import clip
from git_memhtml.document.editors import get_metas
from git_memhtml.embed.base import Embedder
from git_memhtml.errors import GitError, MemhtmlError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.index.indexer import update
from git_memhtml.index.runs import RunRow, unfinished_runs
from git_memhtml.index.watermark import index_state, overlay_rows
from git_memhtml.llm.contract import ModelClient
from git_memhtml.llm.defaults import DEFAULT_MAX_PROMPT_TOKENS
from git_memhtml.sleep.engine.commit import TRAILER_COUNTS, TRAILER_PHASE, commit_phase, run_is_deep
from git_memhtml.sleep.engine.contract import SLEEP_PHASES, PhaseSpec, non_committing_phases, phase_specs
from git_memhtml.sleep.engine.env import LlmBudget, PhaseEnv, PhaseReport, RunServices, WireCounts
from git_memhtml.sleep.engine.lock import relabel, remove_locks, sleep_lock, stale_git_locks
from git_memhtml.sleep.engine.runplace import (
    drop_run_index,
    keep_run_index,
    next_run_id,
    worktree_folder,
    worktree_name,
)
from git_memhtml.sleep.engine.runref import report_at_tip, resolve_sleep_run
from git_memhtml.sleep.engine.runs import (
    mark_interrupted,
    phase_rows,
    reap_stale,
    record_phase,
    set_status,
    upsert_run,
)
from git_memhtml.sleep.engine.trunk import trunk_sha
from git_memhtml.tree.layout import is_valid_memory_path, placement_for

Clock = Callable[[], str]
AfterPhase = Callable[[PhaseReport], object]
"""Called after each phase's report is recorded (progress output; fault injection in tests)."""
ALREADY_DONE = "already completed on this branch"
BEFORE_LAST = "not run: the interrupted run had passed it (its next commit would come out of order)"
"""Detail of a phase a resume does not run because the branch already holds a commit of a later phase: the
interrupted run either ran it with nothing to commit or was not asked to (``--phases``), and a commit of it now
would break the canonical order the landing rail checks (docs/sleep.md §2.5)."""
REPORT_PHASE = "report"
RESWEEP_PHASES: tuple[str, ...] = ("integrity", "state-export", REPORT_PHASE)
"""Phases a resume re-runs even when the branch has their commits, once the run has a report: the listings, the
sidecar and the report page then describe the re-run phases too, and the run still ends in a report commit (the
landing rail, :mod:`sleep.landing.rail`, reads a resume's commits as a second canonical pass)."""


@dataclass(frozen=True)
class RunReport:
    """The ``sleep.report`` envelope (docs/sleep.md §2.4): per-phase outcomes, commits, reaped rows."""

    run_id: str
    branch: str
    base_sha: str
    head_sha: str
    dry_run: bool
    phases: tuple[PhaseReport, ...]
    commits: tuple[str, ...] = ()
    reaped: tuple[dict[str, str], ...] = ()
    resumed: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def failed_phases(self) -> list[str]:
        """Names of the phases that failed."""
        return [p.phase for p in self.phases if p.status == "failed"]

    @property
    def llm_calls(self) -> int:
        """Model calls spent by the run."""
        return sum(p.llm_calls for p in self.phases)

    def as_json(self) -> dict[str, Any]:
        """Return the JSON data of the envelope."""
        return {
            "runId": self.run_id,
            "branch": self.branch,
            "baseSha": self.base_sha,
            "headSha": self.head_sha,
            "dryRun": self.dry_run,
            "resumed": self.resumed,
            "llmCalls": self.llm_calls,
            "phases": [p.as_json() for p in self.phases],
            "failedPhases": self.failed_phases,
            "commits": list(self.commits),
            "reaped": list(self.reaped),
            "recoveredLocks": list(self.extra.get("recoveredLocks", [])),
        }


Reindex = Callable[[], object]
"""Brings the run's index up to its work tree (the runner calls it after each phase commit)."""


def _execute(
    env: PhaseEnv,
    reindex: Reindex,
    selected: Sequence[str],
    done: dict[str, PhaseReport],
    clock: Clock,
    after_phase: AfterPhase | None = None,
) -> list[PhaseReport]:
    """Run ``selected`` phases in canonical order; return every phase's report (``done`` ones as given).

    Each phase gets ``env`` with ``results`` set to the reports before it (a fresh frozen value per phase).
    """
    specs = phase_specs()
    failed: set[str] = set()
    results: list[PhaseReport] = []
    for phase in SLEEP_PHASES:
        if phase not in selected:
            continue
        if phase in done:
            results.append(done[phase])
            continue
        spec = specs[phase]
        blocked = [p for p in spec.prerequisites if p in failed]
        started = clock()
        if blocked:
            report = PhaseReport(phase, "skipped", {}, detail=f"hard prerequisite {blocked[0]} failed")
        else:
            report = _run_phase(replace(env, results=tuple(results)), spec, reindex)
            if report.status == "failed":
                failed.add(phase)
        results.append(report)
        if not env.dry_run:
            record_phase(env.db, env.run_id, report, started_at=started, ended_at=clock())
        if after_phase is not None:
            after_phase(report)
    return results


def _new_commits(repo: GitRepo, start: str, head: str) -> tuple[str, ...]:
    """The commits the phases run now made: ``start..head`` oldest first, the step commits of a
    :data:`~git_memhtml.sleep.engine.contract.MULTI_COMMIT_PHASES` phase included (``start`` is the run's base, or
    the tip a resume began on)."""
    return tuple(repo.commits_between(start, head)) if start != head else ()


def _run_phase(env: PhaseEnv, spec: PhaseSpec, reindex: Reindex) -> PhaseReport:
    """Run one phase body; commit what it staged (unless its spec says it never commits); report it.

    The counts are serialised here, once (:meth:`PhaseCounts.wire`), for the trailer and the report. A body that
    raises, or returns counts of another type than its spec declares, is a ``failed`` phase with its writes undone.
    """
    phase = spec.name
    start = env.repo.head_sha()
    try:
        outcome = spec.body(env)
        if not isinstance(outcome.counts, spec.counts):
            raise TypeError(f"{phase} returned {type(outcome.counts).__name__}, not {spec.counts.__name__}")
        counts = outcome.counts.wire()
        if outcome.model is not None:
            counts = {**counts, **outcome.model.wire()}
        sha = None
        if not env.dry_run and spec.commits:
            sha = commit_phase(
                env.repo,
                run_id=env.run_id,
                phase=phase,
                subject=outcome.subject or phase,
                body=outcome.body,
                counts=counts,
                deep=env.deep,
            )
            if sha:
                reindex()
        return PhaseReport(phase, "ok", counts, sha, outcome.llm_calls, outcome.detail)
    except Exception as exc:
        _undo(env.repo, start)
        message = exc.message if isinstance(exc, MemhtmlError) else str(exc)
        return PhaseReport(phase, "failed", {}, None, 0, clip(f"{type(exc).__name__}: {message}", 500))


def _undo(repo: GitRepo, start: str | None) -> None:
    """Put every path a failed phase touched back as HEAD has it (the post-0.4 failed-phase cleanup), and drop the
    commits it made itself: a phase of :data:`~git_memhtml.sleep.engine.contract.MULTI_COMMIT_PHASES` commits as it
    goes (``commit.PhaseSteps``), so a failure puts the branch back on ``start``, the commit the phase began on."""
    try:
        repo.restore_paths([e.path for e in repo.dirty()])
    except (MemhtmlError, OSError):
        repo.unstage_all()
    if start is not None and repo.head_sha() != start:
        repo.run_git(["reset", "-q", "--hard", start])


def _seed_index(source: IndexDB, tree: GitRepo, base_sha: str, embedder: Embedder | None) -> None:
    """Start the run's index from a copy of the checkout's when that one describes exactly the base commit.

    Only a clean index qualifies: its watermark is the base, it holds no uncommitted work-tree rows (your dirty
    edits must never reach a run), and its vectors are in the run's space. Anything else, or any failure, leaves
    preflight to index the worktree from nothing, which is always correct, only slower.
    """
    target = tree.git_dir / "memhtml" / "index.db"
    if target.exists():
        return
    try:
        state = index_state(source)
        overlay = overlay_rows(source)
    except MemhtmlError:
        return
    space = embedder.space if embedder is not None else None
    if state is None or state.head_sha != base_sha or overlay:
        return
    if state.embed_model is not None and state.embed_model != space:
        return
    try:
        source.copy_index_to(target)
    except MemhtmlError:
        if target.exists():
            target.unlink()


@dataclass(frozen=True)
class ModelBinding:
    """The model a run may call and its call budget (docs/models.md §2).

    Attributes:
        client: the bound client, or ``None`` (``memhtml.llm = off``: the model phases say ``no model bound``).
        max_calls: ``--max-llm-calls N``: calls the whole run may make, shared by every phase; ``None`` is no limit.
        max_prompt: ``memhtml.llmmaxprompt``: tokens one request may send (docs/models.md §11).
    """

    client: ModelClient | None = None
    max_calls: int | None = None
    max_prompt: int = DEFAULT_MAX_PROMPT_TOKENS

    def services(self) -> RunServices:
        """Fresh run services holding this client, budget and prompt cap."""
        return RunServices(model=self.client, llm_budget=LlmBudget(remaining=self.max_calls),
                           max_prompt=self.max_prompt)


NO_MODEL = ModelBinding()
"""No model, no budget: the default of every run."""


def _open_env(
    main: GitRepo,
    tree: GitRepo,
    *,
    run_id: str,
    base_sha: str,
    date: str,
    dry_run: bool,
    deep: bool,
    embedder: Embedder | None,
    seed: IndexDB | None = None,
    model: ModelBinding = NO_MODEL,
) -> tuple[PhaseEnv, Reindex]:
    """The first phase's input (fresh :class:`RunServices` holding ``model``'s client and budget) and the reindex
    step."""
    if seed is not None:
        _seed_index(seed, tree, base_sha, embedder)
    db = IndexDB.for_repo(tree)
    at = f"{date}T00:00:00Z"
    env = PhaseEnv(
        repo=tree,
        db=db,
        embedder=embedder,
        run_id=run_id,
        base_sha=base_sha,
        date=date,
        at=at,
        dry_run=dry_run,
        deep=deep,
        services=model.services(),
    )
    return env, lambda: update(tree, db, embedder, now=at)


def settle_finished(main: GitRepo, db: IndexDB, *, now: str, live: Collection[str]) -> list[str]:
    """Mark ``review`` (or ``failed``) every ``running`` or ``interrupted`` row that no live process holds and whose
    branch ends in a report commit (:func:`runref.report_at_tip`): a pass killed during its teardown is finished
    (docs/sleep.md §2.5). Return the run ids marked. One ``git log -1`` per unfinished row; rows only, the
    branch is never touched."""
    settled = []
    for run in unfinished_runs(db):
        tip = main.branch_sha(run.run_id)
        if run.run_id in live or tip is None or tip == run.base_sha:
            continue
        failed = report_at_tip(main, tip)
        if failed is not None:
            set_status(db, run.run_id, "failed" if failed else "review", head_sha=tip, now=now)
            settled.append(run.run_id)
    return settled


def run_sleep(
    main: GitRepo,
    db: IndexDB,
    *,
    date: str,
    phases: Sequence[str] = SLEEP_PHASES,
    dry_run: bool = False,
    deep: bool = False,
    embedder: Embedder | None,
    clock: Clock,
    after_phase: AfterPhase | None = None,
    model: ModelBinding = NO_MODEL,
) -> RunReport:
    """Cut ``sleep/<date>[-N]`` from ``main``, run ``phases`` in a linked worktree, and report.

    Args:
        main: the user's repository (never touched: its checkout, index and HEAD stay as they are).
        db: the user's index connection (for the shared state plane: run rows).
        date: the run date ``YYYY-MM-DD``; phases stamp midnight UTC of it.
        dry_run: no branch; phases run in a detached scratch worktree and write nothing.
        clock: wall-clock instants for row timestamps only.
        after_phase: called with each phase's report as soon as it is recorded.
        model: the model the model phases may call, and the run's call budget (default: none).

    Raises:
        RunRefused: no trunk branch, every run id of the date is taken, or another sleep run holds the sleep lock
            (:mod:`sleep.lock`: one run at a time).
    """
    phase_specs()  # the registry is total before anything is cut
    with sleep_lock(main, next_run_id(main, date, db), now=clock()) as holder:
        base = trunk_sha(main)
        mark_interrupted(db, now=clock(), live=())  # we hold the lock: no other run can be executing
        settle_finished(main, db, now=clock(), live=())  # a run killed in its teardown is not unfinished
        reaped = reap_stale(db, branch_exists=lambda b: main.branch_sha(b) is not None, now=clock())
        unfinished = [r.run_id for r in unfinished_runs(db)]
        run_id = next_run_id(main, date, db)
        if run_id != holder.run_id:
            relabel(main, holder, run_id)
        return _run_locked(main, db, run_id=run_id, base=base, date=date, phases=phases, dry_run=dry_run,
                           deep=deep, embedder=embedder, clock=clock, after_phase=after_phase, reaped=reaped,
                           unfinished=unfinished, model=model)


def _run_locked(
    main: GitRepo, db: IndexDB, *, run_id: str, base: str, date: str, phases: Sequence[str], dry_run: bool,
    deep: bool, embedder: Embedder | None, clock: Clock, after_phase: AfterPhase | None,
    reaped: list[dict[str, str]], unfinished: list[str], model: ModelBinding,
) -> RunReport:
    name = worktree_name(run_id) if not dry_run else f"dry-{worktree_name(run_id)}"
    folder = worktree_folder(main, run_id).with_name(name)
    main.remove_worktree(name)  # what a killed run left: its registered worktree, and any aged trash
    if folder.exists():  # a folder no worktree is registered for (killed between the prune and the delete)
        main.discard_folder(folder)
    if dry_run:
        tree = main.add_detached_worktree(name, folder, base)
    else:  # the row first: a kill at any later point leaves a row, so the run is interrupted, not an orphan
        upsert_run(db, RunRow(run_id, run_id, base, base, "running", False, clock(), None))
        main.create_branch(run_id, base)
        tree = main.add_worktree(name, folder, run_id)
    env, reindex = _open_env(main, tree, run_id=run_id, base_sha=base, date=date, dry_run=dry_run, deep=deep,
                             embedder=embedder, seed=db, model=model)
    try:
        try:
            results = _execute(env, reindex, phases, {}, clock, after_phase)
        except BaseException:
            if not dry_run:
                set_status(db, run_id, "interrupted", head_sha=tree.head_sha(), now=clock())
            raise
        head = tree.head_sha() or base
        report = RunReport(
            run_id, run_id, base, head, dry_run, tuple(results), () if dry_run else _new_commits(main, base, head),
            tuple(reaped),
            extra={"unfinished": unfinished},
        )
        if not dry_run:  # the record is final before the teardown: a kill from here on leaves only cleanup
            set_status(db, run_id, "failed" if report.failed_phases else "review", head_sha=head, now=clock())
            keep_run_index(env.db, main, run_id)
    finally:
        env.db.close()
        main.remove_worktree(name)
    return report


def completed_phases(main: GitRepo, base: str, tip: str) -> dict[str, tuple[str, WireCounts]]:
    """Return ``{phase: (commit sha, counts)}`` for every ``Memhtml-Phase`` trailer on ``base..tip``."""
    phases = main.log_trailers(base, tip, TRAILER_PHASE)
    counts = dict(main.log_trailers(base, tip, TRAILER_COUNTS))
    done: dict[str, tuple[str, WireCounts]] = {}
    for sha, values in phases:
        for phase in values:
            if phase in SLEEP_PHASES:
                raw = counts.get(sha, [])
                try:
                    parsed = json.loads(raw[0]) if raw else {}
                except (json.JSONDecodeError, RecursionError):  # a typed trailer may nest past the decoder
                    parsed = {}
                done[phase] = (sha, parsed if isinstance(parsed, dict) else {})
    return done


TASKS_DIR = placement_for("task")
"""Where a sleep run adds task files: every one it adds is a detected task (docs/tasks.md §7)."""


def tasks_added(repo: GitRepo, base: str, tip: str) -> dict[str, int]:
    """Task files ``base..tip`` adds under :data:`TASKS_DIR`, per detector (a file's tags are ``detected`` and its
    detector; ``""`` for a file without the second tag): the detected tasks the run minted before it was interrupted. A
    resume counts them into its budget (:meth:`~git_memhtml.sleep.engine.env.DetectionBudget.spend`), so the night's
    caps (:data:`~git_memhtml.sleep.engine.contract.DETECTED_TASK_CAP` a class, stated in the task-detection prompt, and
    a review detector's :data:`~git_memhtml.sleep.engine.contract.REVIEW_SHARE`) hold for the run, not for each pass of
    it (our decision, docs/tasks.md §7)."""
    added: dict[str, int] = {}
    if base == tip:
        return added
    for change in repo.tree_changes(base, tip):
        if change.old_sha is None and change.new_sha is not None and change.path.startswith(TASKS_DIR + "/") \
                and is_valid_memory_path(change.path):  # not the folder's listing
            tags = get_metas(repo.read_blob(change.new_sha).decode("utf-8", "replace"), "tag")
            detector = tags[1] if len(tags) > 1 else ""
            added[detector] = added.get(detector, 0) + 1
    return added


def resume_sleep(
    main: GitRepo,
    db: IndexDB,
    run_id: str,
    *,
    deep: bool = False,
    embedder: Embedder | None,
    clock: Clock,
    after_phase: AfterPhase | None = None,
    model: ModelBinding = NO_MODEL,
) -> RunReport:
    """Finish an interrupted run: re-run only phases without a ``Memhtml-Phase`` commit on its branch (and, once the
    run has a report commit, :data:`RESWEEP_PHASES`).

    Completed phases are reported ``skipped`` with detail ``already completed on this branch``; the report
    accounts for all seventeen phases. Reaps nothing (docs/sleep.md §2.4).

    Raises:
        RunNotFound: no such run (``no-run``).
        RunVerbRefused: not a run, running, or merged (:func:`sleep.runref.resolve_sleep_run`).
        RunRefused: another sleep run holds the sleep lock.
    """
    phase_specs()
    resolve_sleep_run(main, db, run_id, "resume")
    with sleep_lock(main, run_id, now=clock()):
        run = resolve_sleep_run(main, db, run_id, "resume")  # again under the lock: nobody started it meanwhile
        return _resume_locked(main, db, run_id, run.row, run.base_sha, run.tip_sha, deep=deep, embedder=embedder,
                              clock=clock, after_phase=after_phase, model=model)


def _resume_locked(
    main: GitRepo, db: IndexDB, run_id: str, row: RunRow | None, base: str, tip: str, *, deep: bool,
    embedder: Embedder | None, clock: Clock, after_phase: AfterPhase | None, model: ModelBinding,
) -> RunReport:
    recovered = remove_locks(stale_git_locks(main, run_id, worktree_name(run_id)))
    if tip != base and report_at_tip(main, tip) == 0:
        return _finish_teardown(main, db, run_id, base, tip, recovered=recovered, clock=clock)
    date = run_id.split("/", 1)[1][:10]
    name = worktree_name(run_id)
    upsert_run(db, RunRow(run_id, run_id, base, tip, "running", False, row.started_at if row else clock(), None))
    set_status(db, run_id, "running", head_sha=tip, now=clock())  # the row before the worktree, as in a run
    main.remove_worktree(name)
    tree = main.add_worktree(name, worktree_folder(main, run_id), run_id)
    previous = {p.phase: p for p in phase_rows(db, run_id)}
    done = {  # the calls a done phase made stay on its line (they are not in its trailer; the row has them)
        phase: PhaseReport(
            phase, "skipped", previous[phase].counts if phase in previous else counts, sha,
            previous[phase].llm_calls if phase in previous else 0, detail=ALREADY_DONE,
        )
        for phase, (sha, counts) in completed_phases(main, base, tip).items()
    }
    if REPORT_PHASE in done:  # a re-run phase may commit after the report: the sweeps and the report run again
        for phase in RESWEEP_PHASES:
            done.pop(phase, None)
    elif done:  # never commit behind the last phase the branch holds: the rail would refuse the run at merge
        last = max(SLEEP_PHASES.index(phase) for phase in done)
        quiet = non_committing_phases()  # they never commit (their rows are the run's index): they run again
        for phase in SLEEP_PHASES[:last]:
            if phase not in done and phase not in quiet:
                done[phase] = PhaseReport(phase, "skipped", {}, None, 0, detail=BEFORE_LAST)
    deep = deep or run_is_deep(main, base, tip)  # a --deep run resumes as one without the flag repeated
    env, reindex = _open_env(main, tree, run_id=run_id, base_sha=base, date=date, dry_run=False, deep=deep,
                             embedder=embedder, model=model)
    env.services.budget.spend(tasks_added(main, base, tip))
    try:
        try:
            results = _execute(env, reindex, SLEEP_PHASES, done, clock, after_phase)
        except BaseException:
            set_status(db, run_id, "interrupted", head_sha=tree.head_sha(), now=clock())
            raise
        head = tree.head_sha() or tip
        report = RunReport(run_id, run_id, base, head, False, tuple(results), _new_commits(main, tip, head), (),
                           resumed=True, extra={"recoveredLocks": recovered})
        # the record is final before the teardown: a kill from here on leaves only cleanup
        set_status(db, run_id, "failed" if report.failed_phases else "review", head_sha=head, now=clock())
        keep_run_index(env.db, main, run_id)
    finally:
        env.db.close()
        main.remove_worktree(name)
    return report


def _finish_teardown(main: GitRepo, db: IndexDB, run_id: str, base: str, tip: str, *, recovered: list[str],
                     clock: Clock) -> RunReport:
    """Resume of a run whose branch ends in a report commit that counted no failure: the pass finished and only its
    teardown was cut short (a kill while the row was marked or the worktree removed). Cleanup only: the leftover
    worktree is removed and the row marked ``review``; no phase runs and nothing is committed, so the branch, the
    record, stays as the pass left it. Every phase is reported ``skipped`` (``already completed on this branch``)
    with its commit when it made one."""
    main.remove_worktree(worktree_name(run_id))
    committed = completed_phases(main, base, tip)
    previous = {p.phase: p for p in phase_rows(db, run_id)}
    phases = tuple(
        PhaseReport(phase, "skipped",
                    committed[phase][1] if phase in committed else (previous[phase].counts if phase in previous
                                                                    else {}),
                    committed[phase][0] if phase in committed else None,
                    previous[phase].llm_calls if phase in previous else 0, detail=ALREADY_DONE)
        for phase in SLEEP_PHASES
    )
    set_status(db, run_id, "review", head_sha=tip, now=clock())
    return RunReport(run_id, run_id, base, tip, False, phases, (), (), resumed=True,
                     extra={"recoveredLocks": recovered, "teardownOnly": True})


def abort_run(main: GitRepo, db: IndexDB, run_id: str, *, clock: Clock) -> dict[str, Any]:
    """Drop a run: remove its worktree and branch, mark the row abandoned. ``main`` never moved.

    Stale git locks the run left (a killed process) are removed first; a run a live process owns is refused.

    Raises:
        RunNotFound: neither a branch nor a row of that name exists.
        RunVerbRefused: not a run (a feature branch, ``main``, a hand-made ``sleep/…`` branch), or running.
        GitError: the branch is checked out in your work tree.
    """
    run = resolve_sleep_run(main, db, run_id, "abort")
    tip = main.branch_sha(run_id)
    if tip is not None and main.current_branch() == run_id:
        raise GitError(f"{run_id} is checked out here", hint="git switch main, then abort again")
    recovered = remove_locks(stale_git_locks(main, run_id, worktree_name(run_id)))
    main.remove_worktree(worktree_name(run_id))
    drop_run_index(main, run_id)
    if tip is not None:
        main.delete_branch(run_id)
    if run.row is not None and run.row.status != "merged":
        set_status(db, run_id, "abandoned", now=clock())
    return {"runId": run_id, "branchDeleted": tip is not None, "headSha": tip, "recoveredLocks": recovered}
