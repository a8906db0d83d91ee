"""Embedding the chunks that lack a vector, and the one-space rule of the index (docs/index.md §3.7 step 7,
§3.8)."""

from __future__ import annotations

import numpy as np

from git_memhtml.embed.base import Embedder
from git_memhtml.errors import (
    EmbedModelMismatch,
    MemhtmlError,
)
from git_memhtml.index.db import IndexDB
from git_memhtml.index.watermark import index_state
from git_memhtml.progress import NO_PROGRESS, Progress

EMBED_SLICE = 960
"""Chunks per embedder call and per persisted transaction (docs/index.md §3.7 step 7)."""


REBUILD_HINT = "git memhtml index rebuild"


def check_space(db: IndexDB, embedder: Embedder | None) -> None:
    """Refuse an embedder whose space differs from the one recorded in ``index_state`` (docs/index.md §3.8).

    Raises:
        EmbedModelMismatch: hint ``git memhtml index rebuild``.
    """
    if embedder is None:
        return
    state = index_state(db)
    recorded = state.embed_model if state else None
    if recorded is not None and recorded != embedder.space:
        raise EmbedModelMismatch(
            f"the index holds vectors of {recorded} but the configured embedder is {embedder.space}",
            hint=REBUILD_HINT,
        )


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
