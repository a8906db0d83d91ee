"""Phase 5, relationship-mining: derived ``relates_to`` edges in the index only (docs/phases.md §1.5; docs/phases.md §1,
§0.1, §1.14).

The exact neighbour scan over first-chunk vectors of active non-task memories proposes every pair at cosine
>= 0.85 (top 5 per node, 2000 pairs at most). The previous night's derived edges are replaced in one transaction,
so a crash leaves either the old set or the new one. The phase never commits (``NON_COMMITTING_PHASES``): mined
edges are index rows, never file links. Tasks never enter (the graph firewall, docs/phases.md §0.1).

Under ``--deep`` the grouping band ``[0.72, 0.85)`` is mined as derived ``laterally_related`` edges, which only
the deep grouping reads (docs/phases.md §1.14); a night without ``--deep`` drops any left from an earlier deep night.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from git_memhtml.domain.neighbors import top_neighbor_pairs
from git_memhtml.index.corpus import first_chunk_vectors
from git_memhtml.index.edges import MinedEdge, replace_mined_edges
from git_memhtml.index.watermark import vector_space
from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.sleep.phases.scoring import GROUPING_REL, active_rows

MINING_FLOOR = 0.85
"""Cosine floor of a mined ``relates_to`` edge (docs/phases.md §0.4 "Mining cosine / k / sample")."""
MINING_K = 5
"""Neighbours kept per memory (docs/phases.md §0.4)."""
MINING_LIMIT = 2000
"""Pairs mined per night at most (docs/phases.md §0.4)."""
GROUPING_FLOOR = 0.72
"""Lower bound of the deep-only grouping band ``[0.72, 0.85)`` (docs/phases.md §1.14)."""
MINED_REL = "relates_to"

@dataclass(frozen=True)
class RelationshipMiningCounts(PhaseCounts):
    """``candidates`` and ``mined`` (equal); ``grouped`` only under ``--deep``."""

    candidates: int = 0
    mined: int = 0
    grouped: int | None = None


def _pairs(paths: list[str], vectors: np.ndarray, floor: float) -> list[tuple[str, str, float]]:
    if len(paths) < 2 or vectors.shape[1] == 0:
        return []
    return top_neighbor_pairs(paths, vectors, floor=floor, k=MINING_K, limit=MINING_LIMIT)


def _clamp(sim: float) -> float:
    return min(1.0, max(0.0, sim))


def run(env: PhaseEnv) -> PhaseOutcome:
    """Mine and replace the derived edges; return ``candidates``/``mined`` (equal) and, deep, ``grouped``.

    Detail ``no vectors`` when the index holds no vector space (embedding off): nothing is replaced then, because
    an empty scan says nothing about the corpus. On a dry run the scan runs and nothing is written.

    Raises:
        StorageError: the index cannot be read or written.
    """
    rows = active_rows(env.db, env.repo.root)
    space = env.embedder.space if env.embedder is not None else vector_space(env.db)
    counts = RelationshipMiningCounts(grouped=0 if env.deep else None)
    if space is None:
        return PhaseOutcome(counts, detail="no vectors")
    paths = [row.path for row in rows]
    vectors = first_chunk_vectors(env.db, paths, space)
    mined = _pairs(paths, vectors, MINING_FLOOR)
    grouped = [p for p in _pairs(paths, vectors, GROUPING_FLOOR) if p[2] < MINING_FLOOR] if env.deep else []
    counts = RelationshipMiningCounts(len(mined), len(mined), len(grouped) if env.deep else None)
    if env.dry_run:
        return PhaseOutcome(counts)
    replace_mined_edges(
        env.db,
        [
            (MINED_REL, [MinedEdge(src, dst, _clamp(sim)) for src, dst, sim in mined]),
            (GROUPING_REL, [MinedEdge(src, dst, _clamp(sim)) for src, dst, sim in grouped]),
        ],
        run_id=env.run_id,
        at=env.at,
    )
    return PhaseOutcome(counts)


register(PhaseSpec("relationship-mining", run, RelationshipMiningCounts, commits=False))
