"""``git memhtml doctor``: find what is inconsistent around the memory tree and repair what is safe.

Checks (issue 4 item 6; core §3.4, §7 "Doctor"; seed 001 stale runs): index drift (:mod:`index.verify`),
unparseable files, duplicate live content, dangling authored links, stale sleep runs (``running`` for more than
:data:`STALE_RUN_HOURS` or whose branch is gone), leftover sleep worktrees under
``<common-dir>/memhtml/worktrees/``, and a ``.gitattributes`` lacking the generated-file merge lines.

``fix`` repairs only caches and bookkeeping: catches the index up and re-projects drifted rows, marks stale runs
``abandoned``, removes leftover worktrees. It never writes a memory file or ``.gitattributes`` (tracked content:
``git memhtml init`` adds the lines).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from git_memhtml.domain.instants import hours_between
from pathlib import Path

from git_memhtml.embed.base import Embedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.index.indexer import Parser
from git_memhtml.index.verify import IndexDrift, TreeFacts, compare, repair, reproject, tree_facts
from git_memhtml.sleep.contract import STALE_RUN_HOURS
from git_memhtml.sleep.run import worktree_name
from git_memhtml.sleep.runs import reap_stale
from git_memhtml.store.repo_init import GITATTRIBUTES_LINES

WORKTREES_DIR = ("memhtml", "worktrees")
"""Where sleep runs keep their linked worktrees, under the common git dir (DESIGN §3.2)."""


@dataclass(frozen=True)
class StaleRun:
    """A ``running`` row that no process will finish: ``reason`` is ``branch gone`` or ``started Nh ago``."""

    run_id: str
    reason: str


@dataclass(frozen=True)
class DoctorReport:
    """Every finding; ``problems`` counts them (``exit 1`` when non-zero); ``fixed`` lists what ``--fix`` did."""

    index: IndexDrift
    tree: TreeFacts
    stale_runs: tuple[StaleRun, ...]
    leftover_worktrees: tuple[str, ...]
    gitattributes_missing: tuple[str, ...]
    fixed: tuple[str, ...] = field(default=())

    @property
    def problems(self) -> int:
        """Number of findings (index drift counts once per drifted path, plus staleness, FTS and vectors)."""
        if self.index.not_built:
            drift = 1  # a fresh clone: one finding, "index not built"
        else:
            drift = len(self.index.drifted_paths) + int(self.index.stale) + int(not self.index.fts_ok)
            drift += int(self.index.missing_vectors > 0)
        tree = len(self.tree.unparseable) + len(self.tree.duplicates) + len(self.tree.dangling)
        return drift + tree + len(self.stale_runs) + len(self.leftover_worktrees) + len(self.gitattributes_missing)


def stale_runs(repo: GitRepo, db: IndexDB, *, now: str) -> tuple[StaleRun, ...]:
    """``running`` rows whose branch is gone (not for dry runs, which have none) or that started more than
    :data:`STALE_RUN_HOURS` (20, seed 001) hours before ``now``. Reads only."""
    out: list[StaleRun] = []
    for run_id, branch, dry, started in db.query(
            "SELECT run_id, branch, dry_run, started_at FROM state.sleep_runs WHERE status = 'running' "
            "ORDER BY run_id"):
        hours = hours_between(str(started), now)
        if not dry and repo.branch_sha(str(branch)) is None:
            out.append(StaleRun(str(run_id), "branch gone"))
        elif hours > STALE_RUN_HOURS:
            out.append(StaleRun(str(run_id), f"started {int(hours)}h ago"))
    return tuple(out)


def _worktrees_folder(repo: GitRepo) -> Path:
    return repo.common_dir.joinpath(*WORKTREES_DIR)


def leftover_worktrees(repo: GitRepo, db: IndexDB, *, now: str) -> tuple[str, ...]:
    """Names of folders under ``<common-dir>/memhtml/worktrees/`` that no live (``running``, not stale) run
    owns: a run removes its worktree when it ends, so these are what a killed run left behind."""
    folder = _worktrees_folder(repo)
    if not folder.is_dir():
        return ()
    stale = {s.run_id for s in stale_runs(repo, db, now=now)}
    live: set[str] = set()
    for (run_id,) in db.query("SELECT run_id FROM state.sleep_runs WHERE status = 'running'"):
        if str(run_id) not in stale:
            live |= {worktree_name(str(run_id)), f"dry-{worktree_name(str(run_id))}"}
    return tuple(sorted(p.name for p in folder.iterdir() if p.is_dir() and p.name not in live))


def gitattributes_missing(repo: GitRepo) -> tuple[str, ...]:
    """The generated-file merge lines of ``GITATTRIBUTES_LINES`` (those with ``merge=``) that ``.gitattributes``
    lacks, compared token by token."""
    path = repo.root / ".gitattributes"
    present = {tuple(line.split()) for line in path.read_text(encoding="utf-8").splitlines()} if path.is_file() \
        else set()
    return tuple(line for line in GITATTRIBUTES_LINES if "merge=" in line and tuple(line.split()) not in present)


def _tree_paths(repo: GitRepo) -> set[str]:
    head = repo.head_sha()
    paths = set(repo.tree_blobs(head, prefixes=())) if head else set()
    for entry in repo.dirty():
        if entry.deleted:
            paths.discard(entry.path)
        else:
            paths.add(entry.path)
    return paths


def diagnose(repo: GitRepo, db: IndexDB, *, now: str, parse: Parser | None = None) -> DoctorReport:
    """Run every check; reads only (the FTS integrity check is a read despite its ``INSERT`` syntax).

    Raises:
        GitError: the repository cannot be read. StorageError: SQLite failed.
    """
    scratch, report = reproject(repo, now=now, parse=parse)
    try:
        drift = compare(db, scratch, head=repo.head_sha())
        facts = tree_facts(repo, scratch, report, lambda: _tree_paths(repo))
    finally:
        scratch.close()
    return DoctorReport(
        index=drift, tree=facts, stale_runs=stale_runs(repo, db, now=now),
        leftover_worktrees=leftover_worktrees(repo, db, now=now), gitattributes_missing=gitattributes_missing(repo),
    )


def _remove_worktree(repo: GitRepo, name: str) -> None:
    folder = _worktrees_folder(repo) / name
    repo.remove_worktree(name)
    if folder.is_dir() and folder.parent == _worktrees_folder(repo):
        shutil.rmtree(folder)
    repo.run_git(["worktree", "prune"])


def fix(repo: GitRepo, db: IndexDB, embedder: Embedder | None, *, now: str,
        parse: Parser | None = None) -> DoctorReport:
    """Repair what is safe, then diagnose again: catch the index up and re-project drifted rows, mark stale
    runs ``abandoned``, remove leftover worktrees. Memory files and ``.gitattributes`` are never written.

    Returns:
        The report after the repairs, with ``fixed`` naming each action taken.
    Raises:
        EmbedModelMismatch: the index holds vectors of another space (hint ``git memhtml index rebuild``).
        GitError, StorageError: as :func:`diagnose`.
    """
    before = diagnose(repo, db, now=now, parse=parse)
    actions: list[str] = []
    if not before.index.clean:
        repair(repo, db, embedder, now=now, parse=parse)
        actions.append(f"index: caught up and re-projected {len(before.index.drifted_paths)} drifted path(s)")
    if before.stale_runs:
        for reaped in reap_stale(db, branch_exists=lambda b: repo.branch_sha(b) is not None, now=now):
            actions.append(f"run {reaped['runId']}: marked abandoned ({reaped['reason']})")
    for name in leftover_worktrees(repo, db, now=now):
        _remove_worktree(repo, name)
        actions.append(f"worktree {name}: removed")
    after = diagnose(repo, db, now=now, parse=parse)
    return DoctorReport(after.index, after.tree, after.stale_runs, after.leftover_worktrees,
                        after.gitattributes_missing, fixed=tuple(actions))
