"""Rebuild and incremental update of the index plane from git (docs/index.md §3.4, §3.6, §3.7, §3.8).

Git is the system of record: ``rebuild`` re-projects HEAD (plus the uncommitted work tree) into emptied index
tables; ``update`` applies the committed delta from the ``index_state.head_sha`` watermark to HEAD (renames move
rows and keep vectors, copies are adds), then the dirty work-tree files (uncommitted edits win), then moves the
watermark, then embeds every chunk lacking a vector. Embedding failures never fail a pass.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from git_memhtml.document.model import PARA_BUCKETS, MemoryDocument
from git_memhtml.embed.base import Embedder
from git_memhtml.errors import (
    DuplicateContent,
    EmbedModelMismatch,
    GitError,
    InvalidMemory,
    MemhtmlError,
    PathRefused,
    StorageError,
)
from git_memhtml.index.active import ACTIVE_MEMORY, active_memory
from git_memhtml.index.db import IndexDB
from git_memhtml.index.matrix import sync as sync_matrix
from git_memhtml.index.project import is_indexable, project
from git_memhtml.index.watermark import index_state
from git_memhtml.index.write import delete_path, refuse, rename_path, stored_article, write_projection
from git_memhtml.pathnames import NOT_UTF8, is_utf8_name, shown_name
from git_memhtml.progress import NO_PROGRESS, Progress
from git_memhtml.tree.paths import SYMLINK_REFUSED, read_tree_file, tree_file_problem

EMBED_SLICE = 960
"""Chunks per embedder call and per persisted transaction (docs/index.md §3.7 step 7)."""
REBUILD_TABLES: tuple[str, ...] = (
    "file_citations", "file_facets", "file_entities", "file_tags", "embeddings", "chunks", "edges", "files",
    "worktree_paths", "index_refusals",
)
"""Exactly what ``rebuild`` empties (docs/index.md §3.4); trace, run-state and ``state.*`` tables survive."""
REBUILD_HINT = "git memhtml index rebuild"
COMMITTED_LINK = f"is committed as a symlink: {SYMLINK_REFUSED}"
"""The error of a path whose tree entry is a symlink (mode 120000): its blob is a link target, never a memory."""


class _Change(Protocol):
    @property
    def status(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def old_path(self) -> str | None: ...


class _Dirty(Protocol):
    @property
    def path(self) -> str: ...
    @property
    def deleted(self) -> bool: ...


class _TreeEntry(Protocol):
    @property
    def sha(self) -> str: ...
    @property
    def link(self) -> bool: ...


class _Repo(Protocol):
    @property
    def root(self) -> Path: ...
    def head_sha(self) -> str | None: ...
    def tree_files(self, commit_sha: str, prefixes: Sequence[str] = ...) -> Mapping[str, _TreeEntry]: ...
    def blobs_at(self, commit_sha: str, paths: Iterable[str]) -> Mapping[str, _TreeEntry]: ...
    def read_blob(self, sha: str) -> bytes: ...
    def tree_delta(self, a_sha: str, b_sha: str) -> Sequence[_Change]: ...
    def dirty(self) -> Sequence[_Dirty]: ...


Parser = Callable[..., MemoryDocument]


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


@dataclass
class _Pass:
    added: int = 0
    modified: int = 0
    removed: int = 0
    renamed: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)


def git_blob_sha(data: bytes) -> str:
    """Return git's blob id of ``data`` (``sha1("blob <len>\\0" + data)``), as ``git hash-object`` would."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


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


def check_space(db: IndexDB, embedder: Embedder | None) -> None:
    """Refuse an embedder whose space differs from the one recorded in ``index_state`` (docs/index.md §3.8).

    Raises:
        EmbedModelMismatch: hint ``git memhtml index rebuild``.
    """
    if embedder is None:
        return
    recorded = _state(db)[1]
    if recorded is not None and recorded != embedder.space:
        raise EmbedModelMismatch(
            f"the index holds vectors of {recorded} but the configured embedder is {embedder.space}",
            hint=REBUILD_HINT,
        )


def _indexed_blob(db: IndexDB, path: str) -> str | None:
    row = db.query_one("SELECT blob_sha FROM files WHERE path = ?", (path,))
    return None if row is None else str(row[0])


def _bad_name(run: _Pass, path: str) -> bool:
    """True (and one ``(shown path, NOT_UTF8)`` error, once per path) when ``path`` is not UTF-8: SQLite cannot
    store it, so the file is skipped, never projected."""
    if is_utf8_name(path):
        return False
    entry = (shown_name(path), NOT_UTF8)
    if entry not in run.errors:
        run.errors.append(entry)
    return True


def _project_bytes(db: IndexDB, run: _Pass, path: str, data: bytes, blob_sha: str, now: str, parse: Parser,
                   *, count: str | None, fresh: bool = False) -> bool:
    """Parse and write one file; ``count`` is the counter bumped on success (``added``/``modified``/None).

    The index plane is a function of the tree, never of the order of writes (issue 4 item 6): a file that does
    not parse loses any stale rows and is reported in ``run.errors``; of live non-task files with the same
    content the smallest path is indexed (a smaller newcomer evicts the holder) and the others are remembered in
    ``index_refusals`` and re-tried by :func:`_retry_refusals` when the holder goes. A path that is not UTF-8 is
    skipped with the error ``(shown path, "file name is not UTF-8")``.

    A file already indexed (``count`` is not ``"added"``) hands its stored article (:func:`stored_article`) to
    ``parse`` as ``reuse``: a head-only rewrite whose article bytes are unchanged is not extracted again, and its
    chunks (content-keyed) keep their vectors (docs/index.md "Head-only rewrites"). ``fresh`` (a rebuild's pass
    over emptied tables) writes without first reading or deleting earlier rows of the path."""
    if _bad_name(run, path):
        return False
    reuse = stored_article(db, path) if count != "added" else None
    try:
        doc = parse(data, path=path) if reuse is None else parse(data, path=path, reuse=reuse)
    except InvalidMemory as exc:
        with db.atomic():
            delete_path(db, path)
        run.errors.append((path, "; ".join(exc.violations) or exc.message))
        return False
    proj = project(doc, path=path, blob_sha=blob_sha, now=now)
    for _ in range(2):
        try:
            with db.atomic():
                write_projection(db, proj, now=now, fresh=fresh)
            break
        except DuplicateContent as exc:
            holder = _live_holder(db, doc.content_hash, path)
            with db.atomic():
                if holder is not None and path < holder:
                    refuse(db, holder, doc.content_hash)
                    run.errors.append((holder, f"{holder} has the same content as {path}"))
                    continue
                refuse(db, path, doc.content_hash)
            run.errors.append((path, exc.message))
            return False
    else:  # pragma: no cover - the eviction above frees the content, so the second write cannot collide
        return False
    if count == "added":
        run.added += 1
    elif count == "modified":
        run.modified += 1
    return True


def _live_holder(db: IndexDB, content_hash: str, path: str) -> str | None:
    row = db.query_one(
        f"SELECT path FROM files WHERE content_hash = ? AND {ACTIVE_MEMORY} AND path <> ?",
        (content_hash, path),
    )
    return None if row is None else str(row[0])


def _upsert(db: IndexDB, run: _Pass, path: str, data: bytes, blob_sha: str, now: str, parse: Parser) -> None:
    """Project ``path`` unless the index already holds exactly this blob there."""
    if _bad_name(run, path):
        return
    indexed = _indexed_blob(db, path)
    if indexed == blob_sha:
        return
    _project_bytes(db, run, path, data, blob_sha, now, parse, count="added" if indexed is None else "modified")


def _retry_refusals(repo: _Repo, db: IndexDB, run: _Pass, head: _HeadBlobs, overlay: Collection[str], now: str,
                    parse: Parser, hashes: Collection[str] | None) -> None:
    """Re-try, smallest path first, every refused file whose content no smaller live path holds any more (the
    holder was deleted, archived, moved or edited in this pass). ``hashes`` limits the search to refusals of those
    content hashes (what the paths this pass touched held before it, and what it parsed: a holder can only go by
    being touched, see :func:`_noting_hashes`); ``None`` searches every refusal (a rebuild), and an empty
    ``hashes`` costs nothing. A path of ``overlay`` (the dirty work-tree paths) is read from the work tree; any
    other is clean, so its bytes are HEAD's blob and the work tree is not read (docs/index.md §3.7 step 5): a pass
    over a tree with no work tree (index/snapshot.py) never touches one."""
    free = (f"NOT EXISTS (SELECT 1 FROM files f WHERE f.content_hash = r.content_hash AND {active_memory('f')} "
            "AND f.path < r.path)")
    if hashes is None:
        rows = db.query(f"SELECT r.path FROM index_refusals r WHERE {free} ORDER BY r.path")
    else:
        found: set[str] = set()
        wanted = sorted(set(hashes))
        for start in range(0, len(wanted), SQL_VARS):
            part = wanted[start : start + SQL_VARS]
            found.update(r[0] for r in db.query(
                f"SELECT r.path FROM index_refusals r WHERE r.content_hash IN ({', '.join('?' * len(part))}) "
                f"AND {free}", part))
        rows = [(path,) for path in sorted(found)]
    for (path,) in rows:
        if path in overlay:
            data = _disk_bytes(repo, db, run, path)
        else:
            blob = head.get(path)
            data = None if blob is None else repo.read_blob(blob)
        if data is None:
            with db.atomic():
                db.execute("DELETE FROM index_refusals WHERE path = ?", (path,))
            continue
        _project_bytes(db, run, path, data, git_blob_sha(data), now, parse, count="added")
    if rows:
        run.errors[:] = [(p, why) for p, why in run.errors if _indexed_blob(db, p) is None]


SQL_VARS = 500
"""Host parameters per ``IN (…)`` list: well under SQLite's 32,766 default limit (sqlite.org/limits.html §9)."""


def _held_hashes(db: IndexDB, paths: Iterable[str]) -> set[str]:
    """The content hashes the index rows of ``paths`` hold now (one indexed look-up per path): taken before a pass
    touches those paths, they are the only hashes whose refusals the pass can free (:func:`_retry_refusals`)."""
    wanted = sorted({p for p in paths if is_utf8_name(p)})
    out: set[str] = set()
    for start in range(0, len(wanted), SQL_VARS):
        part = wanted[start : start + SQL_VARS]
        out.update(str(r[0]) for r in db.query(
            f"SELECT content_hash FROM files WHERE path IN ({', '.join('?' * len(part))})", part))
    return out


def _noting_hashes(parse: Parser, hashes: set[str]) -> Parser:
    """``parse``, adding the content hash of every document it returns to ``hashes``: a refusal the pass makes
    (the refused file, or a holder a smaller newcomer evicts) carries the hash of a document the pass parsed, and a
    row the pass writes and later drops within the same pass held one too, so these and the hashes the touched
    paths held before the pass (:func:`_held_hashes`) are every hash whose refusals the pass can free."""

    def noting(data: bytes, *, path: str, **options: Any) -> MemoryDocument:
        doc = parse(data, path=path, **options)  # options: the parser's own keywords (``reuse=`` ...)
        hashes.add(doc.content_hash)
        return doc

    return noting


def _overlay(db: IndexDB) -> set[str]:
    """The ``worktree_paths`` overlay the last pass recorded."""
    return {str(r[0]) for r in db.query("SELECT path FROM worktree_paths")}


def _apply_worktree(repo: _Repo, db: IndexDB, run: _Pass, head: _HeadBlobs, now: str, parse: Parser,
                    entries: Sequence[_Dirty], previous: Collection[str]) -> frozenset[str]:
    """Project the dirty indexable files ``entries`` (``repo.dirty()``; adds first, deletes last so moved chunks
    keep their vectors); restore from HEAD any path of ``previous`` (the overlay the last pass recorded) that is
    clean again. Returns the dirty indexable paths, the new ``worktree_paths`` overlay (rewritten only when it
    changed). Cost: O(dirty + previous) rows and files, whatever the size of the tree."""
    for entry in entries:  # a linked folder (or a link of another name) in a bucket: reported, never entered
        if not is_indexable(entry.path) and not entry.deleted and _in_bucket(entry.path) \
                and os.path.islink(repo.root / entry.path):
            _refuse_link(db, run, entry.path, f"is a symlink: {SYMLINK_REFUSED}")
    dirty = [d for d in entries if is_indexable(d.path)]
    dirty_paths = {d.path for d in dirty}
    deletes: list[str] = []
    for entry in dirty:
        data = None if entry.deleted else _disk_bytes(repo, db, run, entry.path)
        if data is None:
            deletes.append(entry.path)
            continue
        _upsert(db, run, entry.path, data, git_blob_sha(data), now, parse)
    for path in deletes:
        if not is_utf8_name(path):  # never indexed
            continue
        with db.atomic():
            if delete_path(db, path):
                run.removed += 1
    dirty_paths = {p for p in dirty_paths if is_utf8_name(p)}
    clean_again = sorted(set(previous) - dirty_paths)
    head.fetch(clean_again)
    for path in clean_again:
        blob = head.get(path)
        if blob is None:
            with db.atomic():
                if delete_path(db, path):
                    run.removed += 1
        else:
            _upsert(db, run, path, repo.read_blob(blob), blob, now, parse)
    if dirty_paths != set(previous):
        with db.atomic():
            db.execute("DELETE FROM worktree_paths")
            db.executemany("INSERT INTO worktree_paths(path) VALUES (?)", [(p,) for p in sorted(dirty_paths)])
    return frozenset(dirty_paths)


def _disk_bytes(repo: _Repo, db: IndexDB, run: _Pass, path: str) -> bytes | None:
    """The work-tree bytes of ``path``, read without following a symlink anywhere on the way; ``None`` when no
    regular file is there. A symlink (or a folder symlink on the way, or a non-regular file) is never read: its
    rows are dropped and it is reported once in ``run.errors`` as ``(path, "is a symlink: refused, …")``."""
    problem = tree_file_problem(repo.root, path)
    if problem is None:
        try:
            return read_tree_file(repo.root, path)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except PathRefused as exc:  # replaced by a link between the check and the open
            problem = exc.message
    _refuse_link(db, run, path, problem)
    return None


def _refuse_link(db: IndexDB, run: _Pass, path: str, problem: str) -> None:
    if is_utf8_name(path):  # a name SQLite cannot hold was never indexed
        with db.atomic():
            if delete_path(db, path):
                run.removed += 1
    entry = (shown_name(path), problem)
    if entry not in run.errors:
        run.errors.append(entry)


def _refuse_committed_links(db: IndexDB, run: _Pass, head: _HeadBlobs, paths: Iterable[str] | None) -> None:
    """Report (and drop the rows of) every indexable or bucket path HEAD commits as a symlink; ``paths`` limits
    the check to those paths (an incremental pass: one tree look-up each), ``None`` checks the whole tree (a
    rebuild)."""
    links = head.links() if paths is None else [p for p in sorted(set(paths)) if head.is_link(p)]
    for path in links:
        if is_indexable(path) or _in_bucket(path):
            _refuse_link(db, run, path, COMMITTED_LINK)


def _in_bucket(path: str) -> bool:
    return path.split("/", 1)[0] in PARA_BUCKETS


class _HeadBlobs:
    """HEAD's tree as a pass reads it. :meth:`get` and :meth:`is_link` look paths up one by one (cached; one libgit2
    tree look-up each, ``repo.blobs_at``), so an incremental pass costs what it touches; :meth:`listing` and
    :meth:`links` read the whole tree once (``repo.tree_files``, a rebuild). ``head`` ``None`` (an unborn branch)
    holds nothing."""

    def __init__(self, repo: _Repo, head: str | None) -> None:
        self._repo = repo
        self._head = head
        self._entries: dict[str, _TreeEntry | None] = {}
        self._full: Mapping[str, _TreeEntry] | None = None

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

    def _entry(self, path: str) -> _TreeEntry | None:
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

    def _tree(self) -> Mapping[str, _TreeEntry]:
        if self._full is None:
            self._full = self._repo.tree_files(self._head, ()) if self._head is not None else {}
        return self._full

    def listing(self) -> dict[str, str]:
        """``{path: blob sha}`` of every indexable regular file of HEAD (reads the whole tree once)."""
        return {p: e.sha for p, e in self._tree().items() if not e.link and is_indexable(p)}

    def links(self) -> list[str]:
        """Every path HEAD commits as a symlink, sorted (reads the whole tree once)."""
        return sorted(p for p, e in self._tree().items() if e.link)


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


def _unembedded(db: IndexDB) -> list[tuple[str, str]]:
    """``(chunk_id, text)`` of every chunk without a vector, by chunk id. Cost: what is missing, not the index
    (issue 12: a one-file pass at 100k spent ~50-70 ms joining every chunk). ``embeddings`` rows reference
    ``chunks`` (foreign keys on, cascading deletes: migration 0003), so the difference of the two counts is the
    exact number of chunks lacking one; the join then walks the newest chunks first (a pass's new chunks are the
    last inserted) and stops after that many. A negative difference (orphan vectors, which the schema forbids)
    falls back to the full join."""
    row = db.query_one("SELECT (SELECT count(*) FROM chunks) - (SELECT count(*) FROM embeddings)")
    missing = int(row[0]) if row else -1
    if missing == 0:
        return []
    join = ("SELECT c.chunk_id, c.text FROM chunks c LEFT JOIN embeddings e ON e.chunk_id = c.chunk_id "
            "WHERE e.chunk_id IS NULL")
    if missing < 0:
        rows = db.query(join + " ORDER BY c.chunk_id")
    else:
        rows = sorted(db.query(join + " ORDER BY c.rowid DESC LIMIT ?", (missing,)))
    return [(str(cid), str(text)) for cid, text in rows]


def embed_missing(db: IndexDB, embedder: Embedder | None, *, now: str,
                  progress: Progress = NO_PROGRESS) -> tuple[int, str | None]:
    """Embed every chunk lacking a vector, :data:`EMBED_SLICE` chunks per call, each slice committed on its own;
    ``progress`` gets the stage ``embedding`` (chunks), advanced per slice.

    Records the embedder's space in ``index_state`` with the first vectors. Returns ``(vectors written, error
    message or None)``; an embedder failure stops the loop but keeps earlier slices (docs/index.md §3.7 step 7).
    """
    if embedder is None:
        return 0, None
    check_space(db, embedder)
    todo = _unembedded(db)
    written = 0
    if todo:
        progress.stage("embedding", len(todo))
    for start in range(0, len(todo), EMBED_SLICE):
        batch = todo[start : start + EMBED_SLICE]
        try:
            vecs = np.asarray(embedder.embed([t for _, t in batch]), dtype="<f4")
            if vecs.shape != (len(batch), embedder.dim):
                raise ValueError(f"embedder returned shape {vecs.shape}, expected {(len(batch), embedder.dim)}")
        except (MemhtmlError, Exception) as exc:
            progress.close()
            return written, f"{type(exc).__name__}: {exc}"
        with db.atomic():
            db.execute("INSERT INTO index_state(id) VALUES (1) ON CONFLICT(id) DO NOTHING")
            db.execute(
                "UPDATE index_state SET embed_model = ?, embed_dim = ? WHERE id = 1 AND embed_model IS NULL",
                (embedder.space, embedder.dim),
            )
            db.executemany(
                "INSERT INTO embeddings(chunk_id, model, dim, vec, created_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(chunk_id) DO UPDATE SET model = excluded.model, dim = excluded.dim, "
                "vec = excluded.vec, created_at = excluded.created_at",
                [(cid, embedder.space, embedder.dim, vec.tobytes(), now) for (cid, _), vec in zip(batch, vecs,
                                                                                                  strict=True)],
            )
        written += len(batch)
        progress.advance(len(batch))
    progress.close()
    return written, None


def _report(head: str | None, run: _Pass, rebuilt: bool, written: int, embed_error: str | None) -> IndexReport:
    return IndexReport(
        head_sha=head, rebuilt=rebuilt, added=run.added, modified=run.modified, removed=run.removed,
        renamed=run.renamed, skipped=len(run.errors), embeddings_written=written,
        errors=tuple(sorted(run.errors)), embed_error=embed_error,
    )


def rebuild(repo: _Repo, db: IndexDB, embedder: Embedder | None, *, now: str,
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
    blobs = _HeadBlobs(repo, head)
    run = _Pass()
    with db.atomic():
        for table in REBUILD_TABLES:
            db.execute(f"DELETE FROM {table}")
        _set_head(db, head, now, rebuilt=True, space=embedder.space if embedder else None)
        files = sorted(blobs.listing().items())
        progress.stage("indexing", len(files))
        for path, sha in files:
            _project_bytes(db, run, path, repo.read_blob(sha), sha, now, parse, count="added", fresh=True)
            progress.advance()
        progress.close()
        _refuse_committed_links(db, run, blobs, None)
        overlay = _apply_worktree(repo, db, run, blobs, now, parse, repo.dirty(), ())
        _retry_refusals(repo, db, run, blobs, overlay, now, parse, None)
    written, error = embed_missing(db, embedder, now=now, progress=progress)
    sync_matrix(db)
    return _report(head, run, True, written, error)


def update(repo: _Repo, db: IndexDB, embedder: Embedder | None, *, now: str,
           parse: Parser | None = None, progress: Progress = NO_PROGRESS, worktree: bool = True) -> IndexReport:
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

    Raises:
        EmbedModelMismatch: the index holds vectors of another space (hint ``git memhtml index rebuild``).
        StorageError: SQLite failed. GitError: the repository cannot be read.
    """
    parse = parse or _parser()
    check_space(db, embedder)
    watermark, _ = _state(db)
    if watermark is None:
        return rebuild(repo, db, embedder, now=now, parse=parse, progress=progress)
    head = repo.head_sha()
    changes: Sequence[_Change] = ()
    if head is not None and head != watermark:
        try:
            changes = repo.tree_delta(watermark, head)
        except GitError:
            return rebuild(repo, db, embedder, now=now, parse=parse, progress=progress)
    blobs = _HeadBlobs(repo, head)
    run = _Pass()
    entries: Sequence[_Dirty] = repo.dirty() if worktree else ()
    previous = _overlay(db)
    touched = {c.path for c in changes} | {c.old_path for c in changes if c.old_path}
    touched |= {e.path for e in entries} | previous
    freed = _held_hashes(db, touched)
    parse = _noting_hashes(parse, freed)
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
                _project_bytes(db, run, new, repo.read_blob(sha), sha, now, parse, count=None)
        elif sha is not None:
            _upsert(db, run, new, repo.read_blob(sha), sha, now, parse)
    for path in upserts:
        progress.advance()
        sha = blobs.get(path)
        if sha is not None:
            _upsert(db, run, path, repo.read_blob(sha), sha, now, parse)
    progress.close()
    for path in deletes:
        if is_indexable(path) and is_utf8_name(path):
            with db.atomic():
                if delete_path(db, path):
                    run.removed += 1
    if changes:
        _refuse_committed_links(db, run, blobs, [c.path for c in changes if c.status != "D"])
    if worktree:
        overlay = _apply_worktree(repo, db, run, blobs, now, parse, entries, previous)
    else:  # deferred: the recorded overlay stands until the next full pass re-reads it
        overlay = frozenset(previous)
    _retry_refusals(repo, db, run, blobs, overlay, now, parse, freed)
    with db.atomic():
        _set_head(db, head, now, rebuilt=False, space=None)
    written, error = embed_missing(db, embedder, now=now, progress=progress)
    sync_matrix(db)
    return _report(head, run, False, written, error)


def reproject_paths(repo: _Repo, db: IndexDB, paths: Sequence[str], *, now: str,
                    parse: Parser | None = None) -> IndexReport:
    """Drop the rows of ``paths`` and project them again from HEAD + work tree (the repair of ``doctor --fix``
    for drifted rows); a path the tree lacks stays dropped. Embeds nothing; the watermark is unchanged. Reads one
    tree entry per path and one work-tree status.

    Raises:
        StorageError: SQLite failed. GitError: the repository cannot be read.
    """
    parse = parse or _parser()
    run = _Pass()
    blobs = _HeadBlobs(repo, repo.head_sha())
    dirty = {d.path: d.deleted for d in repo.dirty()}
    wanted = sorted(set(paths))
    freed = _held_hashes(db, wanted)
    parse = _noting_hashes(parse, freed)
    blobs.fetch(wanted)
    for path in wanted:
        with db.atomic():
            delete_path(db, path)
        if not is_indexable(path) or dirty.get(path):
            continue
        data = _disk_bytes(repo, db, run, path) if path in dirty else None
        if data is not None:
            _project_bytes(db, run, path, data, git_blob_sha(data), now, parse, count="added")
        elif path not in dirty:
            sha = blobs.get(path)
            if sha is not None:
                _project_bytes(db, run, path, repo.read_blob(sha), sha, now, parse, count="added")
    _retry_refusals(repo, db, run, blobs, frozenset(dirty), now, parse, freed)
    return _report(_state(db)[0], run, False, 0, None)


def status(repo: _Repo, db: IndexDB) -> IndexStatus:
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
