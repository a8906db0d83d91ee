"""Ranked lists of one probe index, computed once per query and scope (docs/gate.md §9.4).

Probes rank with the stack ``search`` uses (RRF fusion, no MMR) with its two content arms, lexical and vector, and
two pins so the verdict is a function of the two commits alone: the weights are :data:`PROBE_WEIGHTS` whatever the
store's configuration, and ``now`` is the run's own instant (its date at midnight UTC, the instant its phases
stamp).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from git_memhtml.embed.base import Embedder
from git_memhtml.index.db import IndexDB
from git_memhtml.index.ranking import ranked_paths
from git_memhtml.index.resident import ResidentVectors, eligible_paths
from git_memhtml.index.retrieval_sql import ArmWeights, Scope

PROBE_WEIGHTS = ArmWeights(fts=1.0, vector=1.0, recency=0.0, salience=0.0)
"""The probes' arm weights: the two content arms of the default weights (docs/retrieval.md §4), recency and salience
off. A probe asks whether a memory's own claim still finds it, so only what the memory says may move its rank:

- recency ranks by ``updated``, and a run stamps ``updated`` on every memory it touches, so with the default 0.5
  every memory it did *not* touch drops by construction (measured: a run that only decays the confidence of 40 of 50
  memories pushed the other 10, ranked 1–4 by their claims, out of the top 10);
- salience reads the local access plane (``state.access``), which a run does not change and forge CI cannot see.
"""

EMBED_BATCH = 256
"""Probe queries per embedder call."""


def query_vectors(embedder: Embedder | None, queries: Sequence[str]) -> tuple[dict[str, bytes | None], bool]:
    """``({query: float32-LE vector, or None for a zero row}, degraded)``, embedded in batches of
    :data:`EMBED_BATCH`. With no embedder, or when it fails, every vector is ``None`` and ``degraded`` is true: the
    probes then measure the lexical arms on both sides alike."""
    unique = sorted(set(queries))
    if embedder is None:
        return dict.fromkeys(unique), False  # lexical by configuration (embed = off), not degraded
    out: dict[str, bytes | None] = {}
    try:
        for start in range(0, len(unique), EMBED_BATCH):
            batch = unique[start:start + EMBED_BATCH]
            rows = np.asarray(embedder.embed(batch), dtype="<f4")
            for text, row in zip(batch, rows, strict=True):
                out[text] = row.tobytes() if np.any(row) else None
    except Exception:  # an embedder failure of any kind degrades every probe alike, never one side
        return dict.fromkeys(unique), True
    return out, False


@dataclass
class Ranker:
    """The ranked top-k lists of one index (base or tip)."""

    db: IndexDB
    space: str | None
    now: str
    k: int
    resident: ResidentVectors | None = None
    _eligible: dict[bool, frozenset[str]] = field(default_factory=dict)
    _cache: dict[tuple[str, bool], list[str]] = field(default_factory=dict)

    @classmethod
    def open(cls, db: IndexDB, embedder: Embedder | None, *, now: str, k: int) -> Ranker:
        """A ranker over ``db``; with an embedder its vectors are loaded once (the resident vector arm).

        Raises:
            StorageError: SQLite failed.
        """
        space = embedder.space if embedder is not None else None
        resident = ResidentVectors.load(db, space) if space is not None else None
        return cls(db, space, now, k, resident)

    def ranked(self, query: str, qvec: bytes | None, *, archived: bool = False) -> list[str]:
        """The top k paths of ``query``; ``archived`` admits archived files (an archived copy is a target)."""
        key = (query, archived)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        scope = Scope(include_archived=archived)
        eligible = None
        if self.resident is not None:
            if archived not in self._eligible:
                self._eligible[archived] = frozenset(eligible_paths(self.db, scope))
            eligible = self._eligible[archived]
        found = ranked_paths(self.db, query, qvec=qvec, space=self.space, scope=scope, limit=self.k,
                             weights=PROBE_WEIGHTS, now=self.now, resident=self.resident, eligible=eligible)
        self._cache[key] = found
        return found

    def rank(self, path: str, query: str, qvec: bytes | None, *, archived: bool = False) -> int | None:
        """1-based rank of ``path`` for ``query``, or ``None`` outside the top k."""
        found = self.ranked(query, qvec, archived=archived)
        return found.index(path) + 1 if path in found else None
