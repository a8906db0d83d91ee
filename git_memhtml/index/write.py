"""Apply projections to the index plane: upsert, delete, rename (docs/index.md §3.5, §3.7 step 5).

Every function runs its statements on ``db`` as given; the caller owns the transaction (``db.atomic()``).
"""

from __future__ import annotations

from git_memhtml.document.model import ArticleFacts
from git_memhtml.errors import DuplicateContent
from git_memhtml.index.active import ACTIVE_MEMORY
from git_memhtml.index.db import IndexDB
from git_memhtml.index.project import FILE_COLUMNS, Projection, article_facts_of, path_facts

_UPSERT_FILE = (
    f"INSERT INTO files({', '.join(FILE_COLUMNS)}) VALUES ({', '.join('?' for _ in FILE_COLUMNS)}) "
    "ON CONFLICT(path) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in FILE_COLUMNS if c != "path")
)
"""Upsert on ``path`` — never delete+insert, which would cascade the file's chunks and vectors away (docs/index.md
§3.5)."""


def write_projection(db: IndexDB, proj: Projection, *, now: str, fresh: bool = False) -> None:
    """Replace the index rows of ``proj.path`` with ``proj`` (docs/index.md §3.5).

    Detail rows and the file's authored out-edges are replaced; chunks are deleted only when their content hash
    differs from the new one; chunks are inserted with ``ON CONFLICT(chunk_id)`` re-pointing the path, so a
    moved file keeps its vectors; a file whose content hash is unchanged writes no chunk (they exist: the rows of
    a content hash and its chunks come and go together) and, by the ``files_fts_au`` trigger, no FTS row when
    ``fts_text`` is unchanged.

    ``fresh`` says the path holds no row at all (a rebuild's first pass over emptied tables): the reads and
    deletes of earlier rows are skipped, so a file costs its inserts alone.

    Raises:
        DuplicateContent: another active non-task file already holds this content hash (the partial unique
            index of docs/index.md §3.2); nothing is written for this path.
        StorageError: SQLite failed.
    """
    row = proj.file
    path = row.path
    if not row.archived and row.memory_type != "task":
        other = db.query_one(
            f"SELECT path FROM files WHERE content_hash = ? AND {ACTIVE_MEMORY} AND path <> ?",
            (row.content_hash, path),
        )
        if other is not None:
            raise DuplicateContent(
                f"{path} has the same content as {other[0]}",
                path=path,
                hint=f"archive or delete one of {path} and {other[0]}",
            )
    previous = None if fresh else db.query_one("SELECT content_hash FROM files WHERE path = ?", (path,))
    if not fresh:
        for table in ("file_tags", "file_entities", "file_facets", "file_citations"):
            db.execute(f"DELETE FROM {table} WHERE path = ?", (path,))
        db.execute("DELETE FROM index_refusals WHERE path = ?", (path,))
        db.execute("DELETE FROM edges WHERE src_path = ? AND provenance = 'authored'", (path,))
    db.execute(_UPSERT_FILE, tuple(getattr(row, c) for c in FILE_COLUMNS))
    if previous is not None and previous[0] != row.content_hash:
        settle_chunks(db, str(previous[0]))  # a twin of the old content keeps its chunks and vectors
    if previous is not None:
        db.execute("DELETE FROM chunks WHERE path = ? AND content_hash <> ?", (path, row.content_hash))
    db.executemany("INSERT INTO file_tags(path, tag) VALUES (?, ?)", [(path, t) for t in proj.tags])
    db.executemany(
        "INSERT INTO file_entities(path, entity_type, entity_name, entity_key) VALUES (?, ?, ?, ?)",
        [(path, t, n, k) for t, n, k in proj.entity_rows],
    )
    db.executemany(
        "INSERT INTO file_facets(path, name, value, numeric_value) VALUES (?, ?, ?, ?)",
        [(path, n, v, x) for n, v, x in proj.facets],
    )
    db.executemany(
        "INSERT INTO file_citations(path, text, href) VALUES (?, ?, ?)",
        [(path, t, h) for t, h in proj.citations],
    )
    if previous is None or previous[0] != row.content_hash:  # same content: its chunks (and vectors) are there
        db.executemany(
            "INSERT INTO chunks(chunk_id, path, content_hash, ordinal, text, char_count) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(chunk_id) DO UPDATE SET path = excluded.path",
            [(c.chunk_id, path, row.content_hash, c.ordinal, c.text, len(c.text)) for c in proj.chunks],
        )
    db.executemany(
        "INSERT INTO edges(src_path, rel, dst_path, edge_class, derived, strength, provenance, sleep_run, "
        "src_hash, created_at) VALUES (?, ?, ?, ?, 0, 1.0, 'authored', NULL, ?, ?) "
        "ON CONFLICT(src_path, rel, dst_path) DO UPDATE SET edge_class = excluded.edge_class, derived = 0, "
        "strength = 1.0, provenance = 'authored', sleep_run = NULL, src_hash = excluded.src_hash",
        [(path, e.rel, e.dst_path, e.edge_class, row.content_hash, now) for e in proj.edges],
    )
    settle_chunks(db, row.content_hash)


def stored_article(db: IndexDB, path: str) -> ArticleFacts | None:
    """The article facts indexed for ``path`` (``files.article_digest``/``article_facts``/``body_text``), or
    ``None`` when the path is not indexed or its tree came from html5lib (docs/index.md "Head-only rewrites")."""
    row = db.query_one("SELECT article_digest, article_facts, body_text FROM files WHERE path = ?", (path,))
    if row is None:
        return None
    return article_facts_of(row[0], row[1], str(row[2]))


def settle_chunks(db: IndexDB, content_hash: str, *, exclude: str | None = None) -> None:
    """Point the chunks of ``content_hash`` at its preferred holder: live before archived, then the smallest
    path, ``exclude`` (a path about to go) left out. Chunks are content-keyed (docs/index.md §3.2), so files with the
    same content share one chunk set; this rule makes its owner a function of the tree, not of the order of writes.
    Nothing changes when no other file holds the content."""
    db.execute(
        "UPDATE chunks SET path = b.path FROM (SELECT path FROM files WHERE content_hash = ?1 "
        "AND path IS NOT ?2 ORDER BY archived, path LIMIT 1) AS b WHERE chunks.content_hash = ?1 "
        "AND chunks.path <> b.path",
        (content_hash, exclude),
    )


def refuse(db: IndexDB, path: str, content_hash: str) -> None:
    """Remember that ``path`` (content ``content_hash``) was refused by the live-content unique rule and drop
    any stale rows it had, so the next pass re-tries it when the holder goes (issue 4 item 6)."""
    delete_path(db, path)
    db.execute(
        "INSERT INTO index_refusals(path, content_hash) VALUES (?, ?) "
        "ON CONFLICT(path) DO UPDATE SET content_hash = excluded.content_hash",
        (path, content_hash),
    )


def delete_path(db: IndexDB, path: str) -> bool:
    """Remove ``path`` from the index: its out-edges, then its ``files`` row (details, chunks and vectors
    cascade). Returns whether a file row existed (docs/index.md §3.7 step 5, D)."""
    db.execute("DELETE FROM index_refusals WHERE path = ?", (path,))
    db.execute("DELETE FROM edges WHERE src_path = ?", (path,))
    held = db.query_one("SELECT content_hash FROM files WHERE path = ?", (path,))
    if held is None:
        return False
    settle_chunks(db, str(held[0]), exclude=path)  # a twin inherits the chunks (and their vectors)
    return db.execute("DELETE FROM files WHERE path = ?", (path,)) > 0


def rename_path(db: IndexDB, old: str, new: str) -> bool:
    """Move ``old`` to ``new`` in place: ``UPDATE files SET path`` and the path-derived columns (details and chunks
    follow by ``ON UPDATE CASCADE``, vectors stay attached to their chunks) and ``UPDATE edges SET src_path``. A
    stale row at ``new`` is removed first. Returns whether ``old`` was indexed (docs/index.md §3.7 step 5, R).

    Raises:
        StorageError: e.g. un-archiving onto content another live file holds (the partial unique index).
    """
    db.execute("DELETE FROM index_refusals WHERE path = ?", (old,))
    if old == new:
        return db.query_one("SELECT 1 FROM files WHERE path = ?", (old,)) is not None
    if db.query_one("SELECT 1 FROM files WHERE path = ?", (old,)) is None:
        return False
    delete_path(db, new)
    facts = path_facts(new)
    db.execute(
        "UPDATE files SET path = ?, para = ?, workspace = ?, archived = ?, origin_path = ? WHERE path = ?",
        (new, facts.para, facts.workspace, int(facts.archived), facts.origin_path, old),
    )
    db.execute("DELETE FROM edges WHERE src_path = ? AND dst_path = ?", (old, new))
    db.execute("UPDATE OR REPLACE edges SET src_path = ? WHERE src_path = ?", (new, old))
    held = db.query_one("SELECT content_hash FROM files WHERE path = ?", (new,))
    if held is not None:
        settle_chunks(db, str(held[0]))
    return True
