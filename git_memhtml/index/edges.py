"""Named reads and writes of the ``edges`` table (docs/index.md §3.2; migration 0004) for the sleep phases.

An edge is ``(src_path, rel, dst_path)``; ``derived`` is 0 for an authored link (from a file's ``<a rel>``) and 1
for one a sleep phase mined, whose ``strength`` in [0, 1] is its cosine. Every function raises ``StorageError``
when SQLite fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from git_memhtml.index.db import IndexDB


@dataclass(frozen=True)
class EdgeKey:
    """The identity of one edge."""

    src: str
    rel: str
    dst: str


@dataclass(frozen=True)
class StoredEdge:
    """One memory-class edge as scoring reads it: ``derived`` 0/1, ``strength`` as stored."""

    src: str
    rel: str
    dst: str
    derived: int
    strength: float


@dataclass(frozen=True)
class MinedEdge:
    """One edge a sleep run mined: ``similarity`` in [0, 1] becomes its ``strength``."""

    src: str
    dst: str
    similarity: float


_INSERT_MINED = (
    "INSERT OR IGNORE INTO edges(src_path, rel, dst_path, edge_class, derived, strength, provenance, sleep_run, "
    "created_at) VALUES (?, ?, ?, 'memory', 1, ?, 'sleep', ?, ?)"
)
"""``OR IGNORE``: an authored edge with the same key wins over a mined one."""


def authored_edges(db: IndexDB) -> list[EdgeKey]:
    """Every authored (``derived = 0``) edge, sorted by source, rel, target."""
    rows = db.query("SELECT src_path, rel, dst_path FROM edges WHERE derived = 0 ORDER BY src_path, rel, dst_path")
    return [EdgeKey(str(src), str(rel), str(dst)) for src, rel, dst in rows]


def memory_edges(db: IndexDB, *, skip_derived_rel: str) -> list[StoredEdge]:
    """Memory-class edges sorted by source, rel, target, leaving out derived edges of rel ``skip_derived_rel``."""
    rows = db.query(
        "SELECT src_path, rel, dst_path, derived, strength FROM edges WHERE edge_class = 'memory' "
        "AND NOT (derived = 1 AND rel = ?) ORDER BY src_path, rel, dst_path",
        (skip_derived_rel,),
    )
    return [StoredEdge(src, rel, dst, int(derived), float(strength)) for src, rel, dst, derived, strength in rows]


def replace_mined_edges(
    db: IndexDB, mined: Sequence[tuple[str, Sequence[MinedEdge]]], *, run_id: str, at: str
) -> None:
    """In one transaction, delete every sleep-mined derived edge of each rel named in ``mined`` and insert the new
    ones: ``mined`` is ``[(rel, edges)]``; each edge is stamped ``sleep_run = run_id`` and ``created_at = at``.
    A new edge whose key an authored edge holds is ignored."""
    rels = [rel for rel, _ in mined]
    with db.atomic():
        db.execute(
            f"DELETE FROM edges WHERE derived = 1 AND provenance = 'sleep' AND rel IN ({', '.join('?' for _ in rels)})",
            rels,
        )
        for rel, edges in mined:
            db.executemany(_INSERT_MINED, [(e.src, rel, e.dst, e.similarity, run_id, at) for e in edges])
