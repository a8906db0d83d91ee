"""Exact cosine neighbour pairs for mining, dedup and edge typing (docs/graph.md §5.5; docs/phases.md §0.4).

The original decoded each vector once because a per-pair SQL UDF scan ran out of memory on 2,907 files
(docs/graph.md §5.5). Here norms are computed once and the n x n similarity is produced block by block with a
matrix product, so memory stays bounded (about :data:`BLOCK_BYTES` per block) while the scan is exact.
Pure; numpy only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Pair = tuple[str, str, float]

BLOCK_BYTES = 64 * 1024 * 1024
"""Upper bound on the float64 similarity block held at once (an implementation choice, not from the spec)."""


TIE_DECIMALS_F64 = 12
"""Decimals a float64 cosine is ranked at. A dot product of unit vectors carries rounding noise of a few ulps
(~1e-15) that depends on the BLAS kernel and CPU, so two pairs with one true cosine (near-identical notes) would be
ordered by hardware; ranked at 1e-12 they tie and the path breaks the tie, on every machine (an implementation
choice, not from the spec)."""

TIE_DECIMALS_F32 = 6
"""Decimals a float32 cosine is ranked at (float32 products carry noise of ~1e-7; same reasoning)."""


def tie_key(sim: float) -> float:
    """The value a float64 cosine ``sim`` is *ranked* by: ``sim`` rounded to :data:`TIE_DECIMALS_F64` decimals.

    Every ranking of cosines in sleep (mining, dedup, edge typing) sorts by this key and then by path, so results
    do not depend on the machine's floating-point kernel. The reported cosine stays unrounded.
    """
    return round(sim, TIE_DECIMALS_F64)


def rank_values(sims: np.ndarray) -> np.ndarray:
    """:func:`tie_key` over an array: float32 at :data:`TIE_DECIMALS_F32`, anything else at the float64 decimals."""
    decimals = TIE_DECIMALS_F32 if sims.dtype == np.float32 else TIE_DECIMALS_F64
    return np.round(sims.astype(np.float64), decimals)


COMPACT_AT = 4_000_000
"""Candidate list entries held before they are cut to each node's top ``k`` (bounds memory when ``floor`` admits
many pairs; an implementation choice, not from the spec)."""


def _keep_top(node: np.ndarray, other: np.ndarray, sim: np.ndarray, kk: int) -> tuple[np.ndarray, ...]:
    """The first ``kk`` entries of each node's list ordered sim DESC, then ``other`` ASC (path ASC)."""
    order = np.lexsort((other, -sim, node))
    node, other, sim = node[order], other[order], sim[order]
    starts = np.flatnonzero(np.r_[True, node[1:] != node[:-1]])
    rank = np.arange(node.size) - np.repeat(starts, np.diff(np.r_[starts, node.size]))
    keep = rank < kk
    return node[keep], other[keep], sim[keep]


def _unit_rows(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    matrix = np.asarray(vectors)
    if matrix.ndim != 2:
        raise ValueError(f"vectors must be 2-D (n, dim), got shape {matrix.shape}")
    dtype = np.float32 if matrix.dtype == np.float32 else np.float64
    matrix = matrix.astype(dtype, copy=False)
    norms = np.linalg.norm(matrix.astype(np.float64), axis=1)
    valid = norms > 0
    unit = np.zeros_like(matrix)
    unit[valid] = (matrix[valid] / norms[valid, None]).astype(dtype)
    return unit, valid


def top_neighbor_pairs(
    paths: Sequence[str],
    vectors: np.ndarray,
    *,
    floor: float,
    k: int,
    limit: int,
    ceiling: float | None = None,
) -> list[Pair]:
    """Exact cosine neighbour pairs at or above ``floor`` (docs/graph.md §5.5 ``topNeighborPairs``).

    Every node keeps a top-``k`` list of its neighbours with ``sim >= floor`` (ordered sim DESC, path ASC, sims
    compared at the tie quantum of :func:`rank_values`), which is exactly what inserting each pair into both
    endpoints' bounded lists produces. The union of those lists is
    returned **once per unordered pair**, oriented so that ``src < dst`` by path string (the original returned
    mirrored duplicates and left de-duplication to callers; callers that need corpus order orient themselves).

    The scan runs in the input's precision (float32 input → float32 products, anything else float64), in row
    blocks of at most :data:`BLOCK_BYTES`, each against the rows after its first only (the upper triangle: every
    pair is computed once, half the products of a full scan); only the pairs at or above ``floor`` are kept, cut
    to each node's top ``k`` whenever more than :data:`COMPACT_AT` entries are held. Cost: n²·dim/2 multiply-adds
    and one comparison per pair, so the scan stays quadratic (an exact all-pairs answer needs every pair); memory
    is one block plus the candidates. The returned sims are recomputed in float64 for the chosen pairs (so a
    pair chosen at float32 precision may report a sim up to ~1e-7 below ``floor``).

    Args:
        paths: one path per row of ``vectors``; must be unique.
        vectors: ``(n, dim)`` array. Rows with zero norm have no cosine and never pair.
        floor: minimum cosine, inclusive.
        ceiling: maximum cosine, exclusive (``None``: no ceiling). A node's top ``k`` is then taken among its
            neighbours inside ``[floor, ceiling)`` only, so a band is mined on its own and not crowded out by the
            pairs above it (the deep grouping band, docs/phases.md §1.5).
        k: per-node list size (``k <= 0`` yields nothing).
        limit: maximum pairs returned.

    Returns:
        ``[(src, dst, sim)]`` sorted by sim DESC, src ASC, dst ASC, cut at ``limit``.

    Raises:
        ValueError: shape mismatch, non-2-D vectors or duplicate paths.
    """
    n = len(paths)
    if vectors.shape[0] != n:
        raise ValueError(f"{n} paths but {vectors.shape[0]} vectors")
    if len(set(paths)) != n:
        raise ValueError("paths must be unique")
    if n < 2 or k <= 0 or limit <= 0:
        return []
    order = sorted(range(n), key=lambda i: paths[i])
    names = [paths[i] for i in order]
    unit, valid = _unit_rows(np.asarray(vectors)[order])
    live = np.flatnonzero(valid)  # path order is kept, so an index order tie-break is the path ASC tie-break
    packed = unit[live]
    m = len(live)
    kk = min(k, n - 1)
    block = max(1, BLOCK_BYTES // (packed.itemsize * max(m, 1)))
    node_parts: list[np.ndarray] = []
    other_parts: list[np.ndarray] = []
    sim_parts: list[np.ndarray] = []
    held = 0
    for start in range(0, m, block):
        stop = min(m, start + block)
        sims = packed[start:stop] @ packed[start:].T  # the upper triangle only: column c is row start + c
        inside = sims >= floor if ceiling is None else (sims >= floor) & (sims < ceiling)
        r, c = np.nonzero(inside)
        upper = c > r
        r, c = r[upper], c[upper]
        if r.size == 0:
            continue
        value = rank_values(sims[r, c])  # ranked at the tie quantum, so noise never picks a neighbour
        a, b = r + start, c + start
        node_parts += [a, b]  # each pair enters both endpoints' lists
        other_parts += [b, a]
        sim_parts += [value, value]
        held += 2 * r.size
        if held > COMPACT_AT:
            merged = _keep_top(np.concatenate(node_parts), np.concatenate(other_parts), np.concatenate(sim_parts), kk)
            node_parts, other_parts, sim_parts = [merged[0]], [merged[1]], [merged[2]]
            held = merged[0].size
    if not node_parts:
        return []
    chosen_node, chosen_other, _ = _keep_top(np.concatenate(node_parts), np.concatenate(other_parts),
                                             np.concatenate(sim_parts), kk)
    low = live[np.minimum(chosen_node, chosen_other)]
    high = live[np.maximum(chosen_node, chosen_other)]
    found = dict.fromkeys(zip(low.tolist(), high.tolist(), strict=True))
    if not found:
        return []
    keys = list(found)
    left = np.array([a for a, _ in keys], dtype=np.int64)
    right = np.array([b for _, b in keys], dtype=np.int64)
    needed = np.union1d(left, right)
    original_rows = np.asarray(order, dtype=np.int64)[needed]
    exact, _ = _unit_rows(np.asarray(vectors, dtype=np.float64)[original_rows])
    lpos = np.searchsorted(needed, left)
    rpos = np.searchsorted(needed, right)
    values = np.einsum("ij,ij->i", exact[lpos], exact[rpos])
    pairs = [(names[a], names[b], float(v)) for (a, b), v in zip(keys, values, strict=True)]
    pairs.sort(key=lambda p: (-tie_key(p[2]), p[0], p[1]))
    return pairs[:limit]
