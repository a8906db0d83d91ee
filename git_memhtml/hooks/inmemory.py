"""Merges made by our own code (pygit2) regenerate generated artifacts in memory (docs/design.md §3.10; docs/git.md
§2.4, "pygit2 merges").

libgit2 runs no merge driver, so a conflicted ``index.html`` or ``sitemap.xml`` is re-rendered from the memories
of the *merged* tree (the exact answer, which the file-level driver cannot give: it only sees three versions of
one file), and the access sidecar is merged by its entries like the driver does. Any other conflict stays.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from git_memhtml.errors import InvalidMemory
from git_memhtml.gitrepo import GitRepo, InMemoryMerge
from git_memhtml.hooks.artifact_merge import artifact_kind, merge_artifact
from git_memhtml.sleep.publish import PublishRow, render_artifacts
from git_memhtml.store.layout import is_indexable


def rows_of_tree(blobs: Mapping[str, str], read_blob: Callable[[str], bytes]) -> list[PublishRow]:
    """Publish rows of every indexable memory among ``blobs`` (``{path: blob sha}``), path order; files that do
    not parse as memories are left out, as publish does."""
    from git_memhtml.document.parse import parse_memory  # noqa: PLC0415 - parser loaded only when needed

    rows: list[PublishRow] = []
    for path in sorted(blobs):
        if not is_indexable(path):
            continue
        try:
            doc = parse_memory(read_blob(blobs[path]), path=path)
        except InvalidMemory:
            continue
        rows.append(PublishRow(path, doc.title, doc.memory_type, doc.updated, doc.gist))
    return rows


def merge_generated_in_memory(repo: GitRepo, ours: str, theirs: str) -> InMemoryMerge:
    """Merge commit ``theirs`` into ``ours`` in memory, resolving generated artifacts (module docstring).

    Returns the :class:`InMemoryMerge`; ``unresolved`` lists the conflicts that are not generated artifacts.
    Raises ``GitError`` when a commit is missing.
    """
    cache: dict[str, dict[str, bytes]] = {}

    def resolve(path: str, base: bytes | None, mine: bytes | None, other: bytes | None,
                merged: Mapping[str, str]) -> bytes | None:
        kind = artifact_kind(path)
        if kind in ("listing", "sitemap"):
            if "artifacts" not in cache:
                cache["artifacts"] = render_artifacts(rows_of_tree(merged, repo.read_blob))
            if path in cache["artifacts"]:
                return cache["artifacts"][path]
        if kind is None or mine is None or other is None:
            return None
        return merge_artifact(path, base or b"", mine, other)

    def refresh(merged: Mapping[str, str]) -> dict[str, bytes]:
        """Existing listings and sitemap that differ from the merged tree's rendering (git merged identical
        sides without a conflict, e.g. an ancestor's subtree count)."""
        existing = [p for p in merged if artifact_kind(p) in ("listing", "sitemap")]
        if not existing:
            return {}
        if "artifacts" not in cache:
            cache["artifacts"] = render_artifacts(rows_of_tree(merged, repo.read_blob))
        fresh = cache["artifacts"]
        return {p: fresh[p] for p in existing if p in fresh and repo.read_blob(merged[p]) != fresh[p]}

    return repo.merge_in_memory(ours, theirs, resolve, refresh)
