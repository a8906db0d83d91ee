"""Phase 5, relationship-mining: derived ``relates_to`` edges in the index only (docs/phases.md §1.5; docs/phases.md §1,
§0.1, §1.14).

The exact neighbour scan over first-chunk vectors of active non-task memories proposes every pair at cosine
>= 0.85 (top 5 per node, 2000 pairs at most). The previous night's derived edges are replaced in one transaction,
so a crash leaves either the old set or the new one. The phase never commits (``NON_COMMITTING_PHASES``): mined
edges are index rows, never file links. Tasks never enter (the graph firewall, docs/phases.md §0.1).

Under ``--deep`` the grouping band ``[0.72, 0.85)`` is mined as derived ``laterally_related`` edges, which only
the deep grouping reads (compress's widened communities, docs/phases.md §1.10, docs/deep-sleep.md); a night without
``--deep`` drops any left from an earlier deep night. Retention scoring, PageRank, bridges, ``neighbors`` and search
never read them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from git_memhtml.domain.neighbors import top_neighbor_pairs
from git_memhtml.index.corpus import CorpusRow, first_chunk_vectors
from git_memhtml.index.edges import MinedEdge, replace_mined_edges
from git_memhtml.index.watermark import vector_space
from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.sleep.phases.scoring import GROUPING_REL, active_rows

MINING_FLOOR = 0.85
"""Cosine floor of a mined ``relates_to`` edge (docs/phases.md §0.4 "Mining cosine / k / sample")."""
MINING_K = 5
"""Neighbours kept per memory (docs/phases.md §0.4); the grouping band keeps its own 5."""
MINING_LIMIT = 2000
"""Pairs mined per night at most (docs/phases.md §0.4); the grouping band has its own 2000."""
GROUPING_FLOOR = 0.72
"""Lower bound of the deep-only grouping band ``[0.72, 0.85)`` (docs/phases.md §0.4 ``GROUPING_FLOOR``, §1.5)."""
MINED_REL = "relates_to"


@dataclass(frozen=True)
class RelationshipMiningCounts(PhaseCounts):
    """``candidates`` and ``mined`` (equal); ``grouped`` (band edges) only under ``--deep``."""

    candidates: int = 0
    mined: int = 0
    grouped: int | None = None


@dataclass(frozen=True)
class Mined:
    """One mining scan: ``related`` pairs at cosine >= 0.85 and, under ``--deep``, ``band`` pairs in
    ``[0.72, 0.85)``; each ``(src, dst, cosine)`` with ``src < dst`` by path."""

    related: list[tuple[str, str, float]]
    band: list[tuple[str, str, float]]


def _pairs(paths: list[str], vectors: np.ndarray, floor: float,
           ceiling: float | None = None) -> list[tuple[str, str, float]]:
    if len(paths) < 2 or vectors.shape[1] == 0:
        return []
    return top_neighbor_pairs(paths, vectors, floor=floor, k=MINING_K, limit=MINING_LIMIT, ceiling=ceiling)


def _clamp(sim: float) -> float:
    return min(1.0, max(0.0, sim))


def mine(env: PhaseEnv, rows: Sequence[CorpusRow] | None = None, *, deep: bool | None = None) -> Mined | None:
    """Scan the first-chunk vectors of the active non-task corpus (``rows``, default :func:`scoring.active_rows`).

    The band is scanned on its own (``top_neighbor_pairs`` with a ceiling of :data:`MINING_FLOOR`): each memory
    keeps its 5 best partners *inside* the band, so a memory with five neighbours above 0.85 still gets its band
    edges, and the ``relates_to`` set is the same with or without ``--deep``. A pair whose float64 cosine lands on
    the other side of a bound than its float32 scan said is left out of the band (docs/graph.md §5.5).

    Args:
        deep: mine the band; default ``env.deep``.

    Returns:
        ``None`` when the index holds no vector space (embedding off).

    Raises:
        StorageError: the index cannot be read.
    """
    space = env.embedder.space if env.embedder is not None else vector_space(env.db)
    if space is None:
        return None
    chosen = list(rows) if rows is not None else active_rows(env.db, env.repo.root)
    paths = [row.path for row in chosen]
    vectors = first_chunk_vectors(env.db, paths, space)
    related = _pairs(paths, vectors, MINING_FLOOR)
    band: list[tuple[str, str, float]] = []
    if env.deep if deep is None else deep:
        band = [p for p in _pairs(paths, vectors, GROUPING_FLOOR, MINING_FLOOR)
                if GROUPING_FLOOR <= p[2] < MINING_FLOOR]
    return Mined(related, band)


def store(env: PhaseEnv, mined: Mined) -> None:
    """Replace the derived ``relates_to`` and ``laterally_related`` edges with ``mined`` in one transaction (a night
    without ``--deep`` stores an empty band, dropping an earlier deep night's).

    Raises:
        StorageError: the index cannot be written.
    """
    replace_mined_edges(
        env.db,
        [
            (MINED_REL, [MinedEdge(src, dst, _clamp(sim)) for src, dst, sim in mined.related]),
            (GROUPING_REL, [MinedEdge(src, dst, _clamp(sim)) for src, dst, sim in mined.band]),
        ],
        run_id=env.run_id,
        at=env.at,
    )


def run(env: PhaseEnv) -> PhaseOutcome:
    """Mine and replace the derived edges; return ``candidates``/``mined`` (equal) and, deep, ``grouped``.

    Detail ``no vectors`` when the index holds no vector space (embedding off): nothing is replaced then, because
    an empty scan says nothing about the corpus. On a dry run the scan runs and nothing is written.

    Raises:
        StorageError: the index cannot be read or written.
    """
    mined = mine(env)
    if mined is None:
        return PhaseOutcome(RelationshipMiningCounts(grouped=0 if env.deep else None), detail="no vectors")
    counts = RelationshipMiningCounts(len(mined.related), len(mined.related),
                                      len(mined.band) if env.deep else None)
    if not env.dry_run:
        store(env, mined)
    return PhaseOutcome(counts)


register(PhaseSpec("relationship-mining", run, RelationshipMiningCounts, commits=False))
