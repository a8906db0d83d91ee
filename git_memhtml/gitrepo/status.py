"""The work tree and git's index: the status of uncommitted paths and the writes that stage or restore them.

:class:`WorkTree` is the part of :class:`~git_memhtml.gitrepo.repo.GitRepo` that compares and edits the work tree
and the index (a mixin: it reaches the repository through the attributes declared under ``TYPE_CHECKING``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pygit2
from pygit2.enums import FileStatus

from git_memhtml.errors import GitError, PathNotFound
from git_memhtml.gitrepo.plumbing import prune_empty_dirs, write_atomic
from git_memhtml.gitrepo.values import DirtyEntry

_DELETED = FileStatus.WT_DELETED | FileStatus.INDEX_DELETED

RESCAN_ATTEMPTS = 12
"""How many times a status or a stage is read again after libgit2 found a file changing under its hash
(docs/git.md §1.12)."""

RESCAN_PAUSE_S = 0.002
"""The first pause before a re-read, in seconds; it doubles each time, so the eleven pauses of twelve attempts
come to about 4 s (docs/git.md §1.12)."""

_T = TypeVar("_T")

_HASH_RACES = ("error reading file for hashing", "failed to read file into stream", "to stat: No such file")
"""libgit2's messages when a file changed between its ``stat`` and its read: shorter than the size it stat'ed, in a
status walk's hash (``git_odb__hashfd``) or a blob written from the work tree (``write_file_stream``, raised as
``pygit2.GitError``), or gone by the time ``git_index_add_bypath`` stats it (docs/git.md §1.12)."""


def _is_race(exc: Exception) -> bool:
    return any(marker in str(exc) for marker in _HASH_RACES)


def _settled(read: Callable[[], _T], what: str) -> _T:
    """Run ``read`` (a libgit2 walk that hashes work-tree files) until no file changes size under its hash.

    Another process replacing a tracked file between libgit2's ``stat`` and its read (an atomic write of another
    memory, a checkout) makes the whole walk fail; it is read again after a pause, up to :data:`RESCAN_ATTEMPTS`
    times.

    Raises:
        GitError: the work tree kept changing for every attempt (names ``what``, with a hint). OSError: any other
            failure of the disk or of git, at once.
    """
    pause, attempt = RESCAN_PAUSE_S, 1
    while True:
        try:
            return read()
        except (OSError, pygit2.GitError) as exc:
            if not _is_race(exc):
                raise
            if attempt == RESCAN_ATTEMPTS:
                raise GitError(f"{what}: work-tree files kept changing while git hashed them "
                               f"({RESCAN_ATTEMPTS} attempts)",
                               hint="another process is rewriting this work tree; run the command again when it "
                               "is done") from exc
        time.sleep(pause)
        pause, attempt = pause * 2, attempt + 1


class WorkTree:
    """The status of the work tree against git's index and HEAD, and the index edits of the commands."""

    if TYPE_CHECKING:
        _repo: pygit2.Repository
        root: Path

        def head_sha(self) -> str | None: ...

        def read_path_at(self, commit_sha: str, path: str) -> bytes | None: ...

        def _commit(self, sha: str) -> pygit2.Commit: ...

        def _reset_index_entries(self, commit: str | None, paths: Sequence[str], *,
                                 verified: Mapping[str, os.stat_result] | None = None,
                                 index_file: Path | None = ...) -> None: ...

    def dirty(self) -> list[DirtyEntry]:
        """Return uncommitted paths (staged, modified, deleted or untracked; ignored ones excluded), sorted.

        A walk that another process's rewrite of a file breaks is read again (:func:`_settled`).

        Raises:
            GitError: the work tree kept changing under every attempt.
        """
        status = _settled(self._repo.status, "git status")
        out = [
            DirtyEntry(path, bool(flags & _DELETED))
            for path, flags in status.items()
            if not flags & FileStatus.IGNORED
        ]
        return sorted(out, key=lambda e: e.path)

    # -- writes to the work tree and index -----------------------------------------------------------------
    def stage(self, paths: Iterable[str]) -> None:
        """Stage ``paths`` as they are on disk (a missing file is staged as a deletion).

        Raises:
            GitError: a file kept changing under its hash for every attempt (:func:`_settled`).
        """
        wanted = list(paths)
        index = self._repo.index
        attempts = 0

        def add_all() -> None:
            nonlocal attempts
            index.read(force=attempts > 0)  # a re-read after a failed attempt drops its half-done entries
            attempts += 1
            for path in wanted:
                if (self.root / path).is_file():
                    index.add(path)
                else:
                    try:
                        index.remove(path)
                    except (OSError, KeyError):
                        pass

        _settled(add_all, "git add")
        index.write()

    def move(self, src: str, dst: str, *, stage: bool = True) -> None:
        """``git mv src dst``: create parent folders, rename on disk, and stage both sides (unless ``stage=False``)."""
        source = self.root / src
        if not source.is_file():
            raise PathNotFound(f"{src}: no such file in the work tree", hint="run `git memhtml list`")
        target = self.root / dst
        target.parent.mkdir(parents=True, exist_ok=True)
        source.rename(target)
        if stage:
            self.stage([src, dst])

    def unstage_all(self) -> None:
        """Reset the index to HEAD without touching work-tree bytes (``git reset -q``)."""
        head = self.head_sha()
        index = self._repo.index
        if head is None:
            index.clear()
        else:
            index.read_tree(self._commit(head).tree)
        index.write()

    def restore_paths(self, paths: Iterable[str]) -> None:
        """Put ``paths`` back as HEAD has them: rewrite tracked files, delete untracked ones, and reset their index
        entries to HEAD's (other index entries are left as they are)."""
        head = self.head_sha()
        wanted = sorted(set(paths))
        for path in wanted:
            data = self.read_path_at(head, path) if head else None
            target = self.root / path
            if data is None:
                if target.is_file():
                    target.unlink()
                    prune_empty_dirs(target.parent, self.root)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(target, data)  # a status running beside us never reads a half-written file
        self._reset_index_entries(head, wanted)

    def staged_changes(self) -> bool:
        """Return whether the index differs from HEAD's tree."""
        index = self._repo.index
        index.read(force=False)
        tree = index.write_tree()
        head = self.head_sha()
        return head is None or tree != self._commit(head).tree_id
