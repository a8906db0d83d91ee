"""The two-night corroboration ledgers of the state plane: ``state.entity_corroboration`` and
``state.edge_corroboration`` (docs/index.md §3.3, docs/entities.md §6; migration
``state_migrations/0002_corroboration.sql``).

Promotions take their key values from a run's committed ledger marks (JSON), so they are taken as given: a value that
is not a string simply matches no row. Detections (:func:`bump_entity`, :func:`bump_edge`) are written by the phases
during the run: a detection is an observation, true whether or not the run lands, but it counts only over a corpus
the pair's last detection did not see (``corpus_digest``, state migration 0007; docs/models.md §5). Every function
raises ``StorageError`` when SQLite fails.
"""

from __future__ import annotations

from dataclasses import dataclass

from git_memhtml.index.db import IndexDB


@dataclass(frozen=True)
class Corroboration:
    """A pair's corroboration after a detection: ``detections`` (≥ 1), ``promoted`` (landed as promoted), and
    ``counted`` (this detection added one: the corpus differed from the last detection's)."""

    detections: int
    promoted: bool
    counted: bool


_BUMP = (
    " ON CONFLICT DO UPDATE SET detections = detections + (corpus_digest IS NOT excluded.corpus_digest),"
    " updated_at = CASE WHEN corpus_digest IS NOT excluded.corpus_digest THEN excluded.updated_at ELSE updated_at END,"
    " corpus_digest = excluded.corpus_digest"
    " RETURNING detections, promoted"
)


def _bumped(db: IndexDB, table: str, keys: tuple[str, str, str], values: tuple[str, str, str], *, corpus: str,
            now: str) -> Corroboration:
    where = " AND ".join(f"{k} = ?" for k in keys)
    before = db.query_one(f"SELECT detections FROM state.{table} WHERE {where}", values)
    row = db.query_one(
        f"INSERT INTO state.{table} ({', '.join(keys)}, detections, updated_at, corpus_digest) "
        "VALUES (?, ?, ?, 1, ?, ?)" + _BUMP,
        (*values, now, corpus),
    )
    detections = int(row[0]) if row else 1
    return Corroboration(detections, bool(row and row[1]), before is None or int(before[0]) != detections)


def bump_entity(db: IndexDB, entity_type: str, alias: str, canonical: str, *, corpus: str,
                now: str) -> Corroboration:
    """Record one detection of the merge of ``alias`` and ``canonical`` (normalised names) of ``entity_type``.

    ``corpus`` is :func:`git_memhtml.index.corpus.corpus_digest` of the run's corpus; a detection over the digest
    the row already holds adds nothing (the same evidence seen twice is one look), any other adds one. A merge is
    one pair whichever way it points (:func:`entity_pair`): which name survives is the corpus's counts' decision
    when the merge is applied, so a night whose new memories turn the majority looks at the same merge again.
    """
    return _bumped(db, "entity_corroboration", ("entity_type", "alias_name", "canonical_name"),
                   (entity_type, *entity_pair(db, entity_type, alias, canonical)), corpus=corpus, now=now)


def entity_pair(db: IndexDB, entity_type: str, alias: str, canonical: str) -> tuple[str, str]:
    """The ``(alias_name, canonical_name)`` key of the merge of ``alias`` and ``canonical`` in
    ``state.entity_corroboration``: the row's own order when the pair has a row either way round (rows written before
    this rule hold the direction of their detection), else the two names sorted."""
    for key in ((alias, canonical), (canonical, alias)):
        if db.query_one("SELECT 1 FROM state.entity_corroboration WHERE entity_type = ? AND alias_name = ? "
                        "AND canonical_name = ?", (entity_type, *key)) is not None:
            return key
    first, second = sorted((alias, canonical))
    return first, second


def bump_edge(db: IndexDB, src: str, rel: str, dst: str, *, corpus: str, now: str) -> Corroboration:
    """Record one detection of the edge ``src --rel--> dst`` (symmetric: ``src < dst``); see :func:`bump_entity`."""
    return _bumped(db, "edge_corroboration", ("src_path", "rel", "dst_path"), (src, rel, dst), corpus=corpus, now=now)


PROMOTED_DETECTIONS = 2
"""Detections a promotion implies: a merge or a contradiction is promoted on its second look (docs/models.md §5)."""


def _promote(db: IndexDB, table: str, keys: tuple[str, str, str], values: tuple[object, object, object], *,
             now: str) -> int:
    if not all(isinstance(v, str) for v in values):
        return 0
    return db.execute(
        f"INSERT INTO state.{table} ({', '.join(keys)}, detections, confirmed, promoted, updated_at) "
        f"VALUES (?, ?, ?, {PROMOTED_DETECTIONS}, 1, 1, ?) ON CONFLICT DO UPDATE SET promoted = 1, confirmed = 1, "
        f"detections = max(detections, {PROMOTED_DETECTIONS}), updated_at = excluded.updated_at",
        (*values, now),
    )


def promote_entity(db: IndexDB, entity_type: object, alias: object, canonical: object, *, now: str) -> int:
    """Mark the ``(entity_type, alias, canonical)`` merge promoted and confirmed at ``now``; return rows changed.

    A landed promotion is a fact of the trunk, so a clone that never made the detections itself (a teammate's, a
    fresh one reconciling a forge merge) gets the row too, with the two detections it implies; a key that is not
    three strings changes nothing (0).
    """
    if isinstance(entity_type, str) and isinstance(alias, str) and isinstance(canonical, str):
        alias, canonical = entity_pair(db, entity_type, alias, canonical)  # bump_entity's key, either way round
    return _promote(db, "entity_corroboration", ("entity_type", "alias_name", "canonical_name"),
                    (entity_type, alias, canonical), now=now)


def promote_edge(db: IndexDB, src: object, rel: object, dst: object, *, now: str) -> int:
    """Mark the ``(src, rel, dst)`` edge promoted and confirmed at ``now``, inserting the row when this clone has none
    (as :func:`promote_entity`); return rows changed."""
    return _promote(db, "edge_corroboration", ("src_path", "rel", "dst_path"), (src, rel, dst), now=now)


def pending_entity_merges(db: IndexDB) -> int:
    """Number of entity merges detected but not yet promoted."""
    row = db.query_one("SELECT count(*) FROM state.entity_corroboration WHERE promoted = 0")
    return int(row[0]) if row and row[0] is not None else 0
