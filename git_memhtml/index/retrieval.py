"""Hybrid retrieval over the index: four RRF-fused arms under one scope filter, then MMR (docs/retrieval.md §4,
docs/design.md §3.13).

``search`` only reads: it never bumps access counts (docs/retrieval.md §4.4 "Reinforcement"). The SQL comes from the
pure builders of :mod:`git_memhtml.index.retrieval_sql`. An empty result carries the archived rows the same scope and
query match (:mod:`git_memhtml.index.archived`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from git_memhtml.domain.rrf import mmr
from git_memhtml.embed.base import Embedder
from git_memhtml.errors import UsageError
from git_memhtml.index.archived import ArchivedMatch, archived_matches
from git_memhtml.index.db import IndexDB
from git_memhtml.index.embedding import check_space
from git_memhtml.index.identifiers import fusion_limit, rank_identifiers
from git_memhtml.index.matrix_read import vector_ranks
from git_memhtml.index.resident import FIXED_ARMS, ResidentVectors, eligible_paths, fixed_arm_ranks
from git_memhtml.index.retrieval_sql import (
    ARM_LIMIT,
    SNIPPET_CHARS,
    Arm,
    ArmWeights,
    Ranking,
    Scope,
    absorbed_by_sql,
    arm_ranks_sql,
    entities_sql,
    file_vectors_sql,
    fts_candidates_sql,
    fts_edge_sql,
    fts_match,
    fusion_sql,
    hydrate_sql,
    running_arms,
    scope_sql,
    snippet_sql,
    superseded_by_sql,
)

__all__ = ["ArchivedMatch", "ArmWeights", "Hit", "Scope", "SearchResult", "search"]

FUSE_FACTOR = 3
FTS_FIRST = (160, 1280)
"""Best ``bm25`` matches read before the scope join, tried in turn by :func:`fts_ranks` (4 and 32 × the 40 the arm
keeps; our decision, bench/README.md "index_perf.py": the join of every match was 70 of the arm's 97 ms at 100k)."""
"""Search fuses ``3 × limit`` candidates before MMR picks ``limit`` (docs/retrieval.md §4.6 "Search")."""


@dataclass(frozen=True)
class Hit:
    """One result. ``score`` is the RRF fusion score ``Σ w/(rank+60)`` (0.0 for a memory only the identifier
    look-up found, docs/retrieval.md §4.3 "Identifiers"); ``snippet`` ≤ 700 chars (nearest chunk
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
    """Hits in MMR pick order; ``degraded`` when the vector arm was wanted but no embedder answered; ``arms`` the
    arms that ran, in fusion order; ``scope_empty`` = the scope narrowed and nothing matched (docs/retrieval.md §4).

    ``archived_matches`` is ``None`` when there are hits; on an empty result it is how many archived rows the same
    scope and query match (0 when the scope already admitted archived rows), and ``archived`` lists the first of
    them with their ``superseded_by`` (docs/retrieval.md §4.5)."""

    hits: tuple[Hit, ...]
    degraded: bool
    arms: tuple[Arm, ...]
    scope_empty: bool = False
    archived_matches: int | None = None
    archived: tuple[ArchivedMatch, ...] = ()


def _snippet(text: str) -> str:
    text = text.strip()
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1].rstrip() + "…"


def _query_vector(embedder: Embedder | None, query: str) -> tuple[bytes | None, bool]:
    """Return ``(float32-LE query vector or None, degraded)``."""
    if embedder is None:
        return None, True
    try:
        vec = np.asarray(embedder.embed([query]), dtype="<f4")[0]
    except Exception:
        return None, True
    if not np.any(vec):
        return None, False  # nothing to compare (no token the embedder knows)
    return vec.tobytes(), False


def fts_ranks(db: IndexDB, match: str, scope: Scope, *, arm_limit: int = ARM_LIMIT,
              first: tuple[int, ...] = FTS_FIRST) -> list[str]:
    """The lexical arm's paths, best first: exactly the rows of ``fts_arm_sql`` (``bm25`` ascending, then path),
    without joining every match to ``files``. For each ``k`` of ``first``, the ``k`` best matches by ``bm25``
    alone are joined and scoped (:func:`~git_memhtml.index.retrieval_sql.fts_candidates_sql`); the answer stands
    when fewer than ``k`` rows matched, or ``arm_limit`` rows came back and the last scores strictly below the
    ``k``-th match (every row not read scores at least that, so none could rank). Otherwise the next ``k``, and
    after the last one the arm's own SQL (a narrow scope that admits few of the best matches).

    Raises:
        StorageError: SQLite failed.
    """
    scope_filter, params = scope_sql(scope)
    sql = fts_candidates_sql(scope_filter)
    for k in first:
        rows = db.query(sql, {**params, "match": match, "fts_first": k, "arm_limit": arm_limit})
        if rows:
            edge = rows[0][2]
        else:  # nothing in scope among the k best: is that all of the matches?
            found = db.query_one(fts_edge_sql(), {"match": match, "fts_first": k})
            edge = None if found is None else found[0]
        if edge is None or (len(rows) == arm_limit and float(rows[-1][1]) < float(edge)):
            return [str(r[0]) for r in rows]
    sql, params = arm_ranks_sql("fts", scope, match=match, arm_limit=arm_limit)
    return [str(r[0]) for r in db.query(sql, params)]


def _file_vectors(db: IndexDB, paths: list[str], qvec: bytes | None, space: str | None) -> dict[str, np.ndarray]:
    """Per path the mean of its chunk vectors in ``space`` (empty without a query vector: MMR then keeps the
    fusion order)."""
    if qvec is None or space is None or not paths:
        return {}
    sql, params = file_vectors_sql(paths)
    params["space"] = space
    sums: dict[str, np.ndarray] = {}
    for path, blob in db.query(sql, params):
        vec = np.frombuffer(blob, dtype="<f4").astype(np.float64)
        sums[path] = sums[path] + vec if path in sums else vec
    return sums


ABSORBED_READ = 2
"""The lexical and vector arms read ``2 × ARM_LIMIT`` rows when absorbed memories may rank (:func:`_absorbing`), so
the arm still holds ``ARM_LIMIT`` files after each absorbed row has given its rank to its keeper (our decision,
docs/retrieval.md §4.15)."""


def _absorbing(db: IndexDB, scope: Scope) -> bool:
    """Whether absorbed memories rank for their keepers under ``scope``: the scope hides archived files (neither
    ``include_archived`` nor ``as_of``) and the index holds an authored ``supersedes`` edge."""
    if scope.include_archived or scope.as_of is not None:
        return False
    return db.query_one("SELECT 1 FROM edges WHERE rel = 'supersedes' AND derived = 0 LIMIT 1") is not None


def keeper_ranks(db: IndexDB, ranking: Ranking, scope: Scope, *, arm_limit: int = ARM_LIMIT) -> list[tuple[str, int]]:
    """An arm's ``ranking`` read under ``replace(scope, absorbed=True)``, with every absorbed memory replaced by its
    keeper (``absorbed_by_sql``): ``(path, rank)`` pairs, best first, each file once at the best rank of itself and
    of what it absorbed, ranks up to ``arm_limit`` (docs/retrieval.md §4.15).

    Every row keeps its slot: a rank is the row's position in the widened ranking (or the rank a ``(path, rank)``
    row carries), and a row that adds nothing (a keeper's second row, an archived file with no keeper in ``scope``)
    leaves its slot empty instead of moving the rows below it up. So a fold changes no other file's rank in the arm:
    its member still holds the slot it held while active. Before, the rows below closed up by one, and the file one
    past the limit entered the arm (LoCoMo conv-50, converter shape: a vector arm's 41st file entered at 40 and
    took the 10th place of a question's answer after a night that folded one unrelated pair).

    Raises:
        StorageError: SQLite failed.
    """
    rows = [(p, i) if isinstance(p, str) else (p[0], int(p[1])) for i, p in enumerate(ranking, start=1)]
    archived = [p for p, _ in rows if p.startswith("archive/")]
    keeper: dict[str, str] = {}
    if archived:
        sql, params = absorbed_by_sql(archived, scope)
        for dst, src in db.query(sql, params):
            keeper.setdefault(str(dst), str(src))
    out: list[tuple[str, int]] = []
    seen: set[str] = set()
    for path, rank in rows:
        if rank > arm_limit:
            break
        stands = keeper.get(path) if path.startswith("archive/") else path
        if stands is None or stands in seen:
            continue
        seen.add(stands)
        out.append((stands, rank))
    return out


def search(
    db: IndexDB,
    query: str,
    *,
    scope: Scope | None = None,
    limit: int = 10,
    embedder: Embedder | None = None,
    weights: ArmWeights | None = None,
    now: str,
    mmr_lambda: float | None = None,
    resident: ResidentVectors | None = None,
    use_matrix: bool = True,
) -> SearchResult:
    """Search the index for ``query`` (docs/retrieval.md §4).

    Arms (40 candidates each): ``fts`` when the sanitised query keeps a token, ``vector`` when an embedder gives
    a non-zero query vector, ``recency`` and ``salience`` always; an arm with weight ≤ 0 is dropped. ``now`` (ISO
    UTC) is the salience reference instant. With ``mmr_lambda`` (the CLI passes ``memhtml.mmrlambda``, default
    :data:`~git_memhtml.domain.rrf.MMR_LAMBDA` 0.5) the fusion keeps ``3 × limit`` candidates and greedy MMR
    (relevance ``1/fusion position``, penalty the max cosine of the files' mean chunk vectors) picks ``limit`` of
    them; ``None`` (the default of this function: the gate and the benchmarks measure the ranking itself, see
    docs/retrieval.md) returns the fused order cut at ``limit``. ``Hit.score`` stays the fused RRF score, so
    scores need not decrease down an MMR-ordered list. With ``resident`` (the index's vectors of the embedder's
    space, loaded once by the caller) the vector arm is ranked in memory (``ResidentVectors.ranked`` over
    ``eligible_paths(db, scope)``) instead of by the SQL scan, and the query-independent recency and salience
    arms are read once per scope and ``now`` (``fixed_arm_ranks``): the same paths, ranks and scores
    (docs/retrieval.md §4.11). Without ``resident`` and with ``use_matrix`` (the default) the vector arm is ranked
    from the persistent matrix beside the index (index/matrix_read.py, synced first when stale) and the fixed arms
    are read once per scope and ``now``; when the matrix cannot stand in (missing, torn, another index, a read-only
    stale one) the SQL scan runs: the results are the same either way (docs/retrieval.md §4.12). When the query
    names identifiers (``web01``, ``1.2.1``), the candidates holding more of them, as whole FTS phrases, come first
    (:func:`~git_memhtml.index.identifiers.rank_identifiers`, docs/retrieval.md §4.3 "Identifiers").

    Raises:
        UsageError: ``limit`` < 1, or ``mmr_lambda`` outside [0, 1].
        EmbedModelMismatch: the index holds vectors of another space than ``embedder``'s, or ``resident`` holds
            another space.
        IndexStale: ``resident`` was loaded from another index, or before this one changed.
        StorageError: SQLite failed.
    """
    if limit < 1:
        raise UsageError(f"limit must be at least 1, got {limit}", hint="pass --limit 1 or more")
    if mmr_lambda is not None and not 0.0 <= mmr_lambda <= 1.0:
        raise UsageError(f"MMR lambda must be within [0, 1], got {mmr_lambda}", hint="use 0.5 (docs/retrieval.md §4)")
    scope = scope or Scope()
    weights = weights or ArmWeights()
    check_space(db, embedder)
    match = fts_match(query)
    qvec, degraded = _query_vector(embedder, query) if weights.vector > 0 else (None, False)
    arms = running_arms(weights, match=match, qvec=qvec)
    fused: list[tuple[str, float]] = []
    space = embedder.space if embedder is not None else None
    if arms:
        given: dict[Arm, Ranking] = {}
        if _absorbing(db, scope):
            given = _absorbed_arms(db, arms, scope, match=match, qvec=qvec, space=space, resident=resident,
                                   use_matrix=use_matrix)
        if resident is not None:
            resident.check(db, space if "vector" in arms else None)
            if qvec is not None and "vector" in arms and "vector" not in given:
                given["vector"] = resident.ranked(qvec, eligible_paths(db, scope), ARM_LIMIT)
        elif use_matrix and qvec is not None and space is not None and "vector" in arms and "vector" not in given:
            ranks = vector_ranks(db, qvec, space, scope, limit=ARM_LIMIT)
            if ranks is not None:
                given["vector"] = ranks
        if (resident is not None or use_matrix) and match is not None and "fts" in arms and "fts" not in given:
            given["fts"] = fts_ranks(db, match, scope, arm_limit=ARM_LIMIT)
        if resident is not None or use_matrix:
            for arm in FIXED_ARMS:
                if arm in arms:
                    given[arm] = fixed_arm_ranks(db, arm, scope, now=now, arm_limit=ARM_LIMIT)
        wanted = limit * FUSE_FACTOR if mmr_lambda is not None else limit
        sql, params = fusion_sql(arms, scope, match=match, qvec=qvec, space=space, now=now,
                                 limit=fusion_limit(query, arms, wanted), arm_limit=ARM_LIMIT, given_ranks=given)
        fused = [(str(p), float(sc)) for p, sc in db.query(sql, params)]
        fused = rank_identifiers(db, query, fused, arms, wanted, scope)
    if not fused:
        count, archived = archived_matches(db, query, scope)
        return SearchResult((), degraded, tuple(arms), scope_empty=scope.narrowed, archived_matches=count,
                            archived=archived)
    if mmr_lambda is not None:
        order = [p for p, _ in fused]
        picked = mmr(order, vectors=_file_vectors(db, order, qvec, space), lambda_=mmr_lambda, limit=limit)
        scores = dict(fused)
        fused = [(p, scores[p]) for p in picked]
    paths = [p for p, _ in fused]
    return SearchResult(tuple(hydrate(db, paths, dict(fused), qvec=qvec, space=space)), degraded, tuple(arms))


def _absorbed_arms(db: IndexDB, arms: dict[Arm, float], scope: Scope, *, match: str | None, qvec: bytes | None,
                   space: str | None, resident: ResidentVectors | None, use_matrix: bool) -> dict[Arm, Ranking]:
    """The lexical and vector arms (those of ``arms`` that run) ranked with absorbed memories standing for their
    keepers (:func:`keeper_ranks`), each read under ``replace(scope, absorbed=True)`` the way :func:`search` reads
    it otherwise (resident vectors, the matrix, else the arm's SQL)."""
    wide = replace(scope, absorbed=True)
    read = ARM_LIMIT * ABSORBED_READ
    given: dict[Arm, Ranking] = {}
    if match is not None and "fts" in arms:
        given["fts"] = keeper_ranks(db, fts_ranks(db, match, wide, arm_limit=read), scope)
    if qvec is not None and space is not None and "vector" in arms:
        ranking: Ranking | None = None
        if resident is not None:
            resident.check(db, space)
            ranking = resident.ranked(qvec, eligible_paths(db, wide), read)
        elif use_matrix:
            ranking = vector_ranks(db, qvec, space, wide, limit=read)
        if ranking is None:
            sql, params = arm_ranks_sql("vector", wide, qvec=qvec, space=space, arm_limit=read)
            ranking = [(str(p), int(r)) for p, r in db.query(sql, params)]
        given["vector"] = keeper_ranks(db, ranking, scope)
    return given


def hydrate(db: IndexDB, paths: list[str], scores: dict[str, float], *, qvec: bytes | None = None,
            space: str | None = None) -> list[Hit]:
    """Build the :class:`Hit` of each of ``paths`` (in that order): columns, entities, ``superseded_by`` and the
    snippet (the chunk nearest ``qvec`` in ``space``, else chunk 0). Paths missing from the index are skipped."""
    if not paths:
        return []
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
    for path in paths:
        row = rows.get(path)
        if row is None:
            continue
        hits.append(
            Hit(
                path=path,
                title=row[1],
                gist=row[2],
                memory_type=row[3],
                score=float(scores.get(path, 0.0)),
                confidence=float(row[4]),
                updated_at=row[5],
                snippet=_snippet(best[path][2]) if path in best else "",
                entities=tuple(entities.get(path, ())),
                superseded_by=superseded.get(path),
            )
        )
    return hits
