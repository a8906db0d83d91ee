"""Rebuild and incremental update of the index plane from git (docs/index.md §3.4, §3.6, §3.7, §3.8).

Git is the system of record: ``rebuild`` re-projects HEAD (plus the uncommitted work tree) into emptied index
tables; ``update`` applies the committed delta from the ``index_state.head_sha`` watermark to HEAD (renames move
rows and keep vectors, copies are adds), then the dirty work-tree files (uncommitted edits win), then moves the
watermark, then embeds every chunk lacking a vector. Embedding failures never fail a pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from git_memhtml.document.model import MemoryDocument
from git_memhtml.embed.base import Embedder
from git_memhtml.errors import (
    GitError,
    StorageError,
)
from git_memhtml.index.db import IndexDB
from git_memhtml.index.embedding import check_space, embed_missing
from git_memhtml.index.matrix import sync as sync_matrix
from git_memhtml.index.overlay import apply_worktree, disk_bytes, overlay_paths, refuse_committed_links, retry_refusals
from git_memhtml.index.project import is_indexable
from git_memhtml.index.source import DirtyPath, HeadBlobs, IndexedRepo, IndexPass, Parser, TreeChange, git_blob_sha
from git_memhtml.index.upsert import held_hashes, knowing, noting_hashes, project_bytes, upsert
from git_memhtml.index.watermark import index_state
from git_memhtml.index.write import delete_path, rename_path
from git_memhtml.pathnames import is_utf8_name
from git_memhtml.progress import NO_PROGRESS, Progress

REBUILD_TABLES: tuple[str, ...] = (
    "file_citations", "file_facets", "file_entities", "file_tags", "embeddings", "chunks", "edges", "files",
    "worktree_paths", "index_refusals",
)
"""Exactly what ``rebuild`` empties (docs/index.md §3.4); trace, run-state and ``state.*`` tables survive."""


@dataclass(frozen=True)
class IndexReport:
    """Outcome of one pass. Counts are files; ``errors`` = ``(path, "violation; violation")`` per skipped file;
    ``embed_error`` is the embedder's failure message when embedding stopped early (progress kept)."""

    head_sha: str | None
    rebuilt: bool
    added: int = 0
    modified: int = 0
    removed: int = 0
    renamed: int = 0
    skipped: int = 0
    embeddings_written: int = 0
    errors: tuple[tuple[str, str], ...] = ()
    embed_error: str | None = None


@dataclass(frozen=True)
class IndexStatus:
    """Freshness and size of the index: ``fresh`` when the watermark equals HEAD."""

    indexed_head: str | None
    head: str | None
    fresh: bool
    files: int
    archived: int
    chunks: int
    embeddings: int
    edges: int
    space: str | None


def _parser() -> Parser:
    """The default parser, imported on its first call: a pass with nothing to parse (a search on a fresh index)
    never loads html5lib or selectolax (issue 12 item 4)."""

    def parse_memory(*args: Any, **kwargs: Any) -> MemoryDocument:
        from git_memhtml.document.parse import parse_memory as parse  # noqa: PLC0415 - loaded on first use

        return parse(*args, **kwargs)

    return parse_memory


def _state(db: IndexDB) -> tuple[str | None, str | None]:
    state = index_state(db)
    return (state.head_sha, state.embed_model) if state else (None, None)


def _set_head(db: IndexDB, head: str | None, now: str, *, rebuilt: bool, space: str | None) -> None:
    db.execute("INSERT INTO index_state(id) VALUES (1) ON CONFLICT(id) DO NOTHING")
    if rebuilt:
        dim = int(space.rsplit("@", 1)[1]) if space else None
        db.execute(
            "UPDATE index_state SET head_sha = ?, embed_model = ?, embed_dim = ?, rebuilt_at = ?, updated_at = ? "
            "WHERE id = 1",
            (head, space, dim, now, now),
        )
    else:
        db.execute("UPDATE index_state SET head_sha = ?, updated_at = ? WHERE id = 1", (head, now))


def _report(head: str | None, run: IndexPass, rebuilt: bool, written: int, embed_error: str | None) -> IndexReport:
    return IndexReport(
        head_sha=head, rebuilt=rebuilt, added=run.added, modified=run.modified, removed=run.removed,
        renamed=run.renamed, skipped=len(run.errors), embeddings_written=written,
        errors=tuple(sorted(run.errors)), embed_error=embed_error,
    )


def rebuild(repo: IndexedRepo, db: IndexDB, embedder: Embedder | None, *, now: str,
            parse: Parser | None = None, progress: Progress = NO_PROGRESS) -> IndexReport:
    """Empty the rebuildable tables and re-project HEAD plus the dirty work tree; embed every chunk.

    One transaction for the whole projection (atomic: a crash leaves the previous index), then the embedding
    slices. ``progress`` gets the stage ``indexing`` (one item per committed file) and then ``embedding``.

    Records ``head_sha``, the embedder's space (``None`` when off), ``rebuilt_at``. Never raises for a bad
    file (reported in ``errors``) or an embedder failure (``embed_error``).

    Raises:
        StorageError: SQLite failed. GitError: the repository cannot be read.
    """
    parse = parse or _parser()
    head = repo.head_sha()
    blobs = HeadBlobs(repo, head)
    run = IndexPass()
    entries = repo.dirty()  # the status, before the write transaction (see update)
    with db.atomic():
        for table in REBUILD_TABLES:
            db.execute(f"DELETE FROM {table}")
        _set_head(db, head, now, rebuilt=True, space=embedder.space if embedder else None)
        files = sorted(blobs.listing().items())
        progress.stage("indexing", len(files))
        for path, sha in files:
            project_bytes(db, run, path, repo.read_blob(sha), sha, now, parse, count="added", fresh=True)
            progress.advance()
        progress.close()
        refuse_committed_links(db, run, blobs, None)
        overlay = apply_worktree(repo, db, run, blobs, now, parse, entries, ())
        retry_refusals(repo, db, run, blobs, overlay, now, parse, None)
    written, error = embed_missing(db, embedder, now=now, progress=progress)
    sync_matrix(db, full=True)  # a rebuild rewrites every row: one new file, every block re-checked
    return _report(head, run, True, written, error)


def update(repo: IndexedRepo, db: IndexDB, embedder: Embedder | None, *, now: str,
           parse: Parser | None = None, progress: Progress = NO_PROGRESS, worktree: bool = True,
           documents: Mapping[str, MemoryDocument] | None = None) -> IndexReport:
    """Bring the index from its watermark to HEAD + work tree (docs/index.md §3.7); rebuild when there is no watermark
    or the watermark commit is gone.

    Cost (docs/index.md §3.7 "Cost"): O(changed) in git objects, parses and index rows — the tree diff of
    watermark..HEAD, one tree look-up per changed path, the dirty and previously dirty work-tree files, and the
    refusals of the content hashes the pass touched — plus one work-tree status (``repo.dirty()``: libgit2 stats
    every tracked file against git's index, the one part that grows with the tree).

    ``progress`` gets the stage ``indexing`` (one item per changed committed path) and then ``embedding``; a pass
    that falls back to :func:`rebuild` reports as a rebuild.

    ``worktree=False`` (the post-commit hook, docs/hooks.md "Deferred work-tree status") projects only what the
    commits changed and leaves the work tree to the next full pass: no status is taken, the ``worktree_paths``
    overlay is kept as recorded (those paths are re-read by the next pass, which always touches them), and a
    committed path is written with HEAD's bytes. Every reader runs a full pass before it reads (``App.index``), so
    what it reads equals a rebuild over HEAD + work tree; the deferred pass only moves the parsing and embedding of
    the commit ahead of it. A rebuild (no watermark, or the watermark commit is gone) always reads the work tree.
    The writer's dedupe stays exact after a deferred pass: a row outside the overlay still describes the watermark
    commit (it was projected from HEAD's bytes, or is unchanged since a full pass saw it clean).

    ``documents`` (``{git blob id: document}``, a writer's :attr:`BatchResult.documents`) answers the parse of any
    file whose bytes have one of those ids (:func:`upsert.knowing`): the commit a writer just made is not parsed
    again, and the rows are what parsing writes.

    Raises:
        EmbedModelMismatch: the index holds vectors of another space (hint ``git memhtml index rebuild``).
        StorageError: SQLite failed. GitError: the repository cannot be read.
    """
    parse = knowing(parse or _parser(), documents or {})
    check_space(db, embedder)
    head = repo.head_sha()
    run = IndexPass()
    # the status walks every tracked file (the one part that grows with the tree): taken before the write
    # transaction, so other index writers never wait for it; it reads the disk, not the index
    entries: Sequence[DirtyPath] | None = repo.dirty() if worktree else None
    with db.atomic():  # one transaction: a reader (the writer's dedupe) sees the pass whole or not at all
        watermark, _ = _state(db)
        projected = watermark is not None and _project_changes(repo, db, run, watermark, head, now, parse, progress,
                                                                entries=entries)
    if not projected:
        return rebuild(repo, db, embedder, now=now, parse=parse, progress=progress)
    written, error = embed_missing(db, embedder, now=now, progress=progress)
    sync_matrix(db)
    return _report(head, run, False, written, error)


def _project_changes(repo: IndexedRepo, db: IndexDB, run: IndexPass, watermark: str, head: str | None, now: str,
                     parse: Parser, progress: Progress, *, entries: Sequence[DirtyPath] | None) -> bool:
    """The projection of :func:`update` inside its transaction: watermark..HEAD, the work tree (``entries``, the
    status; ``None`` defers it), the refusals, the new watermark. ``False`` (nothing written) when the watermark
    commit cannot be read: the caller rebuilds."""
    changes: Sequence[TreeChange] = ()
    if head is not None and head != watermark:
        try:
            changes = repo.tree_delta(watermark, head)
        except GitError:
            return False
    blobs = HeadBlobs(repo, head)
    previous = overlay_paths(db)
    touched = {c.path for c in changes} | {c.old_path for c in changes if c.old_path}
    touched |= {e.path for e in entries or ()} | previous
    freed = held_hashes(db, touched)
    parse = noting_hashes(parse, freed)
    blobs.fetch(c.path for c in changes if c.status != "D")
    renames = [c for c in changes if c.status == "R" and c.old_path]
    upserts: list[str] = []
    deletes: list[str] = []
    for c in changes:
        if c.status == "D":
            deletes.append(c.path)
        elif c.status == "R" and c.old_path:
            if not is_indexable(c.path):
                deletes.append(c.old_path)
        elif c.status in ("A", "C", "M", "T"):
            upserts.append(c.path)
    progress.stage("indexing", len(renames) + len(upserts))
    for c in renames:
        progress.advance()
        old, new = c.old_path or "", c.path
        if not is_indexable(new):
            continue
        moved = False
        if is_indexable(old) and is_utf8_name(old) and is_utf8_name(new):
            try:
                with db.atomic():
                    moved = rename_path(db, old, new)
            except StorageError:  # e.g. un-archived onto live duplicate content: drop old, project new
                with db.atomic():
                    if delete_path(db, old):
                        run.removed += 1
        sha = blobs.get(new)
        if moved:
            run.renamed += 1
            if sha is not None:  # always: the path itself feeds the projection (self-link edges are dropped)
                project_bytes(db, run, new, repo.read_blob(sha), sha, now, parse, count=None)
        elif sha is not None:
            upsert(db, run, new, repo.read_blob(sha), sha, now, parse)
    for path in upserts:
        progress.advance()
        sha = blobs.get(path)
        if sha is not None:
            upsert(db, run, path, repo.read_blob(sha), sha, now, parse)
    progress.close()
    for path in deletes:
        if is_indexable(path) and is_utf8_name(path):
            with db.atomic():
                if delete_path(db, path):
                    run.removed += 1
    if changes:
        refuse_committed_links(db, run, blobs, [c.path for c in changes if c.status != "D"])
    if entries is not None:
        overlay = apply_worktree(repo, db, run, blobs, now, parse, entries, previous)
    else:  # deferred: the recorded overlay stands until the next full pass re-reads it
        overlay = frozenset(previous)
    retry_refusals(repo, db, run, blobs, overlay, now, parse, freed)
    _set_head(db, head, now, rebuilt=False, space=None)
    return True


def reproject_paths(repo: IndexedRepo, db: IndexDB, paths: Sequence[str], *, now: str,
                    parse: Parser | None = None) -> IndexReport:
    """Drop the rows of ``paths`` and project them again from HEAD + work tree (the repair of ``doctor --fix``
    for drifted rows); a path the tree lacks stays dropped. Embeds nothing; the watermark is unchanged. Reads one
    tree entry per path and one work-tree status.

    Raises:
        StorageError: SQLite failed. GitError: the repository cannot be read.
    """
    parse = parse or _parser()
    run = IndexPass()
    dirty = {d.path: d.deleted for d in repo.dirty()}  # before the transaction, as update's status
    with db.atomic():  # one transaction, as update's
        blobs = HeadBlobs(repo, repo.head_sha())
        wanted = sorted(set(paths))
        freed = held_hashes(db, wanted)
        parse = noting_hashes(parse, freed)
        blobs.fetch(wanted)
        for path in wanted:
            with db.atomic():
                delete_path(db, path)
            if not is_indexable(path) or dirty.get(path):
                continue
            data = disk_bytes(repo, db, run, path) if path in dirty else None
            if data is not None:
                project_bytes(db, run, path, data, git_blob_sha(data), now, parse, count="added")
            elif path not in dirty:
                sha = blobs.get(path)
                if sha is not None:
                    project_bytes(db, run, path, repo.read_blob(sha), sha, now, parse, count="added")
        overlaid = [(p,) for p in wanted if p in dirty and is_indexable(p) and is_utf8_name(p)]
        db.executemany("INSERT INTO worktree_paths(path) VALUES (?) ON CONFLICT(path) DO NOTHING", overlaid)
        retry_refusals(repo, db, run, blobs, frozenset(dirty), now, parse, freed)
    return _report(_state(db)[0], run, False, 0, None)


def status(repo: IndexedRepo, db: IndexDB) -> IndexStatus:
    """Return the watermark, HEAD, freshness and row counts of the index (reads only)."""
    indexed, space = _state(db)
    head = repo.head_sha()
    counts = db.query_one(
        "SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM files WHERE archived = 1), "
        "(SELECT count(*) FROM chunks), (SELECT count(*) FROM embeddings), (SELECT count(*) FROM edges)"
    ) or (0, 0, 0, 0, 0)
    return IndexStatus(
        indexed_head=indexed, head=head, fresh=indexed is not None and indexed == head,
        files=counts[0], archived=counts[1], chunks=counts[2], embeddings=counts[3], edges=counts[4], space=space,
    )
