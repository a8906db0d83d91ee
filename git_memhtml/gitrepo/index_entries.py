"""Index entries of a commit's paths, as git records them after a checkout (docs/store.md "How a commit is
built"): each path's blob and mode read from a tree with one subtree read per folder, the ``lstat`` of a file
that holds exactly its blob, and an entry added with that stat data so ``git status`` trusts it without re-hashing.
Split from gitrepo/committing.py (the module size rule)."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

try:  # pygit2's cffi internals: present in 1.15 to 1.21 (the versions tested); a later one may move them
    from pygit2.ffi import C as _libgit2_c
except ImportError:  # pragma: no cover - depends on the installed pygit2
    _libgit2_c = None


def stat_entries_supported(index: pygit2.Index) -> bool:
    """Whether this pygit2 lets :func:`index_add` set an entry's stat data on ``index``: ``IndexEntry._to_c``, the
    index's ``_index`` handle and libgit2's ``git_index_add`` through pygit2's cffi module. Without them an entry
    is added the public way, with no stat data: as correct (git and libgit2 then hash the file once to compare
    it), only slower for the first status after a write."""
    return (_libgit2_c is not None and hasattr(_libgit2_c, "git_index_add")
            and hasattr(pygit2.IndexEntry, "_to_c") and hasattr(index, "_index"))


def tree_entries(tree: pygit2.Tree | None, paths: Sequence[str]) -> dict[str, tuple[pygit2.Oid, int] | None]:
    """``{path: (blob id, file mode)}`` of ``paths`` in ``tree`` (``None`` where it holds no blob there). Each
    folder's tree object is read once: ``tree["a/b"]`` re-reads every subtree on the way for each path."""
    folders: dict[str, pygit2.Tree | None] = {"": tree}

    def folder(name: str) -> pygit2.Tree | None:
        if name not in folders:
            parent, _, leaf = name.rpartition("/")
            above = folder(parent)
            found = child(above, leaf) if above is not None else None
            folders[name] = found if isinstance(found, pygit2.Tree) else None
        return folders[name]

    out: dict[str, tuple[pygit2.Oid, int] | None] = {}
    for path in paths:
        parent, _, leaf = path.rpartition("/")
        holder = folder(parent)
        entry = child(holder, leaf) if holder is not None else None
        out[path] = (entry.id, int(entry.filemode)) if entry is not None and entry.type_str == "blob" else None
    return out


def child(tree: pygit2.Tree, name: str) -> pygit2.Object | None:
    """The entry ``name`` of ``tree``, or ``None``."""
    try:
        return tree[name]
    except KeyError:
        return None


def disk_stat(target: Path, blob: pygit2.Oid) -> os.stat_result | None:
    """The ``lstat`` of ``target`` when it is a regular file holding exactly blob ``blob`` (raw bytes, no filter),
    else ``None``."""
    try:
        info = os.lstat(target)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or str(pygit2.hash(target.read_bytes())) != str(blob):
        return None
    return info


def index_add(index: pygit2.Index, path: str, blob: pygit2.Oid, mode: int, info: os.stat_result | None) -> None:
    """Add the entry ``path`` → ``blob`` with ``info``'s stat data (none when ``None``), as git records it after a
    checkout: 32-bit truncated ctime/mtime seconds and nanoseconds, dev, ino, uid, gid and size (index-format(5)).
    pygit2's ``IndexEntry`` carries no stat fields, so they are set on its libgit2 struct (``git_index_entry``)
    before ``git_index_add``, which copies them. When this pygit2 does not expose those internals
    (:func:`stat_entries_supported`), the entry is added without stat data.

    Raises:
        pygit2.GitError: libgit2 refused the entry.
    """
    entry = pygit2.IndexEntry(path, blob, FileMode(mode))
    if info is None or _libgit2_c is None or not stat_entries_supported(index):
        index.add(entry)
        return
    centry, keep = entry._to_c()
    for when, ns in ((centry.ctime, info.st_ctime_ns), (centry.mtime, info.st_mtime_ns)):
        for part, value in (("seconds", ns // 1_000_000_000 & 0x7FFFFFFF), ("nanoseconds", ns % 1_000_000_000)):
            setattr(when, part, value)  # fields of the C struct, read by libgit2
    for field, value in (("dev", info.st_dev), ("ino", info.st_ino), ("uid", info.st_uid), ("gid", info.st_gid),
                         ("file_size", info.st_size)):
        setattr(centry, field, value & 0xFFFFFFFF)
    err = _libgit2_c.git_index_add(index._index, centry)
    del keep
    if err < 0:
        raise pygit2.GitError(f"git_index_add failed for {path} ({err})")


def index_remove(index: pygit2.Index, path: str) -> None:
    """Remove the entry ``path`` from ``index`` when it has one."""
    try:
        index.remove(path)
    except (OSError, KeyError):
        pass
