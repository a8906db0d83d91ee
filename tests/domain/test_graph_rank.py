"""Graph normalisation, PageRank, label propagation and bridges (docs/graph.md §5.1-5.4; docs/graph.md §5)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from git_memhtml.domain.graph import (
    DAMPING,
    MAX_ITERATIONS,
    MIN_COMMUNITY_SIZE,
    TOLERANCE,
    bridge_counts,
    label_propagation,
    normalise_graph,
    pagerank,
)


def _direct_solve(nodes: list[str], edges: list[tuple[str, str, float]], tele: np.ndarray) -> np.ndarray:
    """Solve r = d*(M r + (dangling . r) tele) + (1-d) tele exactly (independent of the power iteration)."""
    n = len(nodes)
    idx = {v: i for i, v in enumerate(nodes)}
    out = np.zeros(n)
    for s, _d, w in edges:
        out[idx[s]] += w
    m = np.zeros((n, n))
    for s, d, w in edges:
        m[idx[d], idx[s]] += w / out[idx[s]]
    dangling = (out == 0).astype(float)
    a = np.eye(n) - DAMPING * (m + np.outer(tele, dangling))
    return np.linalg.solve(a, (1 - DAMPING) * tele)


def test_constants() -> None:
    assert (DAMPING, MAX_ITERATIONS, TOLERANCE, MIN_COMMUNITY_SIZE) == (0.85, 100, 1e-6, 3)


def test_normalise_drops_self_loops_unknowns_and_folds_to_max() -> None:
    g = normalise_graph(
        ["b", "a", "c", "a"],
        [("a", "b", 0.2), ("a", "b", 0.9), ("a", "b", 0.5), ("a", "a", 1.0), ("a", "zz", 1.0), ("c", "a", 0.3),
         ("b", "a", 0.1)],
    )
    assert g.nodes == ("a", "b", "c")
    assert g.edges == (("a", "b", 0.9), ("b", "a", 0.1), ("c", "a", 0.3))


def test_pagerank_two_nodes_by_hand() -> None:
    # a -> b; b dangling. r_a = 0.85*0.5*r_b + 0.075, r_a + r_b = 1  =>  r_a = 0.5 / 1.425
    ranks = pagerank(["a", "b"], [("a", "b", 1.0)])
    assert ranks["a"] == pytest.approx(0.5 / 1.425, abs=1e-6)
    assert ranks["b"] == pytest.approx(1 - 0.5 / 1.425, abs=1e-6)


def test_pagerank_weighted_matches_direct_solve() -> None:
    nodes = ["a", "b", "c", "d", "e"]
    edges = [("a", "b", 3.0), ("a", "c", 1.0), ("b", "c", 1.0), ("c", "a", 0.5), ("d", "c", 2.0), ("c", "d", 0.25)]
    ranks = pagerank(nodes, edges)
    expected = _direct_solve(nodes, edges, np.full(5, 0.2))
    assert [ranks[v] for v in nodes] == pytest.approx(list(expected), abs=1e-5)
    assert sum(ranks.values()) == pytest.approx(1.0)
    assert ranks["e"] == pytest.approx(expected[4], abs=1e-6)  # isolated node: teleport + dangling share


def test_pagerank_weights_matter() -> None:
    ranks = pagerank(["a", "b", "c"], [("a", "b", 3.0), ("a", "c", 1.0)])
    assert ranks["b"] > ranks["c"]


def test_personalised_pagerank_uses_seed_teleport() -> None:
    nodes = ["a", "b", "c", "d"]
    edges = [("a", "b", 1.0), ("b", "c", 1.0), ("c", "a", 1.0), ("d", "a", 1.0)]
    ranks = pagerank(nodes, edges, seeds=["d"])
    expected = _direct_solve(nodes, edges, np.array([0.0, 0.0, 0.0, 1.0]))
    assert [ranks[v] for v in nodes] == pytest.approx(list(expected), abs=1e-5)
    assert ranks["d"] == pytest.approx(0.15, abs=1e-6)
    weighted = pagerank(nodes, edges, seeds={"d": 3.0, "b": 1.0, "nope": 5.0})
    expected_w = _direct_solve(nodes, edges, np.array([0.0, 0.25, 0.0, 0.75]))
    assert [weighted[v] for v in nodes] == pytest.approx(list(expected_w), abs=1e-5)
    assert pagerank(nodes, edges, seeds=["nope"]) == pagerank(nodes, edges)


def test_pagerank_is_order_independent_and_empty_safe() -> None:
    nodes = [f"n{i}" for i in range(30)]
    rng = random.Random(7)
    edges = [(rng.choice(nodes), rng.choice(nodes), rng.random()) for _ in range(90)]
    a = pagerank(nodes, edges)
    shuffled = list(edges)
    rng.shuffle(shuffled)
    b = pagerank(list(reversed(nodes)), shuffled)
    assert a == b
    assert pagerank([], []) == {}


def _two_triangles() -> tuple[list[str], list[tuple[str, str, float]]]:
    nodes = ["a", "b", "c", "d", "e", "f", "x", "y"]
    edges = [
        ("a", "b", 1.0), ("b", "c", 1.0), ("c", "a", 1.0),
        ("d", "e", 1.0), ("e", "f", 1.0), ("f", "d", 1.0),
        ("c", "d", 0.1),
        ("x", "y", 1.0), ("x", "a", 0.05),
    ]
    return nodes, edges


def test_label_propagation_communities_and_small_collapse() -> None:
    nodes, edges = _two_triangles()
    labels = label_propagation(nodes + ["lonely"], edges)
    assert labels == {
        "a": "a", "b": "a", "c": "a", "d": "d", "e": "d", "f": "d", "x": None, "y": None, "lonely": None,
    }


def test_label_propagation_deterministic_under_shuffles() -> None:
    nodes, edges = _two_triangles()
    rng = random.Random(3)
    expected = label_propagation(nodes, edges)
    for _ in range(5):
        n2, e2 = list(nodes), list(edges)
        rng.shuffle(n2)
        rng.shuffle(e2)
        assert label_propagation(n2, e2) == expected


def test_label_is_smallest_member_and_pairs_are_not_communities() -> None:
    labels = label_propagation(["q", "p", "r"], [("q", "r", 1.0), ("r", "p", 1.0), ("p", "q", 1.0)])
    assert set(labels.values()) == {"p"}
    assert label_propagation(["p", "q"], [("p", "q", 1.0)]) == {"p": None, "q": None}


def test_bridge_counts() -> None:
    nodes, edges = _two_triangles()
    counts = bridge_counts(nodes, edges)
    assert counts == {"a": 0, "b": 0, "c": 1, "d": 1, "e": 0, "f": 0, "x": 0, "y": 0}
    both_ways = bridge_counts(nodes, edges + [("d", "c", 0.1)])
    assert both_ways["c"] == 2 and both_ways["d"] == 2
    given = bridge_counts(["a", "b"], [("a", "b", 1.0)], communities={"a": "a", "b": "b"})
    assert given == {"a": 1, "b": 1}
