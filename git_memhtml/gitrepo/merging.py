"""In-memory merges with a resolver for conflicted paths (libgit2 ignores configured merge drivers)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pygit2
from pygit2.enums import FileMode

from git_memhtml.gitrepo.values import InMemoryMerge, Resolver


def _blob(repo: pygit2.Repository, oid: pygit2.Oid) -> bytes:
    obj = repo.get(oid)
    assert isinstance(obj, pygit2.Blob)
    return obj.data


def cherry_pick_in_memory(
    repo: pygit2.Repository,
    commit: pygit2.Commit,
    onto: pygit2.Commit,
    resolve: Resolver,
    refresh: Callable[[Mapping[str, str]], Mapping[str, bytes]] | None = None,
) -> InMemoryMerge:
    """Apply ``commit``'s change (its parent → it) onto ``onto`` in memory: a three-way tree merge whose base is
    the commit's first parent, as ``git cherry-pick`` does, without touching the work tree, the index file or any
    ref. Nothing is written but blobs and (when resolved) the tree. ``commit`` must have a parent (the caller
    checks).

    libgit2 ignores configured merge drivers (docs/git.md §2.3 #7), so each conflicted path is handed to
    ``resolve(path, base, ours, theirs, merged)``: the three versions' bytes (``None`` when absent) and
    ``merged`` = ``{path: blob sha}`` of every cleanly merged entry. Returned bytes become the path's content
    (the conflict is dropped first: a stage-0 entry alone does not clear it, docs/git.md §2.4); ``None``
    leaves it unresolved. Once no conflict is left, ``refresh(merged)`` may return ``{path: bytes}`` to set on
    top (derived files that git merged cleanly but wrongly). The tree is written only when nothing is left
    unresolved.
    """
    index = repo.merge_trees(commit.parents[0].tree, onto.tree, commit.tree)
    return _resolve_index(repo, index, resolve, refresh)


def _resolve_index(
    repo: pygit2.Repository,
    index: pygit2.Index,
    resolve: Resolver,
    refresh: Callable[[Mapping[str, str]], Mapping[str, bytes]] | None,
) -> InMemoryMerge:
    """Hand each conflict of a merged ``index`` to ``resolve``, then ``refresh``; write the tree when none is left."""
    conflicts = index.conflicts
    pending: list[tuple[str, bytes | None, bytes | None, bytes | None, FileMode]] = []
    if conflicts is not None:
        for base_e, ours_e, theirs_e in list(conflicts):
            entry = ours_e or theirs_e or base_e
            assert entry is not None
            pending.append((
                entry.path,
                None if base_e is None else _blob(repo, base_e.id),
                None if ours_e is None else _blob(repo, ours_e.id),
                None if theirs_e is None else _blob(repo, theirs_e.id),
                FileMode((ours_e or theirs_e or entry).mode),
            ))
    merged = {e.path: str(e.id) for e in index}
    unresolved: list[str] = []
    for path, base_b, ours_b, theirs_b, mode in pending:
        data = resolve(path, base_b, ours_b, theirs_b, merged)
        if data is None:
            unresolved.append(path)
            continue
        del index.conflicts[path]
        blob = repo.create_blob(data)
        index.add(pygit2.IndexEntry(path, blob, mode))
        merged[path] = str(blob)
    if refresh is not None and not unresolved:
        for path, data in sorted(refresh(dict(merged)).items()):
            entry = index[path] if path in merged else None
            blob = repo.create_blob(data)
            index.add(pygit2.IndexEntry(path, blob, entry.mode if entry is not None else FileMode.BLOB))
            merged[path] = str(blob)
    tree = None if unresolved else str(index.write_tree(repo))
    return InMemoryMerge(tree, dict(sorted(merged.items())), tuple(sorted(unresolved)))
