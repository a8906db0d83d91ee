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
) -> list[Pair]:
    """Exact cosine neighbour pairs at or above ``floor`` (docs/graph.md §5.5 ``topNeighborPairs``).

    Every node keeps a top-``k`` list of its neighbours with ``sim >= floor`` (ordered sim DESC, path ASC), which
    is exactly what inserting each pair into both endpoints' bounded lists produces. The union of those lists is
    returned **once per unordered pair**, oriented so that ``src < dst`` by path string (the original returned
    mirrored duplicates and left de-duplication to callers; callers that need corpus order orient themselves).

    The scan runs in the input's precision (float32 input → float32 products, anything else float64), in row
    blocks of at most :data:`BLOCK_BYTES`; the returned sims are recomputed in float64 for the chosen pairs (so a
    pair chosen at float32 precision may report a sim up to ~1e-7 below ``floor``).

    Args:
        paths: one path per row of ``vectors``; must be unique.
        vectors: ``(n, dim)`` array. Rows with zero norm have no cosine and never pair.
        floor: minimum cosine, inclusive.
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
    # Rows and columns are in path order, so argmax's first-index tie-break is the path ASC tie-break.
    kk = min(k, n - 1)
    block = max(1, BLOCK_BYTES // (unit.itemsize * n))
    found: dict[tuple[int, int], None] = {}
    for start in range(0, n, block):
        stop = min(n, start + block)
        rows = np.arange(stop - start)
        sims = unit[start:stop] @ unit.T
        sims[rows, rows + start] = -np.inf
        sims[:, ~valid] = -np.inf
        sims[~valid[start:stop], :] = -np.inf
        sims[sims < floor] = -np.inf
        live = np.flatnonzero(np.isfinite(sims).any(axis=1))
        if live.size == 0:
            continue
        sub = sims[live]
        sub_rows = np.arange(live.size)
        for _ in range(kk):
            best = sub.argmax(axis=1)
            hit = np.isfinite(sub[sub_rows, best])
            if not hit.any():
                break
            for r, j in zip(live[hit].tolist(), best[hit].tolist(), strict=True):
                i = start + r
                found[(i, j) if i < j else (j, i)] = None
            sub[sub_rows, best] = -np.inf
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
    pairs.sort(key=lambda p: (-p[2], p[0], p[1]))
    return pairs[:limit]
