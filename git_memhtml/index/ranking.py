"""The fused ranking alone: :func:`git_memhtml.index.retrieval.search` without hydration, for callers that run many
queries and read only positions (the run gate, docs/gate.md §9).

The query vector is passed in, so a caller embeds its queries once, in one batch, and ranks them on several
indexes; the vector arm can come from a :class:`~git_memhtml.index.resident.ResidentVectors` matrix (the same order
as the SQL arm, docs/retrieval.md), which is what makes hundreds of queries at 10k memories cheap. The
query-independent arms (recency, salience) are read once per open index, scope and instant
(:func:`~git_memhtml.index.resident.fixed_arm_ranks`, as ``search(resident=)`` reads them): in SQL they sort every
admitted file again for each query (the run gate's 500 probes at 10k memories: 11.5 s → 9.6 s, bench/README.md).
"""

from __future__ import annotations

from git_memhtml.index.db import IndexDB
from git_memhtml.index.identifiers import fusion_limit, rank_identifiers
from git_memhtml.index.resident import FIXED_ARMS, ResidentVectors, fixed_arm_ranks
from git_memhtml.index.retrieval_sql import (
    ARM_LIMIT,
    Arm,
    ArmWeights,
    Ranking,
    Scope,
    fts_match,
    fusion_sql,
    running_arms,
)


def ranked_paths(
    db: IndexDB,
    query: str,
    *,
    qvec: bytes | None,
    space: str | None,
    scope: Scope,
    limit: int,
    weights: ArmWeights,
    now: str,
    resident: ResidentVectors | None = None,
    eligible: frozenset[str] | None = None,
) -> list[str]:
    """The first ``limit`` paths of the RRF fusion of ``query`` (``search``'s arms and order, no MMR); the recency
    and salience arms come from :func:`~git_memhtml.index.resident.fixed_arm_ranks` (module docstring).

    Args:
        qvec: the float32-LE query vector, or ``None`` (no vector arm: no embedder, or a zero vector).
        space: the vector space of ``qvec`` (``embedder.space``).
        resident: when given, the vector arm is ranked from it over ``eligible`` (the paths ``scope`` admits, from
            :func:`~git_memhtml.index.resident.eligible_paths`); otherwise by the SQL scan.
        now: ISO UTC instant of the salience arm.

    Raises:
        StorageError: SQLite failed.
    """
    match = fts_match(query)
    arms = running_arms(weights, match=match, qvec=qvec)
    if not arms:
        return []
    given: dict[Arm, Ranking] = {arm: fixed_arm_ranks(db, arm, scope, now=now, arm_limit=ARM_LIMIT)
                                 for arm in FIXED_ARMS if arm in arms}
    if resident is not None and "vector" in arms and qvec is not None:
        given["vector"] = resident.ranked(qvec, eligible, ARM_LIMIT)
    sql, params = fusion_sql(arms, scope, match=match, qvec=qvec, space=space, now=now,
                             limit=fusion_limit(query, arms, limit), arm_limit=ARM_LIMIT, given_ranks=given)
    fused = [(str(path), float(score)) for path, score in db.query(sql, params)]
    return [path for path, _ in rank_identifiers(db, query, fused, arms, limit, scope)]
