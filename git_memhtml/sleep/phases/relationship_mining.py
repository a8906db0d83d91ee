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

import numpy as np

from git_memhtml.domain.neighbors import top_neighbor_pairs
from git_memhtml.sleep.env import PhaseEnv, PhaseOutcome
from git_memhtml.sleep.queries import first_chunk_vectors, vector_space
from git_memhtml.sleep.scoring import GROUPING_REL, active_rows

MINING_FLOOR = 0.85
"""Cosine floor of a mined ``relates_to`` edge (docs/phases.md §0.4 "Mining cosine / k / sample")."""
MINING_K = 5
"""Neighbours kept per memory (docs/phases.md §0.4)."""
MINING_LIMIT = 2000
"""Pairs mined per night at most (docs/phases.md §0.4)."""
GROUPING_FLOOR = 0.72
"""Lower bound of the deep-only grouping band ``[0.72, 0.85)`` (docs/phases.md §1.14)."""
MINED_REL = "relates_to"

_INSERT = (
    "INSERT OR IGNORE INTO edges(src_path, rel, dst_path, edge_class, derived, strength, provenance, sleep_run, "
    "created_at) VALUES (?, ?, ?, 'memory', 1, ?, 'sleep', ?, ?)"
)
"""``OR IGNORE``: an authored edge with the same key wins over a mined one."""


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
    counts: dict[str, int] = {"candidates": 0, "mined": 0}
    if env.deep:
        counts["grouped"] = 0
    if space is None:
        return PhaseOutcome(counts, detail="no vectors")
    paths = [row.path for row in rows]
    vectors = first_chunk_vectors(env.db, paths, space)
    mined = _pairs(paths, vectors, MINING_FLOOR)
    grouped = [p for p in _pairs(paths, vectors, GROUPING_FLOOR) if p[2] < MINING_FLOOR] if env.deep else []
    counts["candidates"] = counts["mined"] = len(mined)
    if env.deep:
        counts["grouped"] = len(grouped)
    if env.dry_run:
        return PhaseOutcome(counts)
    with env.db.atomic():
        env.db.execute(
            "DELETE FROM edges WHERE derived = 1 AND provenance = 'sleep' AND rel IN (?, ?)",
            (MINED_REL, GROUPING_REL),
        )
        env.db.executemany(
            _INSERT, [(src, MINED_REL, dst, _clamp(sim), env.run_id, env.at) for src, dst, sim in mined]
        )
        env.db.executemany(
            _INSERT, [(src, GROUPING_REL, dst, _clamp(sim), env.run_id, env.at) for src, dst, sim in grouped]
        )
    return PhaseOutcome(counts)
