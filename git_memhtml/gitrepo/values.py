"""Values the git choke point returns (no pygit2 needed to use them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Change:
    """One entry of a tree diff: ``status`` is git's letter (A, M, D, R, C, T); ``old_path`` is set for R/C."""

    status: str
    path: str
    old_path: str | None = None


@dataclass(frozen=True)
class TreeChange:
    """One path that differs between two trees, without rename pairing: the blob sha and git file mode on each
    side (``None`` where the path is absent on that side; modes as octal ints, ``0o100644`` a file, ``0o120000``
    a symlink, ``0o160000`` a submodule)."""

    path: str
    old_sha: str | None
    new_sha: str | None
    new_mode: int | None


@dataclass(frozen=True)
class TreeBlob:
    """One file entry of a commit's tree: its blob sha and git file mode (octal int: ``0o100644`` or ``0o100755`` a
    file, ``0o120000`` a symlink, whose blob is the link target)."""

    sha: str
    mode: int

    @property
    def link(self) -> bool:
        """Whether the entry is a symlink (mode ``120000``)."""
        return self.mode == LINK_MODE


LINK_MODE = 0o120000
"""Git's file mode of a symlink entry (git's ``S_IFLNK``, Documentation/technical/index-format.txt)."""


@dataclass(frozen=True)
class InMemoryMerge:
    """Result of :meth:`GitRepo.cherry_pick_in_memory`: the merged tree (``None`` while conflicts remain), every merged
    ``{path: blob sha}`` and the paths the resolver left conflicted."""

    tree_sha: str | None
    blobs: dict[str, str]
    unresolved: tuple[str, ...]


Resolver = Callable[[str, "bytes | None", "bytes | None", "bytes | None", Mapping[str, str]], "bytes | None"]
"""``(path, base, ours, theirs, merged blobs) -> merged bytes or None`` for :meth:`GitRepo.cherry_pick_in_memory`."""


@dataclass(frozen=True)
class DirtyEntry:
    """One uncommitted work-tree path (staged or not); ``deleted`` when it is gone from disk."""

    path: str
    deleted: bool
