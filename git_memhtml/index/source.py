"""What an index pass reads and counts (docs/index.md §3.7): the repository as the indexer sees it
(:class:`IndexedRepo`, a protocol that :class:`~git_memhtml.gitrepo.GitRepo` and the pinned commit view of
:mod:`git_memhtml.index.snapshot` both satisfy), HEAD's tree looked up path by path (:class:`HeadBlobs`), the
tallies of one pass (:class:`IndexPass`) and git's blob id of bytes."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from git_memhtml.document.model import MemoryDocument
from git_memhtml.index.project import is_indexable


class TreeChange(Protocol):
    """One change of a tree diff (``gitrepo.Change``): ``status`` A/C/M/T/D/R, the path, a rename's old path."""

    @property
    def status(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def old_path(self) -> str | None: ...


class DirtyPath(Protocol):
    """One work-tree path that differs from HEAD (``gitrepo.DirtyEntry``); ``deleted`` when nothing is there."""

    @property
    def path(self) -> str: ...
    @property
    def deleted(self) -> bool: ...


class TreeEntry(Protocol):
    """One tree entry (``gitrepo.TreeBlob``): its blob sha, and whether it is a symlink (mode 120000)."""

    @property
    def sha(self) -> str: ...
    @property
    def link(self) -> bool: ...


class IndexedRepo(Protocol):
    """The reads an index pass makes of a repository: HEAD, tree listings and look-ups, blobs, tree diffs, and
    the work-tree status (``dirty``; empty for a pinned commit view)."""

    @property
    def root(self) -> Path: ...
    def head_sha(self) -> str | None: ...
    def tree_files(self, commit_sha: str, prefixes: Sequence[str] = ...) -> Mapping[str, TreeEntry]: ...
    def blobs_at(self, commit_sha: str, paths: Iterable[str]) -> Mapping[str, TreeEntry]: ...
    def read_blob(self, sha: str) -> bytes: ...
    def tree_delta(self, a_sha: str, b_sha: str) -> Sequence[TreeChange]: ...
    def dirty(self) -> Sequence[DirtyPath]: ...


Parser = Callable[..., MemoryDocument]


@dataclass
class IndexPass:
    """Tallies of one pass, in files; ``errors`` is ``[(path, why)]`` of the files it skipped or refused."""

    added: int = 0
    modified: int = 0
    removed: int = 0
    renamed: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)


def git_blob_sha(data: bytes) -> str:
    """Return git's blob id of ``data`` (``sha1("blob <len>\\0" + data)``), as ``git hash-object`` would."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class HeadBlobs:
    """HEAD's tree as a pass reads it. :meth:`get` and :meth:`is_link` look paths up one by one (cached; one libgit2
    tree look-up each, ``repo.blobs_at``), so an incremental pass costs what it touches; :meth:`listing` and
    :meth:`links` read the whole tree once (``repo.tree_files``, a rebuild). ``head`` ``None`` (an unborn branch)
    holds nothing."""

    def __init__(self, repo: IndexedRepo, head: str | None) -> None:
        self._repo = repo
        self._head = head
        self._entries: dict[str, TreeEntry | None] = {}
        self._full: Mapping[str, TreeEntry] | None = None

    def fetch(self, paths: Iterable[str]) -> None:
        """Look every path of ``paths`` not yet known up in one call (no-op once the whole tree is read)."""
        if self._full is not None:
            return
        todo = [p for p in dict.fromkeys(paths) if p not in self._entries]
        if not todo:
            return
        found = self._repo.blobs_at(self._head, todo) if self._head is not None else {}
        for path in todo:
            self._entries[path] = found.get(path)

    def _entry(self, path: str) -> TreeEntry | None:
        if self._full is not None:
            return self._full.get(path)
        self.fetch((path,))
        return self._entries[path]

    def get(self, path: str) -> str | None:
        """The blob sha of ``path`` when HEAD holds it as an indexable regular file, else ``None`` (absent, a folder,
        a symlink, or not a memory path)."""
        if not is_indexable(path):
            return None
        entry = self._entry(path)
        return None if entry is None or entry.link else entry.sha

    def is_link(self, path: str) -> bool:
        """Whether HEAD commits ``path`` as a symlink (mode ``120000``)."""
        entry = self._entry(path)
        return entry is not None and entry.link

    def _tree(self) -> Mapping[str, TreeEntry]:
        if self._full is None:
            self._full = self._repo.tree_files(self._head, ()) if self._head is not None else {}
        return self._full

    def listing(self) -> dict[str, str]:
        """``{path: blob sha}`` of every indexable regular file of HEAD (reads the whole tree once)."""
        return {p: e.sha for p, e in self._tree().items() if not e.link and is_indexable(p)}

    def links(self) -> list[str]:
        """Every path HEAD commits as a symlink, sorted (reads the whole tree once)."""
        return sorted(p for p, e in self._tree().items() if e.link)
