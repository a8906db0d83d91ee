"""``sleep merge``: the gate, the fast-forward, the pending-mark ledger, the index update (docs/sleep.md §2.7,
docs/sleep.md §2.6).

Refusals are values and happen before anything moves: ``no-run`` (no such run), ``main-advanced`` (``main`` is
not the run's base — including a run already merged —, or the fast-forward failed), ``gate-failed`` (the
discrimination gate refused), ``probes-failed`` (the run gate's probes on your memory lost a memory the run
leaves no pointer to, docs/gate.md §9), ``not-sleep-output`` (the landing rail, :mod:`sleep.landing_rail`: the
branch holds something no sleep run produces), and ours, ``dirty-checkout`` (your checkout of ``main`` has
uncommitted changes to files the run changes, so git would refuse the fast-forward). Each refusal carries a
``hint``. A refusal applies no pending marks and reports neither count.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from git_memhtml.cut import clip_join
from git_memhtml.embed.base import Embedder
from git_memhtml.errors import DiscriminationFailed, GitError, MemhtmlError, RunNotFound
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.corroboration import promote_edge, promote_entity
from git_memhtml.index.db import IndexDB
from git_memhtml.index.indexer import update
from git_memhtml.index.landings import ledger_applied, mark_ledger_applied, record_landing
from git_memhtml.index.traces import TraceTables
from git_memhtml.sleep.engine.ledger import ledger_lines
from git_memhtml.sleep.engine.runfiles import ledger_file
from git_memhtml.sleep.engine.runplace import drop_run_index, worktree_name
from git_memhtml.sleep.engine.runref import RunVerbRefused, resolve_sleep_run
from git_memhtml.sleep.engine.runs import set_status
from git_memhtml.sleep.engine.trunk import trunk_name
from git_memhtml.sleep.landing.access_moves import land_access_moves
from git_memhtml.sleep.landing.rail import check_sleep_output
from git_memhtml.sleep.probes.gate import refusal as probe_refusal
from git_memhtml.sleep.probes.verdict import Verdict

Gate = Callable[[], object]
"""Runs the discrimination gate; raises :class:`DiscriminationFailed` when it refuses."""

RunGate = Callable[[str, str, str], Verdict]
"""``(run id, base, tip) -> verdict``: the run gate's probes on your memory (:mod:`git_memhtml.sleep.probes`)."""


@dataclass
class MergeReport:
    """The ``sleep.merge`` envelope."""

    run_id: str
    merged: bool
    refusal: str | None = None
    reason: str | None = None
    base_sha: str | None = None
    head_sha: str | None = None
    gate_skipped: bool = False
    hint: str | None = None
    failed_phases: tuple[str, ...] = ()
    trunk: str = "main"
    marks_pending: int | None = None
    marks_applied: int | None = None
    index: dict[str, Any] = field(default_factory=dict)
    probes: Verdict | None = None

    def as_json(self) -> dict[str, Any]:
        """JSON shape."""
        return {
            "runId": self.run_id,
            "merged": self.merged,
            "refusal": self.refusal,
            "reason": self.reason,
            "baseSha": self.base_sha,
            "headSha": self.head_sha,
            "gateSkipped": self.gate_skipped,
            "trunk": self.trunk,
            "hint": self.hint,
            "failedPhases": list(self.failed_phases),
            "marksPending": self.marks_pending,
            "marksApplied": self.marks_applied,
            "probes": None if self.probes is None else self.probes.as_json(),
            **self.index,
        }


def apply_ledger(repo: GitRepo, db: IndexDB, run_id: str, tip: str, *, now: str) -> tuple[int, int]:
    """Apply the pending marks committed at ``tip`` for ``run_id`` once (recorded in ``state.applied_ledgers``).

    The check and the application are one ``BEGIN IMMEDIATE`` transaction, so of two landings racing (``sleep
    merge`` and the reconciliation a hook runs) one applies and the other sees it applied. A line that is not a JSON
    object, a mark of an unknown kind, or one whose key values are not strings is skipped and not counted.

    Returns:
        ``(pending, applied)``: the ledger's non-blank lines, and the marks applied now (0 when the ledger was
        already applied).

    Raises:
        StorageError: the state database cannot be written (nothing is applied).
    """
    data = repo.read_path_at(tip, ledger_file(run_id))
    lines = [] if data is None else ledger_lines(data.decode("utf-8", "replace"))
    applied = 0
    with db.atomic():
        if ledger_applied(db, run_id):
            return len(lines), 0
        for line in lines:
            mark = _mark(line)
            if mark is None:
                continue
            kind = mark.get("kind")
            if kind == "commitment-below-floor":
                applied += 1
            elif kind == "entity-promoted" and _strings(mark, "entityType", "alias", "canonical"):
                promote_entity(db, mark["entityType"], mark["alias"], mark["canonical"], now=now)
                applied += 1
            elif kind == "session-consolidated" and _strings(mark, "session"):
                TraceTables(db).mark_consolidated(mark["session"], run_id, at=now)
                applied += 1
            elif kind == "edge-promoted" and _strings(mark, "src", "rel", "dst"):
                promote_edge(db, mark["src"], mark["rel"], mark["dst"], now=now)
                applied += 1
        mark_ledger_applied(db, run_id, now=now)
    return len(lines), applied


def _mark(line: str) -> dict[str, Any] | None:
    """The JSON object of one ledger line, or ``None`` (not JSON, nested past the decoder's depth, not an object)."""
    try:
        value = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _strings(mark: dict[str, Any], *keys: str) -> bool:
    return all(isinstance(mark.get(key), str) for key in keys)


def merge_run(
    repo: GitRepo,
    db: IndexDB,
    run_id: str,
    *,
    gate: Gate | None,
    embedder: Embedder | None,
    clock: Callable[[], str],
    allow_failed: bool = False,
    run_gate: RunGate | None = None,
) -> MergeReport:
    """Fast-forward ``main`` to the run's branch after the gate; then apply the ledger and update the index.

    ``gate=None`` is ``--skip-gate`` (the caller warns and passes no ``run_gate`` either). ``run_gate`` runs after
    the discrimination gate, before the run's worktree goes (its index is the tip's): a verdict that does not pass
    refuses with ``probes-failed``, naming the lost memories and the phases that changed them. The run is resolved by
    :func:`sleep.runref.resolve_sleep_run`: a name that is not a finished run is refused (``no-run``,
    ``not-a-run``, ``running``, ``interrupted``, ``abandoned``), and so is a run with failed phases unless
    ``allow_failed`` (``failed-phases``; the report's ``failed_phases`` lists them either way).
    """
    rerun = ("bring the run onto the new trunk: git memhtml sleep rebase {name} (or start a fresh cycle: "
             "git memhtml sleep run)")
    try:
        run = resolve_sleep_run(repo, db, run_id, "merge", allow_failed=allow_failed)
    except RunNotFound as exc:
        return MergeReport(run_id, False, "no-run", exc.message, hint=exc.hint or "git memhtml sleep status")
    except RunVerbRefused as exc:
        report = MergeReport(run_id, False, exc.refusal, exc.message, hint=exc.hint)
        if exc.refusal == "failed-phases":
            report.failed_phases = exc.failed_phases
        return report
    name, row, base, tip = run.run_id, run.row, run.base_sha, run.tip_sha
    if run.state != "merged":
        try:
            check_sleep_output(repo, name, base, tip)  # the landing rail: only sleep's own output ever lands
        except RunVerbRefused as exc:
            return MergeReport(name, False, exc.refusal, exc.message, base_sha=base, head_sha=tip, hint=exc.hint)
    trunk_branch = trunk_name(repo)
    trunk = repo.branch_sha(trunk_branch) or ""
    report = MergeReport(name, False, base_sha=base, head_sha=tip, gate_skipped=gate is None, trunk=trunk_branch,
                         failed_phases=run.failed_phases)
    if trunk != base:
        report.refusal = "main-advanced"
        if (row is not None and row.status == "merged") or repo.is_ancestor(tip, trunk):
            report.reason = f"{name} is already merged into {trunk_branch}"
            report.hint = "start a fresh cycle: git memhtml sleep run"
        else:
            report.reason = f"{trunk_branch} is at {trunk[:12]}, the run was cut from {base[:12]}"
            report.hint = rerun.format(name=name)
        return report
    if repo.current_branch() == trunk_branch:
        blocking = sorted({e.path for e in repo.dirty()} & set(repo.changed_paths(base, tip)))
        if blocking:
            report.refusal = "dirty-checkout"
            report.reason = f"your checkout of {trunk_branch} has uncommitted changes to files the run changes: " + (
                clip_join(blocking, 5)
            )
            report.hint = "commit or stash them (git stash), then merge again"
            return report
    if gate is not None:
        try:
            gate()
        except DiscriminationFailed as exc:
            report.refusal, report.reason = "gate-failed", exc.message
            report.hint = (
                f"git memhtml eval discriminate --json shows the inverted probes; then git memhtml sleep abort {name}"
            )
            return report
    if run_gate is not None:
        report.probes = run_gate(name, base, tip)
        refused = probe_refusal(report.probes)
        if refused is not None:
            report.refusal, report.reason, report.hint = "probes-failed", refused.message, refused.hint
            return report
    repo.remove_worktree(worktree_name(name))
    try:
        with repo.write_lock("sleep merge"):  # no writer may commit on the trunk between the check and the move
            if repo.branch_sha(trunk_branch) != base:
                raise GitError(f"{trunk_branch} moved while merging {name}", hint=rerun)
            repo.fast_forward(trunk_branch, tip)
    except GitError as exc:
        report.refusal, report.reason, report.hint = "main-advanced", exc.message, rerun.format(name=name)
        landed = repo.branch_sha(trunk_branch)
        if landed is not None and landed != base and repo.is_ancestor(tip, landed):  # a merge beside us won
            report.reason = f"{name} is already merged into {trunk_branch} (another merge landed it meanwhile)"
            report.hint = "start a fresh cycle: git memhtml sleep run"
        return report
    now = clock()
    report.merged = True
    drop_run_index(repo, name)  # the tip's index, kept for the run gate, is main's to rebuild now
    set_status(db, name, "merged", head_sha=tip, now=now)
    try:
        record_landing(db, name, "sleep-merge", tip, now=now)
    except MemhtmlError:
        pass  # like the run row, the landing row is a convenience and never fails a merge
    try:
        report.marks_pending, report.marks_applied = apply_ledger(repo, db, name, tip, now=now)
    except MemhtmlError as exc:
        report.marks_pending, report.marks_applied = None, 0
        report.reason = f"ledger not applied: {exc.message}"
    land_access_moves(repo, db, base, tip)
    try:
        result = update(repo, db, embedder, now=now)
        report.index = {
            "indexUpdated": True,
            "indexHeadSha": result.head_sha,
            "indexAdded": result.added,
            "indexModified": result.modified,
            "indexRemoved": result.removed,
            "indexRenamed": result.renamed,
            "embeddingsWritten": result.embeddings_written,
        }
    except MemhtmlError as exc:
        report.index = {"indexUpdated": False, "indexError": exc.message}
    return report
