"""Exact cosine neighbour pairs (docs/graph.md §5.5)."""

from __future__ import annotations

import numpy as np
import pytest

from git_memhtml.domain import neighbors
from git_memhtml.domain.neighbors import tie_key, top_neighbor_pairs


def _brute_force(
    paths: list[str], vectors: np.ndarray, floor: float, k: int, limit: int
) -> list[tuple[str, str, float]]:
    n = len(paths)
    unit = [v / np.linalg.norm(v) if np.linalg.norm(v) > 0 else None for v in vectors.astype(np.float64)]
    pairs: dict[tuple[str, str], float] = {}
    for i in range(n):
        ui = unit[i]
        if ui is None:
            continue
        row = []
        for j in range(n):
            uj = unit[j]
            if i == j or uj is None:
                continue
            sim = float(np.dot(ui, uj))
            if sim >= floor:
                row.append((-sim, paths[j], j))
        row.sort()
        for neg, _p, j in row[:k]:
            a, b = sorted((paths[i], paths[j]))
            pairs[(a, b)] = -neg
    out = [(a, b, s) for (a, b), s in pairs.items()]
    out.sort(key=lambda p: (-p[2], p[0], p[1]))
    return out[:limit]


def _clustered(n: int, dim: int, seed: int, dtype: type = np.float64) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(2, n // 8), dim))
    return (centres[rng.integers(0, len(centres), n)] + 0.35 * rng.standard_normal((n, dim))).astype(dtype)


@pytest.mark.parametrize(("floor", "k", "limit"), [(0.8, 3, 1000), (0.5, 5, 40), (-1.0, 2, 10_000)])
def test_matches_brute_force(floor: float, k: int, limit: int) -> None:
    n = 90
    rng = np.random.default_rng(1)
    paths = [f"dir/{i:03d}.html" for i in rng.permutation(n)]
    vectors = _clustered(n, 16, 2)
    vectors[5] = 0.0  # zero row never pairs
    got = top_neighbor_pairs(paths, vectors, floor=floor, k=k, limit=limit)
    want = _brute_force(paths, vectors, floor, k, limit)
    assert [(a, b) for a, b, _ in got] == [(a, b) for a, b, _ in want]
    assert [s for _, _, s in got] == pytest.approx([s for _, _, s in want], abs=1e-12)
    assert all(a < b for a, b, _ in got)
    assert len({(a, b) for a, b, _ in got}) == len(got)


def test_small_blocks_give_the_same_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = [f"p{i:02d}" for i in range(40)]
    vectors = _clustered(40, 8, 5)
    whole = top_neighbor_pairs(paths, vectors, floor=0.3, k=4, limit=500)
    monkeypatch.setattr(neighbors, "BLOCK_BYTES", 8 * 40 * 3)  # three rows per block
    assert top_neighbor_pairs(paths, vectors, floor=0.3, k=4, limit=500) == whole


@pytest.mark.parametrize("compact_at", [1, 7, 50])
def test_cutting_the_candidates_to_each_top_k_gives_the_same_answer(monkeypatch: pytest.MonkeyPatch,
                                                                    compact_at: int) -> None:
    """The candidate list is cut to every node's top k when it grows past ``COMPACT_AT``: the answer is the same."""
    n = 120
    rng = np.random.default_rng(4)
    paths = [f"dir/{i:03d}.html" for i in rng.permutation(n)]
    vectors = _clustered(n, 12, 6)
    want = _brute_force(paths, vectors, 0.4, 3, 5000)
    monkeypatch.setattr(neighbors, "COMPACT_AT", compact_at)
    monkeypatch.setattr(neighbors, "BLOCK_BYTES", 8 * n * 5)  # five rows per block: many cuts
    got = top_neighbor_pairs(paths, vectors, floor=0.4, k=3, limit=5000)
    assert [(a, b) for a, b, _ in got] == [(a, b) for a, b, _ in want]


def test_ties_break_by_path_and_both_endpoint_lists_are_unioned() -> None:
    v = np.array([[1.0, 0.0]] * 3 + [[0.0, 1.0]])
    got = top_neighbor_pairs(["c", "a", "b", "z"], v, floor=0.9, k=1, limit=10)
    # a's top-1 is b (path tie-break), b's is a, c's is a: (b, c) is in nobody's list
    assert got == [("a", "b", 1.0), ("a", "c", 1.0)]


def test_floor_is_inclusive_and_limits_apply() -> None:
    v = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])
    got = top_neighbor_pairs(["x", "y", "z"], v, floor=0.6, k=5, limit=10)
    assert [(a, b) for a, b, _ in got] == [("y", "z"), ("x", "y")]
    assert got[1][2] == pytest.approx(0.6)
    assert len(top_neighbor_pairs(["x", "y", "z"], v, floor=0.6, k=5, limit=1)) == 1
    assert top_neighbor_pairs(["x", "y", "z"], v, floor=0.6, k=0, limit=10) == []


def test_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        top_neighbor_pairs(["a"], np.zeros((2, 3)), floor=0.5, k=1, limit=1)
    with pytest.raises(ValueError):
        top_neighbor_pairs(["a", "a"], np.ones((2, 3)), floor=0.5, k=1, limit=1)


def test_five_thousand_by_256_in_bounded_blocks_returns_the_limit() -> None:
    # speed is measured by bench/, never by a timed test; this checks the blocked scan at a realistic size
    n = 5000
    vectors = _clustered(n, 256, 9, np.float32)
    paths = [f"areas/x/{i:05d}.html" for i in range(n)]
    got = top_neighbor_pairs(paths, vectors, floor=0.85, k=5, limit=2000)
    assert len(got) == 2000
    assert all(a < b and sim >= 0.85 - 1e-6 for a, b, sim in got)
    assert [g[2] for g in got] == sorted((g[2] for g in got), reverse=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_cosine_tie_that_differs_only_by_rounding_noise_goes_to_the_lower_path(dtype: type) -> None:
    # b and c are one true cosine from a; c's vector is nudged so its computed cosine is a few ulps *higher*,
    # as another BLAS kernel may compute it: ranking must not follow the noise (the CI failure of stop 24)
    eps = 1e-15 if dtype is np.float64 else 1e-8
    s = np.sqrt(1 - 0.81)
    a = np.array([1.0, 0.0, 0.0, 0.0, 0.0])
    b = np.array([0.9, s, 0.0, 0.0, 0.0])
    c = np.array([0.9 + eps, 0.0, s, 0.0, 0.0])
    d = c + np.array([0.0, 0.0, 0.0, 0.02, 0.0])  # c's best partner, so c's own list never names a
    e = b + np.array([0.0, 0.0, 0.0, 0.0, 0.02])  # b's best partner
    vectors: np.ndarray = np.stack([a, b, c, d, e]).astype(dtype)
    pairs = {(src, dst) for src, dst, _ in top_neighbor_pairs(["a", "b", "c", "d", "e"], vectors, floor=0.5, k=1,
                                                              limit=10)}
    assert pairs == {("a", "b"), ("b", "e"), ("c", "d")}
    assert tie_key(0.9166666666666665) == tie_key(0.9166666666666666)
