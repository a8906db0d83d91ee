"""Graph analysis over memory edges: normalisation, PageRank, label propagation, bridges (docs/graph.md §5.1-5.4).

Determinism is a correctness requirement (docs/graph.md §5): these scores feed retention, so a reordering would
change which memories are evicted on an unchanged corpus. Nodes are sorted before every iteration (fixing the
float summation order), parallel edges fold to their maximum strength, label propagation visits in sorted order
and breaks ties lexicographically, and community labels are canonicalised to their smallest member. Pure; numpy
for the power iteration.

Edges are ``(src, dst, strength)`` tuples; nodes are repository paths.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

Edge = tuple[str, str, float]

DAMPING = 0.85
"""PageRank damping factor (docs/graph.md §5.2)."""

MAX_ITERATIONS = 100
"""Power-iteration and label-propagation sweep cap (docs/graph.md §5.2, §5.3)."""

TOLERANCE = 1e-6
"""PageRank converges when the L1 change is below ``1e-6 * N`` (docs/graph.md §5.2)."""

MIN_COMMUNITY_SIZE = 3
"""Communities smaller than 3 collapse to ``None`` (docs/graph.md §5.3; docs/graph.md §5)."""


@dataclass(frozen=True)
class Graph:
    """A normalised graph: sorted unique ``nodes`` and ``edges`` folded per ordered pair, sorted by (src, dst)."""

    nodes: tuple[str, ...]
    edges: tuple[Edge, ...]


def normalise_graph(nodes: Iterable[str], edges: Iterable[Edge]) -> Graph:
    """Normalise per docs/graph.md §5.1.

    Nodes are de-duplicated and sorted; self-loops and edges touching an unknown node are dropped; parallel edges
    fold per ordered ``(src, dst)`` keeping the maximum strength; edges are sorted by ``(src, dst)``.
    """
    node_set = set(nodes)
    folded: dict[tuple[str, str], float] = {}
    for src, dst, strength in edges:
        if src == dst or src not in node_set or dst not in node_set:
            continue
        key = (src, dst)
        value = float(strength)
        if key not in folded or value > folded[key]:
            folded[key] = value
    return Graph(
        nodes=tuple(sorted(node_set)),
        edges=tuple((src, dst, folded[(src, dst)]) for src, dst in sorted(folded)),
    )


def _teleport(graph: Graph, seeds: Mapping[str, float] | Sequence[str] | None) -> np.ndarray:
    n = len(graph.nodes)
    uniform = np.full(n, 1.0 / n)
    if seeds is None:
        return uniform
    weights = dict(seeds) if isinstance(seeds, Mapping) else dict.fromkeys(seeds, 1.0)
    index = {node: i for i, node in enumerate(graph.nodes)}
    tele = np.zeros(n)
    for node in sorted(weights):
        if node in index and weights[node] > 0:
            tele[index[node]] += float(weights[node])
    total = float(tele.sum())
    return tele / total if total > 0 else uniform


def pagerank(
    nodes: Iterable[str],
    edges: Iterable[Edge],
    seeds: Mapping[str, float] | Sequence[str] | None = None,
) -> dict[str, float]:
    """Weighted directed PageRank by power iteration (docs/graph.md §5.2).

    Each node sends ``rank * strength / out_weight`` along its out-edges; the mass of nodes with no positive out
    weight (dangling) is spread by the teleport vector; ``new = 0.85*(inflow + dangling*tele) + 0.15*tele``.
    Stops after 100 iterations or when the L1 change is below ``1e-6 * N``.

    Args:
        nodes: node ids (normalised with the edges via :func:`normalise_graph`).
        edges: ``(src, dst, strength)``; strengths <= 0 carry no mass.
        seeds: ``None`` for uniform teleport ``1/N``; a sequence of seed nodes (equal weight) or a mapping of
            node → weight for personalised PageRank. Unknown or non-positive seeds are ignored; if none remain the
            teleport is uniform.

    Returns:
        ``{node: rank}`` for every node, summing to 1 (empty for an empty graph).
    """
    graph = normalise_graph(nodes, edges)
    n = len(graph.nodes)
    if n == 0:
        return {}
    index = {node: i for i, node in enumerate(graph.nodes)}
    src = np.array([index[e[0]] for e in graph.edges], dtype=np.int64)
    dst = np.array([index[e[1]] for e in graph.edges], dtype=np.int64)
    strength = np.array([max(0.0, e[2]) for e in graph.edges], dtype=np.float64)
    out_weight = np.bincount(src, weights=strength, minlength=n) if len(src) else np.zeros(n)
    dangling = out_weight <= 0
    share = np.zeros(len(src))
    if len(src):
        positive = out_weight[src] > 0
        share[positive] = strength[positive] / out_weight[src][positive]
    tele = _teleport(graph, seeds)
    rank = np.full(n, 1.0 / n)
    for _ in range(MAX_ITERATIONS):
        inflow = np.bincount(dst, weights=rank[src] * share, minlength=n) if len(src) else np.zeros(n)
        dangling_mass = float(rank[dangling].sum())
        new = DAMPING * (inflow + dangling_mass * tele) + (1.0 - DAMPING) * tele
        delta = float(np.abs(new - rank).sum())
        rank = new
        if delta < TOLERANCE * n:
            break
    return {node: float(rank[i]) for i, node in enumerate(graph.nodes)}


def _undirected(graph: Graph) -> dict[str, dict[str, float]]:
    adjacency: dict[str, dict[str, float]] = {node: {} for node in graph.nodes}
    for src, dst, strength in graph.edges:
        adjacency[src][dst] = adjacency[src].get(dst, 0.0) + strength
        adjacency[dst][src] = adjacency[dst].get(src, 0.0) + strength
    return adjacency


def label_propagation(nodes: Iterable[str], edges: Iterable[Edge]) -> dict[str, str | None]:
    """Community label of every node, or ``None`` for a community below 3 members (docs/graph.md §5.3).

    Every node starts labelled with itself. Edges are undirected and weighted (an edge present in both directions
    contributes both strengths). Up to 100 sweeps visit nodes in sorted order and update labels in place: a node
    sums its neighbours' weights per label (no self vote) and takes the heaviest label, ties to the smallest; a
    node with no neighbours keeps its label. A sweep that changes nothing stops. Each community is then labelled
    by its smallest member path.
    """
    graph = normalise_graph(nodes, edges)
    adjacency = _undirected(graph)
    label = {node: node for node in graph.nodes}
    for _ in range(MAX_ITERATIONS):
        changed = False
        for node in graph.nodes:
            neighbours = adjacency[node]
            if not neighbours:
                continue
            votes: dict[str, float] = {}
            for neighbour in sorted(neighbours):
                votes[label[neighbour]] = votes.get(label[neighbour], 0.0) + neighbours[neighbour]
            best = min(votes, key=lambda lab: (-votes[lab], lab))
            if best != label[node]:
                label[node] = best
                changed = True
        if not changed:
            break
    members: dict[str, list[str]] = {}
    for node in graph.nodes:
        members.setdefault(label[node], []).append(node)
    result: dict[str, str | None] = {}
    for group in members.values():
        canonical = min(group) if len(group) >= MIN_COMMUNITY_SIZE else None
        for node in group:
            result[node] = canonical
    return {node: result[node] for node in graph.nodes}


def bridge_counts(
    nodes: Iterable[str],
    edges: Iterable[Edge],
    communities: Mapping[str, str | None] | None = None,
) -> dict[str, int]:
    """Per-node count of folded edges that join two different communities (docs/graph.md §5.4; docs/graph.md §5).

    Each folded (ordered) edge whose endpoints both have a community, and different ones, adds 1 to both
    endpoints; a node with no community scores 0. ``communities`` defaults to :func:`label_propagation` over the
    same graph.
    """
    graph = normalise_graph(nodes, edges)
    labels = communities if communities is not None else label_propagation(graph.nodes, graph.edges)
    counts = dict.fromkeys(graph.nodes, 0)
    for src, dst, _strength in graph.edges:
        left, right = labels.get(src), labels.get(dst)
        if left is None or right is None or left == right:
            continue
        counts[src] += 1
        counts[dst] += 1
    return counts
