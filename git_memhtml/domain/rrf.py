"""Reciprocal rank fusion and greedy MMR diversification (docs/retrieval.md §4.3 "Fusion" and "Search").

The index builds the same fusion in one SQL statement (``index.retrieval_sql.rrf_sql``); :func:`rrf_fuse` is the
reference arithmetic, held to the SQL's order and scores by a differential test
(tests/index/test_sql_matches_domain.py). :func:`mmr` is what search runs. Pure; numpy for the cosine penalty.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

RRF_K = 60
"""Rank offset of reciprocal rank fusion: each arm adds ``w / (rank + 60)`` (docs/retrieval.md §4; docs/gate.md
§8.4)."""

MMR_LAMBDA = 0.5
"""Relevance weight of greedy MMR (docs/retrieval.md §4.6 "Search")."""


def rrf_fuse(
    arms: Mapping[str, Sequence[str]],
    weights: Mapping[str, float],
    *,
    k: int = RRF_K,
) -> list[tuple[str, float]]:
    """Fuse ranked arms into one list (docs/retrieval.md §4.3 "Fusion").

    Args:
        arms: arm name → paths in rank order (rank 1 first). A path repeated within one arm counts at its first
            rank only.
        weights: arm name → weight; an arm without a weight is dropped (weight 0 contributes nothing).
        k: rank offset.

    Returns:
        ``[(path, score)]`` with ``score = Σ_arms w / (rank + k)``, ordered score DESC then path ASC. Arms are
        summed in sorted arm-name order so the float result is order-independent.
    """
    scores: dict[str, float] = {}
    for arm in sorted(arms):
        weight = weights.get(arm)
        if weight is None:
            continue
        seen: set[str] = set()
        for rank, path in enumerate(arms[arm], start=1):
            if path in seen:
                continue
            seen.add(path)
            scores[path] = scores.get(path, 0.0) + weight / (rank + k)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def _unit(vector: np.ndarray | None) -> np.ndarray | None:
    if vector is None:
        return None
    vec = np.asarray(vector, dtype=np.float64).ravel()
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm > 0 else None


def mmr(
    candidates: Sequence[str],
    relevance: Mapping[str, float] | None = None,
    vectors: Mapping[str, np.ndarray] | None = None,
    lambda_: float = MMR_LAMBDA,
    limit: int = 10,
) -> list[str]:
    """Greedy maximal marginal relevance over fused candidates (docs/retrieval.md §4.6 "Search").

    Args:
        candidates: paths in fusion order.
        relevance: path → relevance; default ``1 / (fusion position)``, position from 1.
        vectors: path → vector; a path without a (non-zero) vector has penalty 0.
        lambda_: relevance weight; the objective is ``λ·rel − (1−λ)·max cosine to the chosen``.
        limit: how many to pick.

    Returns:
        Up to ``limit`` paths in pick order; ties go to the earlier fusion position.
    """
    order = list(dict.fromkeys(candidates))
    rel = {path: (relevance[path] if relevance is not None and path in relevance else 1.0 / (i + 1))
           for i, path in enumerate(order)}
    units = {path: _unit(vectors.get(path)) if vectors is not None else None for path in order}
    chosen: list[str] = []
    penalty = dict.fromkeys(order, 0.0)
    remaining = list(order)
    while remaining and len(chosen) < limit:
        best = max(
            range(len(remaining)),
            key=lambda idx: (lambda_ * rel[remaining[idx]] - (1 - lambda_) * penalty[remaining[idx]], -idx),
        )
        pick = remaining.pop(best)
        chosen.append(pick)
        picked = units[pick]
        if picked is None:
            continue
        for path in remaining:
            vec = units[path]
            if vec is not None:
                penalty[path] = max(penalty[path], float(vec @ picked))
    return chosen


IDENTIFIER_MAX = 8
"""Identifiers of one query that are checked (the first ones, in query order); a bound on the phrase look-ups a
query costs, our decision (docs/retrieval.md §4.3 "Identifiers": real queries name one or two)."""

_WORD = re.compile(r"\S+")
_RUN = re.compile(r"[^\W_]+")
"""Letter/digit runs: the FTS5 ``unicode61`` token characters, as ``retrieval_sql._TOKEN`` (docs/retrieval.md §4.2)."""


def identifier_phrases(query: str) -> list[tuple[str, ...]]:
    """The identifiers of ``query``, each as the FTS token sequence it must match whole (docs/retrieval.md §4.3
    "Identifiers").

    A word of ``query`` (a run of non-space characters) is an identifier when it holds a decimal digit and is a
    name rather than a number: its letter/digit runs mix letters and digits (``web01``, ``zq2``, ``v2``), or it
    joins two or more runs by separators (``1.2.1``, ``INC-10423``, ``2024-03-15``, ``10:30``), or it is a bare
    number marked as a reference by a leading ``#`` (``#4521``). A bare number (``2023``, ``9``, ``13,``) is not:
    in prose it is a count, a year or a day, which memories spell in other ways. Its tokens are its lowercased
    letter/digit runs, the runs the FTS tokenizer splits it into (``1.2.1`` → ``("1", "2", "1")``). Unique, first
    occurrence order, at most :data:`IDENTIFIER_MAX`.
    """
    found: dict[tuple[str, ...], None] = {}
    for word in _WORD.findall(query):
        runs = tuple(_RUN.findall(word.lower()))
        if not any(ch.isdecimal() for run in runs for ch in run):
            continue
        mixed = any(any(ch.isdecimal() for ch in run) and not run.isdecimal() for run in runs)
        if len(runs) > 1 or mixed or word.startswith("#"):
            found.setdefault(runs, None)
    return list(found)[:IDENTIFIER_MAX]


def identifier_first(fused: Sequence[tuple[str, float]], matched: Mapping[str, int]) -> list[tuple[str, float]]:
    """Reorder a fused list so that candidates holding more of the query's identifiers come first
    (docs/retrieval.md §4.3 "Identifiers").

    Args:
        fused: ``[(path, score)]`` in fusion order.
        matched: path → how many of the query's identifiers it holds (a missing path holds none).

    Returns:
        The same pairs, sorted by identifiers held DESC, then fusion position (stable): with no identifier held
        anywhere the order is unchanged. Scores are kept, so they need not decrease down the list.
    """
    return [pair for _, pair in sorted(enumerate(fused), key=lambda item: (-matched.get(item[1][0], 0), item[0]))]
