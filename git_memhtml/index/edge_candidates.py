"""The reads edge-typing picks its candidate pairs from (docs/phases.md §1.6; docs/index.md §3.2).

Two arms, both over active memories only (not archived, not a task: ``index.active.active_memory``):

- :func:`mined_pairs`: the derived edges relationship-mining wrote (``derived = 1``, memory class, one rel), strongest
  first, leaving out every pair that already has an authored (``derived = 0``) edge in either direction;
- :func:`entity_claims` and :func:`authored_pairs`: who claims which entity (by the matching key, so ``org:DGIA`` and
  ``org:dgia`` are one entity), and the unordered pairs an author already linked, for the shared-entity arm, which
  the phase ranks by cosine (``sleep/phases/edge_pairs.py``).

Every function raises ``StorageError`` when SQLite fails.
"""

from __future__ import annotations

from dataclasses import dataclass

from git_memhtml.index.active import active_memory
from git_memhtml.index.db import IndexDB


@dataclass(frozen=True)
class MinedPair:
    """One derived edge between two active memories: ``src --rel--> dst`` with its ``strength`` (the cosine)."""

    src: str
    dst: str
    strength: float


_AUTHORED_EITHER_WAY = (
    "EXISTS (SELECT 1 FROM edges a WHERE a.derived = 0 AND ("
    "(a.src_path = e.src_path AND a.dst_path = e.dst_path) OR (a.src_path = e.dst_path AND a.dst_path = e.src_path)))"
)


def mined_pairs(db: IndexDB, rel: str) -> list[MinedPair]:
    """Derived memory-class edges of ``rel`` whose two ends are active memories and distinct, with no authored edge
    between them either way; ordered ``strength DESC, src, dst``, no cap (docs/phases.md §1.6 "mined arm")."""
    rows = db.query(
        "SELECT e.src_path, e.dst_path, e.strength FROM edges e "
        "JOIN files s ON s.path = e.src_path JOIN files d ON d.path = e.dst_path "
        f"WHERE e.derived = 1 AND e.edge_class = 'memory' AND e.rel = ? AND e.src_path <> e.dst_path "
        f"AND {active_memory('s')} AND {active_memory('d')} AND NOT {_AUTHORED_EITHER_WAY} "
        "ORDER BY e.strength DESC, e.src_path, e.dst_path",
        (rel,),
    )
    return [MinedPair(str(src), str(dst), float(strength)) for src, dst, strength in rows]


def entity_claims(db: IndexDB) -> list[tuple[str, str]]:
    """``[(entity_key, path)]`` of every entity an active memory claims, sorted by key then path; rows without a
    matching key (``''``) are left out."""
    rows = db.query(
        "SELECT DISTINCT fe.entity_key, fe.path FROM file_entities fe JOIN files f ON f.path = fe.path "
        f"WHERE fe.entity_key <> '' AND {active_memory('f')} ORDER BY fe.entity_key, fe.path"
    )
    return [(str(key), str(path)) for key, path in rows]


def authored_pairs(db: IndexDB) -> set[tuple[str, str]]:
    """Every unordered pair ``(lower path, higher path)`` joined by an authored (``derived = 0``) edge of any rel."""
    rows = db.query("SELECT DISTINCT src_path, dst_path FROM edges WHERE derived = 0 AND src_path <> dst_path")
    return {(min(str(s), str(d)), max(str(s), str(d))) for s, d in rows}
