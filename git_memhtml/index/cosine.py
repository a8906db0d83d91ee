"""sqlite-vec's cosine distance repeated in numpy, bit for bit, its error bound, and the one exact ranking of paths
that both in-memory vector arms share: the resident copy (index/resident.py) and the persistent matrix
(index/matrix_read.py) (docs/retrieval.md §4.11-§4.12).

A vector arm ranks paths by the smallest ``vec_distance_cosine`` of their chunks, a NULL distance never ranking,
ties by path ascending, at most ``limit`` paths. Each arm computes a cheap approximate distance per row (float64
unit rows, or float32 ``M @ q̂`` times ``1/‖v‖``); :func:`rank_paths` keeps every path within ``margin`` of the
``limit``-th best approximate one (and every path with a row the approximation does not cover), re-scores only
those rows the sqlite-vec way, and orders the paths exactly as the SQL arm does.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

F32_UNIT_ROUNDOFF = 2.0**-24
"""``u`` of IEEE binary32 (round to nearest): the relative error of one float32 operation."""
SAFE_SQUARED_NORM = (2.0**-80, 2.0**80)
SAFE_COMPONENT = 2.0**40
"""A vector is *regular* when every component is finite with ``|x| ≤ 2^40`` and its float32 squared norm lies in
``[2^-80, 2^80]``: no float32 product or sum of it overflows and underflow errors stay below ``2^-60`` relative, which
:func:`distance_error_bound` covers. Others are scored the sqlite-vec way for every query."""
LOAD_BLOCK_ROWS = 4096
"""Rows per block when float32 squared norms are computed (bounds the temporary array)."""

F64 = npt.NDArray[np.float64]
F32 = npt.NDArray[np.float32]
Rows = npt.NDArray[np.intp]
Flags = npt.NDArray[np.bool_]


def distance_error_bound(dim: int) -> float:
    """An upper bound of ``|sqlite-vec distance − float64 distance|`` for regular vectors of ``dim`` components,
    with a factor 2 of head-room: ``2·(2γ_n + 3u + (n + 8)·2^-50 + n·2^-60)``, ``γ_n = nu/(1 − nu)``,
    ``u = 2^-24``. ``γ_n`` bounds the float32 dot product and each squared norm (Higham, *Accuracy and Stability of
    Numerical Algorithms*, §3.1), the cosine then errs by at most ``2γ_n``; ``3u`` covers the final rounding to
    float32 of a value in [0, 2]; the ``2^-50`` term the float64 side, the ``2^-60`` term float32 underflow.
    Infinite when ``nu ≥ 1/2`` (no bound: every row is then scored exactly)."""
    nu = dim * F32_UNIT_ROUNDOFF
    if nu >= 0.5:
        return float("inf")
    gamma = nu / (1.0 - nu)
    return 2.0 * (2.0 * gamma + 3.0 * F32_UNIT_ROUNDOFF + (dim + 8) * 2.0**-50 + dim * 2.0**-60)


def _f32_sums(x: F32, y: F32) -> F32:
    """Per row of ``x``, ``Σ x_i·y_i`` as sqlite-vec's C loop computes it: each product rounded to float32, added
    left to right in float32 (``np.add.accumulate`` is sequential, unlike ``sum``)."""
    return np.add.accumulate(x * y, axis=1, dtype=np.float32)[:, -1]


def sqlite_vec_cosine(rows: F32, row_mags: F32, query: F32, query_mag: np.float32) -> F64:
    """``vec_distance_cosine(row, query)`` of each row of ``rows`` (float32, ``(k, dim)``), NaN where SQL gives NULL.

    ``row_mags`` and ``query_mag`` are the float32 squared norms from :func:`squared_norms_f32`. sqlite-vec 0.1.x
    ``distance_cosine_float``: ``1 - (dot / (sqrt(aMag) * sqrt(bMag)))`` with ``dot``/``aMag``/``bMag`` float32
    accumulators, ``sqrt`` and the division in double, the result returned as float32 (a NaN is SQL NULL)."""
    with np.errstate(all="ignore"):  # overflow, 0/0 and inf/inf are part of the arithmetic being repeated
        dot = _f32_sums(rows, np.broadcast_to(query, rows.shape))
        value = 1.0 - dot.astype(np.float64) / (np.sqrt(row_mags.astype(np.float64)) * np.sqrt(np.float64(query_mag)))
    out: F64 = value.astype(np.float32).astype(np.float64)
    return out


def squared_norms_f32(rows: F32) -> F32:
    """sqlite-vec's float32 ``Σ x_i²`` of each row (see :func:`sqlite_vec_cosine`), in blocks of
    :data:`LOAD_BLOCK_ROWS`."""
    out = np.empty(rows.shape[0], dtype=np.float32)
    with np.errstate(all="ignore"):
        for start in range(0, rows.shape[0], LOAD_BLOCK_ROWS):
            block = rows[start : start + LOAD_BLOCK_ROWS]
            out[start : start + LOAD_BLOCK_ROWS] = _f32_sums(block, block)
    return out


def regular_rows(rows: F32, mags: F32) -> npt.NDArray[np.bool_]:
    """Which rows are regular (:data:`SAFE_COMPONENT`, :data:`SAFE_SQUARED_NORM`)."""
    with np.errstate(all="ignore"):
        bounded = np.all(np.abs(rows) <= SAFE_COMPONENT, axis=1)  # False for NaN and ±inf
    low, high = SAFE_SQUARED_NORM
    out: npt.NDArray[np.bool_] = bounded & (mags >= low) & (mags <= high)
    return out


def query_parts(qvec: bytes) -> tuple[F32, np.float32, F64 | None]:
    """``(query, its float32 squared norm, its float64 unit vector)`` of ``qvec`` (float32 little-endian); the unit
    vector is ``None`` when the query is irregular (:func:`regular_rows`): no approximation covers it, so every
    admitted row is re-scored."""
    query = np.frombuffer(qvec, dtype="<f4").astype(np.float32)
    query_mag = squared_norms_f32(query[None, :])[0]
    if not bool(regular_rows(query[None, :], np.array([query_mag], dtype=np.float32))[0]):
        return query, query_mag, None
    q64 = query.astype(np.float64)
    return query, query_mag, q64 / np.sqrt(q64 @ q64)


def rank_paths(approx: F64 | None, owner: Rows, starts: Rows, path_irregular: Flags, *, limit: int, margin: float,
               exact: Callable[[Rows], F64], mask: Flags | None = None) -> Rows:
    """The indices of the paths the vector arm returns, best first.

    Shapes: ``owner`` (rows,) is each row's path index, rows grouped by path in ascending path order, ``starts``
    (paths,) the first row of each path, ``path_irregular`` (paths,) whether a path has a row the approximation
    does not cover, ``mask`` (paths,) the paths the scope admits (``None``: all). ``approx`` (rows,) is each row's
    approximate distance, within ``margin / 2`` of sqlite-vec's for a covered row and ``inf`` for the others, or
    ``None`` for an irregular query (every admitted row is re-scored). ``exact(rows)`` gives sqlite-vec's distance
    of those row indices (NaN where SQL gives NULL).

    Every admitted path whose best approximate distance is within ``margin`` of the ``limit``-th best, and every
    admitted path with an uncovered row, is re-scored; per path the smallest exact distance counts (``fmin``: a NULL
    is skipped, as SQL's ``min``), paths with none are dropped, ties go to the smaller path index, at most
    ``limit`` are returned."""
    keep = np.ones(starts.size, dtype=bool) if mask is None else mask
    if approx is not None and approx.size:
        best = np.minimum.reduceat(approx, starts)
        if mask is not None:
            best[~mask] = np.inf
        finite = best[np.isfinite(best)]
        if finite.size > limit:
            threshold = float(np.partition(finite, limit - 1)[limit - 1])
            keep = keep & ((best <= threshold + margin) | path_irregular)
    rows = np.flatnonzero(keep[owner]).astype(np.intp)
    if rows.size == 0:
        return np.zeros(0, dtype=np.intp)
    dist = exact(rows)
    who_rows = owner[rows]
    firsts = np.flatnonzero(np.r_[True, who_rows[1:] != who_rows[:-1]])
    per_path = np.fmin.reduceat(dist, firsts)  # fmin skips NaN (SQL min skips NULL)
    who = who_rows[firsts]
    ranked = ~np.isnan(per_path)
    order = np.lexsort((who[ranked], per_path[ranked]))[:limit]
    out: Rows = who[ranked][order]
    return out
