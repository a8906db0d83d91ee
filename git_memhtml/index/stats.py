"""Counts over the index for ``sleep plan`` (docs/sleep.md §2.8, docs/sleep.md §2.9) and the preflight snapshot
(docs/phases.md §1).

Counts are row counts (≥ 0). "Live" and "active" are the predicates of :mod:`git_memhtml.index.active`. Every
function raises ``StorageError`` when SQLite fails.
"""

from __future__ import annotations

from dataclasses import dataclass

from git_memhtml.index.active import ACTIVE_MEMORY, LIVE_FILE
from git_memhtml.index.corroboration import pending_entity_merges
from git_memhtml.index.db import IndexDB, Params


@dataclass(frozen=True)
class PlanCounts:
    """The index signals ``sleep plan`` reads.

    ``memories_since``: active memories updated at or after the last run's start. ``unembedded_chunks``: chunks with
    no vector in any space. ``dangling_authored_links``: authored edges whose target is not an indexed file.
    ``pending_entity_merges``: unpromoted entity corroborations. ``ttl_passed``: active memories other than arcs
    whose ``valid_until`` is set and not after SQLite's ``now``. ``active``: every active memory. ``inbox``: active
    memories under ``areas/inbox/``.
    """

    memories_since: int
    unembedded_chunks: int
    dangling_authored_links: int
    pending_entity_merges: int
    ttl_passed: int
    active: int
    inbox: int


@dataclass(frozen=True)
class CorpusCounts:
    """The preflight snapshot: live files (tasks included), archived files, chunks, vectors in the run's space,
    edges, derived edges."""

    live: int
    archived: int
    chunks: int
    embeddings: int
    edges: int
    derived_edges: int


def _count(db: IndexDB, sql: str, params: Params = ()) -> int:
    found = db.query_one(sql, params)
    return int(found[0]) if found and found[0] is not None else 0


def plan_counts(db: IndexDB, *, since: str) -> PlanCounts:
    """:class:`PlanCounts` with ``since`` the ISO-8601 UTC start of the last run (``""``: every memory)."""
    return PlanCounts(
        memories_since=_count(db, f"SELECT count(*) FROM files WHERE {ACTIVE_MEMORY} AND updated_at >= ?", (since,)),
        unembedded_chunks=_count(
            db,
            "SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.chunk_id = c.chunk_id)",
        ),
        dangling_authored_links=_count(
            db,
            "SELECT count(*) FROM edges e WHERE e.derived = 0 AND NOT EXISTS "
            "(SELECT 1 FROM files f WHERE f.path = e.dst_path)",
        ),
        pending_entity_merges=pending_entity_merges(db),
        ttl_passed=_count(
            db,
            f"SELECT count(*) FROM files WHERE {ACTIVE_MEMORY} AND memory_type <> 'arc' "
            "AND valid_until IS NOT NULL AND valid_until <> '' AND valid_until <= strftime('%Y-%m-%dT%H:%M:%SZ','now')",
        ),
        active=_count(db, f"SELECT count(*) FROM files WHERE {ACTIVE_MEMORY}"),
        inbox=_count(db, f"SELECT count(*) FROM files WHERE {ACTIVE_MEMORY} AND path LIKE 'areas/inbox/%'"),
    )


def corpus_counts(db: IndexDB, *, space: str | None) -> CorpusCounts:
    """:class:`CorpusCounts`; ``embeddings`` counts vectors whose model is ``space`` (0 when ``space`` is None)."""
    return CorpusCounts(
        live=_count(db, f"SELECT count(*) FROM files WHERE {LIVE_FILE}"),
        archived=_count(db, "SELECT count(*) FROM files WHERE archived = 1"),
        chunks=_count(db, "SELECT count(*) FROM chunks"),
        embeddings=_count(db, "SELECT count(*) FROM embeddings WHERE model = ?", (space,)),
        edges=_count(db, "SELECT count(*) FROM edges"),
        derived_edges=_count(db, "SELECT count(*) FROM edges WHERE derived = 1"),
    )


def live_type_counts(db: IndexDB) -> dict[str, int]:
    """``{memory type: live files of that type}`` (tasks included, archived files not), types ascending."""
    found = db.query(f"SELECT memory_type, count(*) FROM files WHERE {LIVE_FILE} GROUP BY memory_type "
                     "ORDER BY memory_type")
    return {str(kind): int(count) for kind, count in found}
