"""Runs merged outside ``sleep merge`` (a forge's fast-forward, merge commit or squash) recognised on ``main``.

The record of a run is what it committed, not its branch: the report page ``.memhtml/sleep/<stem>.html`` and,
when the run earned pending marks, the ledger ``.memhtml/sleep/<stem>.pending.jsonl`` (phase 17, report). A
squash keeps both files, so nothing is lost when the branch is. :func:`reconcile_landed_runs` scans main's tree
for those files and, for every run whose row is not ``merged`` or whose ledger is not yet applied:

1. applies the ledger read from main's tree exactly once (``state.applied_ledgers``, :func:`merge.apply_ledger`);
2. marks the run ``merged`` (inserting a row for a run made in another clone: a teammate's run you pulled);
3. records how it landed (:mod:`index.landings`), judged on the first-parent commit of ``main`` that added the
   run's files: two or more parents → ``merge-commit``; the run's own report commit (subject
   ``memhtml(sleep(report)): record run <run>`` and ``Memhtml-Run: <run>``) → ``fast-forward``; else ``squash``;
4. removes the run's linked worktree, as ``sleep merge`` does (the branch is kept, as ``sleep merge`` keeps it).

It must be called before anything reads run rows or corroboration state: ``sleep status``, ``sleep merge``,
``sleep run`` and the hooks' index catch-up call it. It is idempotent: a second call with the same ``main``
applies and records nothing, and costs one ``git ls-tree`` and two queries. The modules that do the work (the
ledger, the run rows, the phase contract) are imported only when there is work, so the hooks stay fast.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from git_memhtml.errors import MemhtmlError, RunRefused
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.index.landings import LandingRow, applied_ledgers, landing_rows, record_landing
from git_memhtml.index.runs import merged_runs
from git_memhtml.sleep.engine.trunk import trunk_name
from git_memhtml.tree.layout import REPORT_DIR

_RUN_FILE = re.compile(r"^sleep-(\d{4}-\d{2}-\d{2}(?:-[0-9a-z]{1,32})?)\.(?:html|pending\.jsonl)$")
"""A run's committed files: ``sleep-<date>[-<suffix>].html`` and ``….pending.jsonl`` (report phase); the
suffix is ``-N`` for runs made before unique run ids, a hex suffix since (sleep.runref.RUN_ID)."""


@dataclass(frozen=True)
class Reconciled:
    """One run reconciled by a call: how it landed and what its ledger did.

    ``marks_pending`` counts the ledger lines on main; ``marks_applied`` those applied now (0 when the ledger had
    already been applied, e.g. by ``sleep merge``). ``error`` names what failed (the run is then left as it was).
    """

    run_id: str
    how: str | None
    commit_sha: str | None
    marks_pending: int
    marks_applied: int
    row_created: bool = False
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        """JSON shape."""
        return {
            "runId": self.run_id,
            "landed": self.how,
            "commitSha": self.commit_sha,
            "marksPending": self.marks_pending,
            "marksApplied": self.marks_applied,
            "rowCreated": self.row_created,
            "error": self.error,
        }


def run_id_of_file(name: str) -> str | None:
    """``sleep-2026-01-15-2.pending.jsonl`` → ``sleep/2026-01-15-2``; ``None`` for any other file name."""
    match = _RUN_FILE.match(name)
    return f"sleep/{match.group(1)}" if match else None


def runs_on_tree(repo: GitRepo, commit_sha: str) -> dict[str, list[str]]:
    """``{run id: [its committed files under .memhtml/sleep/]}`` in the tree of ``commit_sha``."""
    out = repo.run_git(["ls-tree", "--name-only", commit_sha, f"{REPORT_DIR}/"])
    runs: dict[str, list[str]] = {}
    for path in out.splitlines():
        run_id = run_id_of_file(path.rsplit("/", 1)[-1])
        if run_id is not None:
            runs.setdefault(run_id, []).append(path)
    return runs


@dataclass(frozen=True)
class _Adding:
    sha: str
    parents: tuple[str, ...]
    epoch: int
    subject: str


def _adding_commits(repo: GitRepo, trunk: str) -> dict[str, _Adding]:
    """``{path: the oldest first-parent commit of trunk that added it}`` for files under ``.memhtml/sleep/``."""
    out = repo.run_git(
        ["log", "--first-parent", "--diff-filter=A", "--name-only", "--format=%x00%H%x1f%P%x1f%ct%x1f%s",
         trunk, "--", f"{REPORT_DIR}/"]
    )
    found: dict[str, _Adding] = {}
    for record in out.split("\x00"):
        if not record.strip():
            continue
        head, _, names = record.partition("\n")
        sha, parents, epoch, subject = (head.split("\x1f") + ["", "", "0", ""])[:4]
        commit = _Adding(sha, tuple(parents.split()), int(epoch or 0), subject)
        for name in names.splitlines():
            if name.strip():
                found[name.strip()] = commit  # log is newest first: the last assignment is the oldest commit
    return found


def _trailer(repo: GitRepo, sha: str, key: str) -> list[str]:
    out = repo.run_git(["log", "-1", f"--format=%(trailers:key={key},valueonly,separator=%x1f)", sha])
    return [v.strip() for v in out.strip("\n").split("\x1f") if v.strip()]


def classify_landing(repo: GitRepo, run_id: str, commit: _Adding) -> str:
    """``merge-commit`` | ``fast-forward`` | ``squash`` for the first-parent commit that brought the run's files."""
    from git_memhtml.sleep.engine.commit import TRAILER_RUN, phase_subject  # noqa: PLC0415 - see the module docstring
    from git_memhtml.sleep.phases.report import PHASE as REPORT_PHASE  # noqa: PLC0415

    if len(commit.parents) >= 2:
        return "merge-commit"
    own_subject = phase_subject(REPORT_PHASE, f"record run {run_id}")
    if commit.subject == own_subject and run_id in _trailer(repo, commit.sha, TRAILER_RUN):
        return "fast-forward"
    return "squash"


def backing_commit(repo: GitRepo, run_id: str, files: list[str], trunk: str) -> str | None:
    """A commit carrying ``Memhtml-Run: <run_id>`` whose tree holds every one of ``files`` byte for byte as the
    trunk's tree has them, or ``None`` (a file written by hand, not by that run).

    Searched among the commits that touched those files on the trunk (a fast-forward or merge commit brings the
    run's own report commit) and on every local and remote-tracking branch (a squash keeps only the files: the
    run's commits must still be on its branch, ``sleep/<run>`` or ``origin/sleep/<run>``).
    """
    from git_memhtml.sleep.engine.commit import TRAILER_RUN  # noqa: PLC0415 - see the module docstring

    wanted = {path: repo.read_path_at(trunk, path) for path in files}
    out = repo.run_git(["log", f"--format=%H%x1f%(trailers:key={TRAILER_RUN},valueonly,separator=%x1f)", trunk,
                        "--branches", "--remotes", "--", *files])
    for line in out.splitlines():
        sha, _, values = line.partition("\x1f")
        if run_id not in [v.strip() for v in values.split("\x1f")]:
            continue
        if all(repo.read_path_at(sha, path) == data for path, data in wanted.items()):
            return sha.strip()
    return None


def _instant(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _reconcile_one(
    repo: GitRepo, db: IndexDB, run_id: str, files: list[str], trunk: str, adding: dict[str, _Adding], *,
    landed: LandingRow | None, applied: bool, now: str,
) -> Reconciled:
    from git_memhtml.index.runs import RunRow, get_run  # noqa: PLC0415
    from git_memhtml.sleep.engine.runplace import worktree_name  # noqa: PLC0415
    from git_memhtml.sleep.engine.runs import set_status, upsert_run  # noqa: PLC0415
    from git_memhtml.sleep.landing.access_moves import land_access_moves, landed_base  # noqa: PLC0415
    from git_memhtml.sleep.landing.merge import apply_ledger  # noqa: PLC0415 - see the module docstring

    if backing_commit(repo, run_id, files, trunk) is None:
        return Reconciled(run_id, None, None, 0, 0, error=(
            f"{', '.join(sorted(files))} on the trunk are not backed by a commit carrying 'Memhtml-Run: {run_id}' "
            "(written by hand, or a squash whose run branch is gone); not applied"))
    commit = next((adding[p] for p in sorted(files, key=lambda p: not p.endswith(".html")) if p in adding), None)
    how = classify_landing(repo, run_id, commit) if commit else "fast-forward"
    row = get_run(db, run_id)
    created = False
    if row is None:
        base = commit.parents[0] if commit and commit.parents else trunk
        at = _instant(commit.epoch) if commit else now
        upsert_run(db, RunRow(run_id, run_id, base, commit.sha if commit else trunk, "merged", False, at, at))
        created = True
    elif row.status != "merged":
        set_status(db, run_id, "merged", head_sha=row.head_sha, now=now)
    if not applied:
        land_access_moves(repo, db, landed_base(row.base_sha if row else None, commit), commit.sha if commit else None)
    pending, done = (0, 0) if applied else apply_ledger(repo, db, run_id, trunk, now=now)
    if landed is None:
        record_landing(db, run_id, how, commit.sha if commit else None, now=now)
    else:
        how = landed.how
    if row is not None:
        repo.remove_worktree(worktree_name(run_id))
    return Reconciled(run_id, how, commit.sha if commit else None, pending, done, created)


def reconcile_landed_runs(repo: GitRepo, db: IndexDB, now: str) -> list[Reconciled]:
    """Recognise every run whose committed files are on ``main`` but that is not yet merged, landed and applied.

    Args:
        repo: any work tree of the repository (the local trunk branch is read, not HEAD: ``memhtml.trunk``,
            else ``main``, else ``master``; see :func:`sleep.trunk.trunk_name`).
        db: the open index with the shared state plane attached.
        now: ISO UTC instant stamped on rows.

    Returns:
        One :class:`Reconciled` per run handled by this call (``[]`` when there was nothing to do, or no trunk).
        A run whose reconciliation failed carries ``error`` and is retried on the next call.
    """
    try:
        trunk = repo.branch_sha(trunk_name(repo))
    except RunRefused:
        return []
    if trunk is None:
        return []
    on_tree = runs_on_tree(repo, trunk)
    if not on_tree:
        return []
    done_ledgers = applied_ledgers(db)
    merged = merged_runs(db)
    todo = [(run_id, files) for run_id, files in sorted(on_tree.items())
            if not (run_id in merged and run_id in done_ledgers)]  # a run `sleep merge` landed before landings
    if not todo:                                                    # were recorded keeps no landing row
        return []
    landings = landing_rows(db)
    adding = _adding_commits(repo, trunk)
    out: list[Reconciled] = []
    for run_id, files in todo:
        try:
            out.append(
                _reconcile_one(repo, db, run_id, files, trunk, adding, landed=landings.get(run_id),
                               applied=run_id in done_ledgers, now=now)
            )
        except MemhtmlError as exc:
            out.append(Reconciled(run_id, None, None, 0, 0, error=exc.message))
    return out

