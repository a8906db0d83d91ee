"""The work tree and git's index: the status of uncommitted paths and the writes that stage or restore them.

:class:`WorkTree` is the part of :class:`~git_memhtml.gitrepo.repo.GitRepo` that compares and edits the work tree
and the index (a mixin: it reaches the repository through the attributes declared under ``TYPE_CHECKING``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2
from pygit2.enums import FileStatus

from git_memhtml.errors import PathNotFound
from git_memhtml.gitrepo.plumbing import prune_empty_dirs
from git_memhtml.gitrepo.values import DirtyEntry

_DELETED = FileStatus.WT_DELETED | FileStatus.INDEX_DELETED


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
        """Return uncommitted paths (staged, modified, deleted or untracked; ignored ones excluded), sorted."""
        status = self._repo.status()
        out = [
            DirtyEntry(path, bool(flags & _DELETED))
            for path, flags in status.items()
            if not flags & FileStatus.IGNORED
        ]
        return sorted(out, key=lambda e: e.path)

    # -- writes to the work tree and index -----------------------------------------------------------------
    def stage(self, paths: Iterable[str]) -> None:
        """Stage ``paths`` as they are on disk (a missing file is staged as a deletion)."""
        index = self._repo.index
        index.read(force=False)
        for path in paths:
            if (self.root / path).is_file():
                index.add(path)
            else:
                try:
                    index.remove(path)
                except (OSError, KeyError):
                    pass
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
                target.write_bytes(data)
        self._reset_index_entries(head, wanted)

    def staged_changes(self) -> bool:
        """Return whether the index differs from HEAD's tree."""
        index = self._repo.index
        index.read(force=False)
        tree = index.write_tree()
        head = self.head_sha()
        return head is None or tree != self._commit(head).tree_id
