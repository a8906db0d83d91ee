"""``sleep rebase <run>``: replay a finished run's phase commits onto the current trunk (issue 8 item 8).

Review can take hours while the agent keeps writing to ``main``; ``sleep merge`` then refuses ``main-advanced``.
A rebase makes the run mergeable again without running it again:

1. the run is resolved for ``rebase`` (:mod:`sleep.runref`: a finished run, failed phases only with
   ``allow_failed``) under the sleep lock (:mod:`sleep.lock`), so no run writes its branch meanwhile, and its
   diff must pass the landing rail (:mod:`sleep.landing_rail`: only what sleep produces);
2. each commit of ``base..tip`` is replayed in order, in memory (:meth:`GitRepo.cherry_pick_in_memory`, a
   three-way tree merge whose base is the commit's parent), keeping its message (so its ``Memhtml-Run``,
   ``Memhtml-Phase`` and ``Memhtml-Counts`` trailers) and author. No work tree, index or checkout is touched;
3. generated artifacts are never a conflict: a conflicted listing or sitemap is rendered from the replayed tree's
   memories; the access sidecar is merged by its entries (:mod:`hooks.artifact_merge`). A replayed commit that
   touched a listing or the sitemap (the integrity phase) has every listing and the sitemap re-rendered from its
   tree, so memories written on the trunk meanwhile are listed. The report commit's page is re-rendered with the
   new base, the new head and the replayed commit shas;
4. a memory that confidence-decay restamped and the trunk rewrote meanwhile keeps the trunk's version (a re-run
   would not decay a memory updated today); any other conflict is a real one (the run and the trunk changed the
   same memory differently, or one deleted what the other changed): the rebase refuses, naming the phase, the
   commit and the memories, and moves nothing;
5. the gate runs (like ``sleep merge``; ``gate=None`` skips it), then the branch is moved with compare-and-swap
   and the run row gets the new base, head and commit shas. ``sleep merge`` then fast-forwards.

A rebase does not land the run: the pending-mark ledger is replayed byte for byte with the run's other record files
and nothing of it is applied (``marksApplied`` is 0); the merge that lands the rebased run applies it, once
(docs/ledger.md §1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from git_memhtml.artifacts.entries import parse_listing
from git_memhtml.artifacts.listings import PublishRow, TreeFile, publish_rows, render_artifacts
from git_memhtml.artifacts.merge import artifact_kind, merge_artifact
from git_memhtml.errors import DiscriminationFailed, MemhtmlError, RunRefused
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index import runs as run_rows
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.engine.commit import TRAILER_PHASE
from git_memhtml.sleep.engine.env import PhaseReport
from git_memhtml.sleep.engine.ledger import ledger_lines
from git_memhtml.sleep.engine.lock import sleep_lock
from git_memhtml.sleep.engine.runfiles import ledger_file, report_path, run_record_files
from git_memhtml.sleep.engine.runplace import drop_run_index
from git_memhtml.sleep.engine.runref import resolve_sleep_run
from git_memhtml.sleep.engine.runs import phase_rows
from git_memhtml.sleep.engine.trunk import trunk_name
from git_memhtml.sleep.landing.rail import check_sleep_output
from git_memhtml.sleep.phases.report import PHASE as REPORT_PHASE
from git_memhtml.sleep.phases.report import phase_lines, report_counts
from git_memhtml.sleep.presentation.report_html import render_report
from git_memhtml.tree.layout import is_indexable

TRUNK_WINS_PHASES: frozenset[str] = frozenset({"confidence-decay"})
"""Phases whose change to a memory is a mechanical restamp: where the trunk changed the same memory meanwhile, the
trunk's version wins (decay follows ``memhtml-updated``, which the trunk's write just moved: docs/sleep.md)."""

Gate = Callable[[], object]
"""Runs the discrimination gate; raises :class:`DiscriminationFailed` when it refuses."""


class RebaseConflict(RunRefused):
    """A replayed phase commit and the trunk changed the same memory differently."""

    code = "ERR_WRITE_CONFLICT"


@dataclass
class RebaseReport:
    """The ``sleep.rebase`` envelope: old and new base and head, each replayed commit, regenerated artifacts."""

    run_id: str
    trunk: str
    old_base: str
    new_base: str
    old_head: str
    new_head: str
    rebased: bool
    commits: list[dict[str, str | None]] = field(default_factory=list)
    regenerated: list[str] = field(default_factory=list)
    gate_skipped: bool = False
    reason: str | None = None
    marks_pending: int = 0

    def as_json(self) -> dict[str, Any]:
        """JSON shape. ``marksPending`` counts the ledger lines at the head; ``marksApplied`` is always 0: a rebase
        moves the run onto the new trunk and does not land it, so it applies nothing (docs/ledger.md §1)."""
        return {
            "runId": self.run_id, "trunk": self.trunk, "rebased": self.rebased, "oldBaseSha": self.old_base,
            "baseSha": self.new_base, "oldHeadSha": self.old_head, "headSha": self.new_head,
            "commits": self.commits, "regenerated": self.regenerated, "gateSkipped": self.gate_skipped,
            "reason": self.reason, "marksPending": self.marks_pending, "marksApplied": 0,
        }


def listed_rows(repo: GitRepo, commit: str) -> dict[str, tuple[str, PublishRow]]:
    """``{path: (blob sha, row)}`` read back from the listings of ``commit``'s tree (which the integrity phase
    rendered from that very tree), so a memory whose blob is unchanged needs no parse. Listings that do not parse
    as our rendering are skipped."""
    blobs = repo.tree_blobs(commit, ())
    out: dict[str, tuple[str, PublishRow]] = {}
    for path, sha in blobs.items():
        if artifact_kind(path) != "listing":
            continue
        listing = parse_listing(repo.read_blob(sha), path.rsplit("/", 1)[0] if "/" in path else "")
        for row in listing.rows if listing is not None else ():
            if row.path in blobs:
                out[row.path] = (blobs[row.path], row)
    return out


def _rows(repo: GitRepo, db: IndexDB, blobs: Mapping[str, str],
          known: Mapping[str, tuple[str, PublishRow]]) -> list[PublishRow]:
    """Publish rows of the memories among ``blobs``: rows ``known`` for the same blob, then index rows whose blob
    matches, the rest parsed (:func:`sleep.publish.publish_rows`)."""
    rows: list[PublishRow] = []
    rest: dict[str, TreeFile] = {}
    for path, sha in blobs.items():
        if not is_indexable(path):
            continue
        hit = known.get(path)
        if hit is not None and hit[0] == sha:
            rows.append(hit[1])
        else:
            rest[path] = TreeFile(path, repo.read_blob(sha), sha)
    return sorted([*rows, *publish_rows(db, rest)], key=lambda r: r.path)


def _phase_of(repo: GitRepo, sha: str) -> str | None:
    trailers = repo.log_trailers(sha + "~1", sha, TRAILER_PHASE)
    return trailers[0][1][0] if trailers and trailers[0][1] else None


def _report_page(db: IndexDB, run_id: str, base: str, head: str, shas: Mapping[str, str],
                 marks_pending: int | None = None) -> bytes | None:
    """The report page re-rendered for the new base and head, from the run's phase rows (``None`` without rows);
    ``marks_pending`` is the ledger's line count the report's own line carries (``None`` without a ledger), as the
    report phase counts it."""
    rows = phase_rows(db, run_id)
    if not rows:
        return None
    earlier = [PhaseReport(r.phase, r.status, r.counts, shas.get(r.commit_sha or "", r.commit_sha), r.llm_calls,
                           r.detail) for r in rows if r.phase != REPORT_PHASE]
    counts = replace(report_counts(earlier), marks_pending=marks_pending)
    return render_report(run_id=run_id, branch=run_id, base_sha=base, head_sha=head,
                         reports=phase_lines(earlier, counts)).encode("utf-8")


@dataclass
class _Replay:
    """The state of one replay: where the chain stands (``tip``), old → new shas, the artifacts regenerated."""

    repo: GitRepo
    db: IndexDB
    run_id: str
    onto: str
    tip: str
    shas: dict[str, str] = field(default_factory=dict)
    regenerated: set[str] = field(default_factory=set)

    def pick(self, sha: str, parent: str, phase: str | None) -> str:
        """Replay one commit onto ``tip``; return the new commit (``tip`` moves there).

        Raises:
            RebaseConflict: a conflict outside generated artifacts.
        """
        repo, run_id = self.repo, self.run_id
        own = run_record_files(run_id)
        renders_artifacts = any(artifact_kind(p) in ("listing", "sitemap") for p in repo.changed_paths(parent, sha))
        cache: dict[str, dict[str, bytes]] = {}

        def fresh(merged: Mapping[str, str]) -> dict[str, bytes]:
            if "artifacts" not in cache:
                cache["artifacts"] = render_artifacts(_rows(repo, self.db, merged, listed_rows(repo, sha)))
            return cache["artifacts"]

        def resolve(path: str, base: bytes | None, mine: bytes | None, theirs: bytes | None,
                    merged: Mapping[str, str]) -> bytes | None:
            kind = artifact_kind(path)
            if kind in ("listing", "sitemap"):
                data = fresh(merged).get(path)
                if data is not None:
                    self.regenerated.add(path)
                return data
            if path in own:
                return theirs
            if phase in TRUNK_WINS_PHASES and kind is None and mine is not None and theirs is not None:
                return mine  # the trunk rewrote it after the run read it: a re-run would not decay it now
            if kind is None or mine is None or theirs is None:
                return None
            return merge_artifact(path, base or b"", mine, theirs)

        def refresh(merged: Mapping[str, str]) -> dict[str, bytes]:
            updates: dict[str, bytes] = {}
            if renders_artifacts:
                for path, data in fresh(merged).items():
                    if path not in merged or repo.read_blob(merged[path]) != data:
                        updates[path] = data
                        self.regenerated.add(path)
            if phase == REPORT_PHASE and report_path(run_id) in merged:
                ledger = merged.get(ledger_file(run_id))
                pending = None if ledger is None else len(ledger_lines(
                    repo.read_blob(ledger).decode("utf-8", "replace")))
                page = _report_page(self.db, run_id, self.onto, self.tip, self.shas, pending)
                if page is not None and repo.read_blob(merged[report_path(run_id)]) != page:
                    updates[report_path(run_id)] = page
            return updates

        result = repo.cherry_pick_in_memory(sha, self.tip, resolve, refresh)
        if result.tree_sha is None:
            listed = ", ".join(result.unresolved[:10]) + (" …" if len(result.unresolved) > 10 else "")
            raise RebaseConflict(
                f"{run_id}: replaying {phase or 'a'} commit {sha[:12]} onto {self.onto[:12]} conflicts in "
                f"{len(result.unresolved)} file(s): {listed}",
                hint=(f"the trunk changed the same memories; review them, then abort the run (git memhtml sleep "
                      f"abort {run_id}) and start a new one"),
            )
        new = repo.replay_commit(sha, result.tree_sha, self.tip)
        self.shas[sha] = new
        self.tip = new
        return new


def replay(repo: GitRepo, db: IndexDB, run_id: str, commits: list[str],
           onto: str) -> tuple[str, list[dict[str, str | None]], list[str]]:
    """Replay ``commits`` (oldest first, a linear chain) onto ``onto`` in memory; return the new tip, the
    ``[{"phase", "from", "to"}]`` mapping and the artifact paths regenerated.

    Raises:
        RunRefused: the commits are not a linear chain of single-parent commits.
        RebaseConflict: a commit conflicts outside generated artifacts (the message names phase, commit, paths).
    """
    state = _Replay(repo, db, run_id, onto, onto)
    out: list[dict[str, str | None]] = []
    previous: str | None = None
    for sha in commits:
        parents = repo.parents(sha)
        if len(parents) != 1 or (previous is not None and parents[0] != previous):
            raise RunRefused(f"{run_id}: commit {sha[:12]} is not a linear phase commit",
                             hint="a run branch is a straight line of phase commits; start a new run")
        previous = sha
        phase = _phase_of(repo, sha)
        out.append({"phase": phase, "from": sha, "to": state.pick(sha, parents[0], phase)})
    return state.tip, out, sorted(state.regenerated)


def rebase_run(
    repo: GitRepo, db: IndexDB, run_id: str, *, gate: Gate | None, clock: Callable[[], str],
    allow_failed: bool = False,
) -> RebaseReport:
    """Replay ``run_id`` onto the trunk's tip, run the gate, move the branch (module docstring).

    A run already on the trunk's tip is reported ``rebased=False`` with a reason and nothing moves.

    Raises:
        RunNotFound / RunVerbRefused: not a finished run (:mod:`sleep.runref`), or failed phases without
            ``allow_failed``; ``not-sleep-output`` (:class:`sleep.landing_rail.NotSleepOutput`). RunRefused: another
            sleep run holds the lock; the run is already merged.
        RebaseConflict: a real conflict (the memories are named). DiscriminationFailed: the gate refused.
        GitError: the branch moved meanwhile, or its ref is locked.
    """
    resolve_sleep_run(repo, db, run_id, "rebase", allow_failed=allow_failed)
    with sleep_lock(repo, run_id, now=clock()):
        run = resolve_sleep_run(repo, db, run_id, "rebase", allow_failed=allow_failed)
        check_sleep_output(repo, run.run_id, run.base_sha, run.tip_sha)  # the landing rail, before anything moves
        branch = trunk_name(repo)
        onto = repo.branch_sha(branch) or ""
        report = RebaseReport(run.run_id, branch, run.base_sha, onto, run.tip_sha, run.tip_sha, False,
                              gate_skipped=gate is None)
        report.marks_pending = _ledger_size(repo, run.run_id, run.tip_sha)
        if onto == run.base_sha:
            report.reason = f"{run.run_id} is already cut from the tip of {branch} ({onto[:12]})"
            return report
        if repo.is_ancestor(run.tip_sha, onto):
            raise RunRefused(f"{run.run_id} is already merged into {branch}", hint="start a new cycle: "
                             "git memhtml sleep run")
        new_head, commits, regenerated = replay(repo, db, run.run_id, list(run.commits), onto)
        if gate is not None:
            gate()
        repo.move_branch(run.run_id, new_head, expected=run.tip_sha)
        drop_run_index(repo, run.run_id)  # it described the old tip; the run gate builds the new one's
        if run.row is not None:
            try:
                run_rows.rebase_run(db, run.run_id, base_sha=onto, head_sha=new_head,
                                    shas={str(c["from"]): str(c["to"]) for c in commits})
            except MemhtmlError:
                pass  # rows are a convenience; the branch is the record (docs/sleep.md §2.5)
        report.new_head, report.commits, report.regenerated, report.rebased = new_head, commits, regenerated, True
        report.marks_pending = _ledger_size(repo, run.run_id, new_head)
        return report


def _ledger_size(repo: GitRepo, run_id: str, commit: str) -> int:
    """Lines of ``run_id``'s pending-mark ledger at ``commit`` (0 without one)."""
    data = repo.read_path_at(commit, ledger_file(run_id))
    return 0 if data is None else len(ledger_lines(data.decode("utf-8", "replace")))


__all__ = ["DiscriminationFailed", "RebaseConflict", "RebaseReport", "rebase_run", "replay"]
