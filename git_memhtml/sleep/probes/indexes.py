"""The two indexes a verdict reads: the base's and the tip's (docs/gate.md §9.4).

An index is reused only when it is a clean projection of exactly that commit in the probe's vector space, with a
vector for every chunk (:func:`git_memhtml.index.snapshot.describes_commit`): the user's own index for the base (it
lags or carries uncommitted edits otherwise); for the tip, the run's own index (brought up to each phase commit and
kept when the run's worktree goes, ``sleep.engine.runplace.run_index_path``) or, while the run is live, its worktree's.
Anything else is built from the commit alone in a folder of the caller's, which is what forge CI always does; the
two paths give the same rankings, so the verdict does not depend on which was taken.
"""

from __future__ import annotations

import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from git_memhtml.embed.base import Embedder
from git_memhtml.errors import MemhtmlError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB, open_index
from git_memhtml.index.snapshot import build_commit_index, describes_commit
from git_memhtml.sleep.engine.runplace import run_index_path, worktree_name

Source = Literal["main", "run index", "run worktree", "built"]
"""Where a probe index came from."""


@dataclass
class ProbeIndex:
    """An open index of one commit; ``owned`` indexes are closed by :meth:`close` (reused ones belong to others)."""

    db: IndexDB
    source: Source
    seconds: float
    owned: bool

    def close(self) -> None:
        """Close the connection when this verdict opened it."""
        if self.owned:
            self.db.close()

    def timing(self) -> dict[str, object]:
        """``{"source", "seconds"}`` (seconds to open or build, 3 dp)."""
        return {"source": self.source, "seconds": round(self.seconds, 3)}


def reusable(db: IndexDB, sha: str, embedder: Embedder | None) -> bool:
    """``db`` is a clean, fully embedded projection of ``sha`` in ``embedder``'s space (module docstring)."""
    space = embedder.space if embedder is not None else None
    try:
        return describes_commit(db, sha, space)
    except MemhtmlError:
        return False


def _build(repo: GitRepo, sha: str, folder: Path, embedder: Embedder | None, now: str) -> ProbeIndex:
    started = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    db = build_commit_index(repo, sha, folder, embedder, now=now)
    return ProbeIndex(db, "built", time.perf_counter() - started, owned=True)


def base_index(repo: GitRepo, main_db: IndexDB | None, base: str, embedder: Embedder | None, folder: Path, *,
               now: str, stack: ExitStack) -> ProbeIndex:
    """The user's index when it describes ``base`` exactly, else one built in ``folder``.

    The user's index is checked and then read inside one read snapshot, entered on ``stack`` (the caller's block):
    a writer committing on ``main`` meanwhile (its hook updates that index) can neither change the rankings half way
    nor make a stale index pass the check.

    Raises:
        StorageError / GitError: the index cannot be built.
    """
    started = time.perf_counter()
    if main_db is not None:
        with ExitStack() as trial:
            trial.enter_context(main_db.read_snapshot())
            if reusable(main_db, base, embedder):
                stack.enter_context(trial.pop_all())
                return ProbeIndex(main_db, "main", time.perf_counter() - started, owned=False)
    return _build(repo, base, folder, embedder, now)


def tip_index(repo: GitRepo, run_id: str, tip: str, embedder: Embedder | None, folder: Path, *,
              now: str) -> ProbeIndex:
    """The run's kept index (or its live worktree's) when it describes ``tip`` exactly, else one built in ``folder``.

    Raises:
        StorageError / GitError: the index cannot be built.
    """
    started = time.perf_counter()
    kept = run_index_path(repo, run_id)
    if kept.is_file():
        try:
            db = open_index(kept, repo.common_dir / "memhtml" / "state.db")
        except MemhtmlError:
            pass
        else:
            if reusable(db, tip, embedder):
                return ProbeIndex(db, "run index", time.perf_counter() - started, owned=True)
            db.close()
    where = repo.worktree_path(worktree_name(run_id))
    if where is not None and where.is_dir():
        opened: IndexDB | None = None
        try:
            tree = GitRepo.discover(where, env=repo.env)
            if (tree.git_dir / "memhtml" / "index.db").is_file():
                opened = IndexDB.for_repo(tree)
                if reusable(opened, tip, embedder):
                    return ProbeIndex(opened, "run worktree", time.perf_counter() - started, owned=True)
        except MemhtmlError:
            pass
        if opened is not None:
            opened.close()
    return _build(repo, tip, folder, embedder, now)
