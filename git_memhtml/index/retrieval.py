"""Hybrid retrieval over the index: four RRF-fused arms under one scope filter (core §4, DESIGN §3.13).

``search`` only reads: it never bumps access counts (core §4 "Reinforcement"). The SQL comes from the pure
builders of :mod:`git_memhtml.index.retrieval_sql`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from git_memhtml.embed.base import Embedder
from git_memhtml.errors import UsageError
from git_memhtml.index.db import IndexDB
from git_memhtml.index.indexer import check_space
from git_memhtml.index.retrieval_sql import (
    ARM_LIMIT,
    SNIPPET_CHARS,
    ArmWeights,
    Scope,
    entities_sql,
    fts_match,
    fusion_sql,
    hydrate_sql,
    snippet_sql,
    superseded_by_sql,
)

__all__ = ["ArmWeights", "Hit", "Scope", "SearchResult", "search"]


@dataclass(frozen=True)
class Hit:
    """One result. ``score`` is the RRF fusion score ``Σ w/(rank+60)``; ``snippet`` ≤ 700 chars (nearest chunk
    to the query vector, else chunk 0); ``entities`` sorted unique ``type:name``; ``superseded_by`` = source path
    of the newest authored ``supersedes`` edge into this path, or ``None``."""

    path: str
    title: str
    gist: str
    memory_type: str
    score: float
    confidence: float
    updated_at: str
    snippet: str
    entities: tuple[str, ...]
    superseded_by: str | None


@dataclass(frozen=True)
class SearchResult:
    """Hits in fused order; ``degraded`` when the vector arm was wanted but no embedder answered; ``arms`` the
    arms that ran, in fusion order."""

    hits: tuple[Hit, ...]
    degraded: bool
    arms: tuple[str, ...]


def _snippet(text: str) -> str:
    text = text.strip()
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1].rstrip() + "…"


def _query_vector(embedder: Embedder | None, query: str) -> tuple[bytes | None, bool]:
    """Return ``(float32-LE query vector or None, degraded)``."""
    if embedder is None:
        return None, True
    try:
        vec = np.asarray(embedder.embed([query]), dtype="<f4")[0]
    except Exception:  # noqa: BLE001 - an embedder failure never fails search (core §11.11)
        return None, True
    if not np.any(vec):
        return None, False  # nothing to compare (no token the embedder knows)
    return vec.tobytes(), False


def search(
    db: IndexDB,
    query: str,
    *,
    scope: Scope | None = None,
    limit: int = 10,
    embedder: Embedder | None = None,
    weights: ArmWeights | None = None,
    now: str,
) -> SearchResult:
    """Search the index for ``query`` (core §4).

    Arms (40 candidates each): ``fts`` when the sanitised query keeps a token, ``vector`` when an embedder gives
    a non-zero query vector, ``recency`` and ``salience`` always; an arm with weight ≤ 0 is dropped. ``now`` (ISO
    UTC) is the salience reference instant.

    Raises:
        UsageError: ``limit`` < 1.
        EmbedModelMismatch: the index holds vectors of another space than ``embedder``'s.
        StorageError: SQLite failed.
    """
    if limit < 1:
        raise UsageError(f"limit must be at least 1, got {limit}", hint="pass --limit 1 or more")
    scope = scope or Scope()
    weights = weights or ArmWeights()
    check_space(db, embedder)
    arms: dict[str, float] = {}
    match = fts_match(query)
    if match is not None and weights.fts > 0:
        arms["fts"] = weights.fts
    qvec: bytes | None = None
    degraded = False
    if weights.vector > 0:
        qvec, degraded = _query_vector(embedder, query)
        if qvec is not None:
            arms["vector"] = weights.vector
    if weights.recency > 0:
        arms["recency"] = weights.recency
    if weights.salience > 0:
        arms["salience"] = weights.salience
    if not arms:
        return SearchResult((), degraded, ())
    space = embedder.space if embedder is not None else None
    sql, params = fusion_sql(
        arms, scope, match=match, qvec=qvec, space=space, now=now, limit=limit, arm_limit=ARM_LIMIT
    )
    fused = db.query(sql, params)
    if not fused:
        return SearchResult((), degraded, tuple(arms))
    paths = [str(r[0]) for r in fused]
    sql, params = hydrate_sql(paths)
    rows = {r[0]: r for r in db.query(sql, params)}
    sql, params = entities_sql(paths)
    entities: dict[str, list[str]] = {}
    for path, entity in db.query(sql, params):
        entities.setdefault(path, []).append(entity)
    sql, params = superseded_by_sql(paths)
    superseded: dict[str, str] = {}
    for dst, src in db.query(sql, params):
        superseded.setdefault(dst, src)
    sql, params = snippet_sql(paths, with_vector=qvec is not None)
    if qvec is not None:
        params.update({"qvec": qvec, "space": space})
    best: dict[str, tuple[float, int, str]] = {}
    for path, ordinal, text, dist in db.query(sql, params):
        key = (float("inf") if dist is None else float(dist), int(ordinal), str(text))
        if path not in best or key[:2] < best[path][:2]:
            best[path] = key
    hits = []
    for path, score in fused:
        row = rows[path]
        hits.append(
            Hit(
                path=path,
                title=row[1],
                gist=row[2],
                memory_type=row[3],
                score=float(score),
                confidence=float(row[4]),
                updated_at=row[5],
                snippet=_snippet(best[path][2]) if path in best else "",
                entities=tuple(entities.get(path, ())),
                superseded_by=superseded.get(path),
            )
        )
    return SearchResult(tuple(hits), degraded, tuple(arms))
