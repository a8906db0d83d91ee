"""The retention pass shared by retention-triage and reprieve (docs/retention.md §4.1-4.2, docs/graph.md §5;
docs/phases.md §0.1, docs/retention.md §4.1, docs/graph.md §5).

One pass scores every active non-task memory: PageRank and bridge counts over the memory graph, inbound
``supports`` (derived included) and authored inbound ``contradicts`` counts, access counts from the state plane,
the projected confidence and the age from ``updated_at`` to the run instant; beside the score, each memory's
observed window (the days its disuse was being recorded, from ``state.observation``). The pass is recomputed by
each consumer, so a phase always scores the corpus as the index holds it at that moment.

The tree is authoritative (docs/phases.md §0 "Exclusions and reads"): a row whose file an earlier phase moved away is
not active and takes no part in the graph.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from git_memhtml.domain.graph import Edge, bridge_counts, label_propagation, pagerank
from git_memhtml.domain.reinforce import AccessState
from git_memhtml.domain.retention import (
    Band,
    RetentionInput,
    age_days,
    band,
    disuse_observed,
    observed_window_days,
    retention_score,
)
from git_memhtml.index.access import access_rows, observation_start
from git_memhtml.index.corpus import CorpusRow, active_corpus
from git_memhtml.index.db import IndexDB
from git_memhtml.index.defaults import GROUPING_ONLY_REL
from git_memhtml.index.edges import memory_edges as stored_memory_edges

MINED_RELATED = "relates_to"
"""The rel of relationship-mining's derived edges (docs/phases.md §1.5)."""
GROUPING_REL = GROUPING_ONLY_REL
"""Deep-sleep grouping band rel; its derived edges never reach scoring, PageRank or bridges (docs/phases.md §1.5)."""


@dataclass(frozen=True)
class Scored:
    """One memory's retention score in [0, 1], its band (docs/retention.md §4.2) and its observed window."""

    row: CorpusRow
    score: float
    band: Band
    observed_days: float = 0.0
    """Days over which its disuse was observed (``domain.retention.observed_window_days``): from the later of its
    ``created_at`` and the store's observation start to the run instant; 0 when the store never recorded a read."""
    community: str | None = None
    """Its community label over the memory graph (``domain.graph.label_propagation``: the smallest member path), or
    ``None`` in a community under 3 members (docs/graph.md §5.3); compress groups by it (docs/phases.md §1.10)."""

    @property
    def unobserved(self) -> bool:
        """In the evict band, but its disuse was not observed long enough to evict it
        (``domain.retention.disuse_observed``)."""
        return self.band == "evict" and not disuse_observed(self.observed_days)


def active_rows(db: IndexDB, root: Path | None = None) -> list[CorpusRow]:
    """Active non-task rows oldest first (``index.corpus.active_corpus``), minus rows whose file left ``root``.

    Args:
        root: the work tree; when given, a row whose file is missing from it is dropped (the tree wins,
            docs/phases.md §0).

    Raises:
        StorageError: the index cannot be read.
    """
    rows = active_corpus(db)
    if root is None:
        return rows
    return [row for row in rows if (root / row.path).is_file()]


def memory_edges(db: IndexDB, active: set[str],
                 related: Sequence[tuple[str, str, float]] | None = None) -> list[tuple[str, str, str, int, float]]:
    """Memory-class edges with both ends in ``active`` as ``(src, rel, dst, derived, strength)``, sorted.

    Authored edges weigh 1.0; derived ones carry their mined strength; derived ``laterally_related`` edges (the
    deep grouping band) are left out (docs/retention.md §4.2 ``memoryEdges``; docs/phases.md §1.5).

    Args:
        related: ``(src, dst, cosine)`` mined ``relates_to`` pairs that stand in for the stored derived
            ``relates_to`` rows (a dry run's deep grouping mines in memory and writes nothing, docs/deep-sleep.md);
            ``None`` reads the stored ones. A pair an authored edge of that key holds is left to the authored one.
    """
    out: list[tuple[str, str, str, int, float]] = []
    for e in stored_memory_edges(db, skip_derived_rel=GROUPING_REL):
        if related is not None and e.derived and e.rel == MINED_RELATED:
            continue
        if e.src in active and e.dst in active:
            out.append((e.src, e.rel, e.dst, e.derived, e.strength if e.derived else 1.0))
    if related is not None:
        authored = {(src, rel, dst) for src, rel, dst, derived, _ in out if not derived}
        out += [(src, MINED_RELATED, dst, 1, min(1.0, max(0.0, sim))) for src, dst, sim in related
                if src in active and dst in active and (src, MINED_RELATED, dst) not in authored]
        out.sort(key=lambda e: (e[0], e[1], e[2]))
    return out


def retention_pass(db: IndexDB, *, at: str, root: Path | None = None,
                   related: Sequence[tuple[str, str, float]] | None = None) -> list[Scored]:
    """Score every active non-task memory at instant ``at`` (docs/retention.md §4.1-4.2), in corpus order.

    Args:
        at: the run instant (``env.at``); ages are days from ``updated_at`` to it, clamped at 0.
        root: the work tree, so rows whose files are gone are skipped (see :func:`active_rows`).
        related: mined ``relates_to`` pairs standing in for the stored ones (:func:`memory_edges`).

    Returns:
        One :class:`Scored` per active row, oldest first.

    Raises:
        StorageError: the index cannot be read.
    """
    rows = active_rows(db, root)
    paths = {row.path for row in rows}
    edges = memory_edges(db, paths, related)
    graph_edges: list[Edge] = [(src, dst, strength) for src, _rel, dst, _derived, strength in edges]
    ranks = pagerank(sorted(paths), graph_edges)
    communities = label_propagation(sorted(paths), graph_edges)
    bridges = bridge_counts(sorted(paths), graph_edges, communities)
    max_rank = max(ranks.values(), default=0.0)
    supports: dict[str, int] = {}
    contradictions: dict[str, int] = {}
    for _src, rel, dst, derived, _strength in edges:
        if rel == "supports":
            supports[dst] = supports.get(dst, 0) + 1
        elif rel == "contradicts" and derived == 0:
            contradictions[dst] = contradictions.get(dst, 0) + 1
    access = access_rows(db)
    since = observation_start(db)
    return [replace(_score(row, at, since, ranks, max_rank, bridges, supports, contradictions, access),
                    community=communities.get(row.path)) for row in rows]


def _score(
    row: CorpusRow,
    at: str,
    observed_since: str | None,
    ranks: Mapping[str, float],
    max_rank: float,
    bridges: Mapping[str, int],
    supports: Mapping[str, int],
    contradictions: Mapping[str, int],
    access: Mapping[str, AccessState],
) -> Scored:
    inp = RetentionInput(
        memory_type=row.memory_type,
        age_days=_age(row.updated_at, at),
        access_count=access.get(row.path, AccessState()).access_count,
        confidence=row.confidence,
        pagerank=ranks.get(row.path, 0.0),
        max_pagerank=max_rank,
        bridges=bridges.get(row.path, 0),
        reinforcements=supports.get(row.path, 0),
        word_count=row.word_count,
        contradictions=contradictions.get(row.path, 0),
    )
    score = retention_score(inp)
    return Scored(row=row, score=score, band=band(score), observed_days=_window(row.created_at, observed_since, at))


def _age(updated_at: str, at: str) -> float:
    """Days from ``updated_at`` to ``at``; an unparseable stamp reads as age 0 (never a crash on a bad file)."""
    try:
        return age_days(_instant(updated_at), at)
    except (ValueError, TypeError):
        return 0.0


def _window(created_at: str, observed_since: str | None, at: str) -> float:
    """The observed window in days; an unparseable run instant reads as 0 (nothing is evicted on it)."""
    try:
        return observed_window_days(created_at, observed_since, at)
    except (ValueError, TypeError):
        return 0.0


def _instant(value: str) -> str:
    """A bare ``YYYY-MM-DD`` becomes midnight UTC; anything else is passed through."""
    return f"{value}T00:00:00Z" if len(value) == 10 else value
