"""What the index describes: the ``index_state`` row (migration 0006) and the work-tree overlay count (0008).

``head_sha`` is the commit the index was last brought up to (its watermark, docs/index.md §3.7); ``embed_model`` the
vector space of its embeddings, ``"<provider>:<model>@<dim>"`` (docs/index.md §3.8). Both are ``None`` until first
recorded. Every function raises ``StorageError`` when SQLite fails.
"""

from __future__ import annotations

from dataclasses import dataclass

from git_memhtml.index.db import IndexDB


@dataclass(frozen=True)
class IndexState:
    """The single ``index_state`` row (``id = 1``)."""

    head_sha: str | None
    embed_model: str | None


def index_state(db: IndexDB) -> IndexState | None:
    """The ``index_state`` row, or ``None`` when the index was never stamped."""
    row = db.query_one("SELECT head_sha, embed_model FROM index_state WHERE id = 1")
    if row is None:
        return None
    head, model = row
    return IndexState(None if head is None else str(head), None if model is None else str(model))


def indexed_head(db: IndexDB) -> str | None:
    """The watermark commit, or ``None`` (no row, or never stamped)."""
    state = index_state(db)
    return None if state is None else state.head_sha


def vector_space(db: IndexDB) -> str | None:
    """The recorded vector space (``index_state.embed_model``), or ``None``."""
    state = index_state(db)
    return None if state is None else state.embed_model


def overlay_rows(db: IndexDB) -> int:
    """Number of ``worktree_paths`` rows: uncommitted work-tree files the index currently projects."""
    row = db.query_one("SELECT count(*) FROM worktree_paths")
    return int(row[0]) if row else 0
