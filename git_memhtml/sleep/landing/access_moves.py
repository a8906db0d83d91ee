"""Access history follows a sleep run's moves when the run lands (docs/index.md §3.3 ``onMove``; docs/store.md).

A run archives on its own branch (retention triage, reprieve, dedup folds, task sweeps), but ``state.access`` is
shared by every work tree, so a move is applied to it only when the run LANDS: ``sleep merge`` and
:func:`git_memhtml.sleep.landing.reconcile.reconcile_landed_runs` each call :func:`land_access_moves` once, with the
range the run brought onto the trunk. An aborted run never touches the plane.

The renames of ``base..tip`` (git's rename detection, :meth:`GitRepo.diff`) are the moves. A rename into
``archive/`` whose file at ``tip`` says ``superseded-by`` a live memory that exists at ``tip`` is a fold: the
history passes to that memory (:func:`git_memhtml.index.access.fold_access`, counts summed, instants maxed).
Every other rename carries the history to the new path (:func:`git_memhtml.index.access.rename_access`). Folds
are applied after plain moves, so a keeper's own move never strands the history folded into it.

A path without a row moves nothing, so applying a range twice, or a range whose moves the CLI already applied
(``archive``/``correct`` move the row at commit time), changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from git_memhtml.document.editors import get_meta
from git_memhtml.errors import MemhtmlError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.access import fold_access, rename_access
from git_memhtml.index.db import IndexDB
from git_memhtml.tree.layout import is_archived_path, is_indexable


@dataclass(frozen=True)
class AccessMoves:
    """What one landing did to ``state.access``: rows ``moved`` to a new path, rows ``folded`` into a keeper, and
    ``error`` (the message) when the range could not be read; the plane is then left as it was."""

    moved: int = 0
    folded: int = 0
    error: str | None = None


class _Landing(Protocol):
    @property
    def parents(self) -> Sequence[str]: ...


def landed_base(run_base: str | None, commit: _Landing | None) -> str | None:
    """Where the range a run brought onto the trunk starts: the run's recorded base, else (a teammate's run, no
    row here) the first parent of the trunk commit that brought its files. That is exact for a squash or a merge
    commit; for a fast-forward without a row only the report commit's own moves are seen (docs/store.md)."""
    if run_base:
        return run_base
    return commit.parents[0] if commit is not None and commit.parents else None


def fold_keeper(repo: GitRepo, tip: str, old: str, new: str) -> str | None:
    """The memory that ``old`` was folded into by the rename ``old → new`` at ``tip``, or ``None`` for a plain move.

    A fold is a move of a live memory into ``archive/`` whose ``memhtml-superseded-by`` at ``tip`` names a live,
    indexable memory present at ``tip`` (dedup's ``superseded-by`` → keeper).
    """
    if is_archived_path(old) or not is_archived_path(new):
        return None
    data = repo.read_path_at(tip, new)
    if data is None:
        return None
    href = get_meta(data.decode("utf-8", "replace"), "superseded-by")
    if not href:
        return None
    keeper = href.split("#", 1)[0].split("?", 1)[0].lstrip("/")
    if keeper in (old, new) or is_archived_path(keeper) or not is_indexable(keeper):
        return None
    return keeper if repo.read_path_at(tip, keeper) is not None else None


def land_access_moves(repo: GitRepo, db: IndexDB, base: str | None, tip: str | None) -> AccessMoves:
    """Apply the moves of ``base..tip`` to ``state.access`` (module docstring). Never raises: a failure is
    returned in ``error`` (a landing has already happened and must not be undone by its bookkeeping)."""
    if not base or not tip or base == tip:
        return AccessMoves()
    try:
        renames = [(c.old_path, c.path) for c in repo.diff(base, tip) if c.status == "R" and c.old_path]
        plain: list[tuple[str, str]] = []
        folds: list[tuple[str, str]] = []
        for old, new in renames:
            assert old is not None
            keeper = fold_keeper(repo, tip, old, new)
            if keeper is None:
                plain.append((old, new))
            else:
                folds.append((old, keeper))
        moved = sum(1 for old, new in plain if rename_access(db, old, new))
        folded = sum(1 for old, keeper in folds if fold_access(db, old, keeper))
    except MemhtmlError as exc:
        return AccessMoves(error=exc.message)
    return AccessMoves(moved, folded)
