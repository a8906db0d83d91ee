"""The two-night corroboration ledgers of the state plane: ``state.entity_corroboration`` and
``state.edge_corroboration`` (docs/index.md §3.3, docs/entities.md §6; migration
``state_migrations/0002_corroboration.sql``).

Key values come from a run's committed ledger marks (JSON), so they are taken as given: a value that is not a
string simply matches no row. Every function raises ``StorageError`` when SQLite fails.
"""

from __future__ import annotations

from git_memhtml.index.db import IndexDB


def promote_entity(db: IndexDB, entity_type: object, alias: object, canonical: object, *, now: str) -> int:
    """Mark the ``(entity_type, alias, canonical)`` merge promoted and confirmed at ``now``; return rows changed."""
    return db.execute(
        "UPDATE state.entity_corroboration SET promoted = 1, confirmed = 1, updated_at = ? "
        "WHERE entity_type = ? AND alias_name = ? AND canonical_name = ?",
        (now, entity_type, alias, canonical),
    )


def promote_edge(db: IndexDB, src: object, rel: object, dst: object, *, now: str) -> int:
    """Mark the ``(src, rel, dst)`` edge promoted and confirmed at ``now``; return rows changed."""
    return db.execute(
        "UPDATE state.edge_corroboration SET promoted = 1, confirmed = 1, updated_at = ? "
        "WHERE src_path = ? AND rel = ? AND dst_path = ?",
        (now, src, rel, dst),
    )


def pending_entity_merges(db: IndexDB) -> int:
    """Number of entity merges detected but not yet promoted."""
    row = db.query_one("SELECT count(*) FROM state.entity_corroboration WHERE promoted = 0")
    return int(row[0]) if row and row[0] is not None else 0
