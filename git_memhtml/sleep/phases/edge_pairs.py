"""Edge-typing's candidate pairs and the member text of each (docs/phases.md §1.6 "Candidates", "Batching").

Candidates are the union of two arms, both over active non-task memories and both without any pair an author
already linked (an authored edge either way):

- the **mined arm**: relationship-mining's derived ``relates_to`` edges, strongest first;
- the **shared-entity arm**: pairs of memories claiming one entity (by matching key), ranked by the cosine of their
  first-chunk vectors: each memory keeps its :data:`ENTITY_K` best partners at or above :data:`ENTITY_FLOOR`, the
  union of those lists is cut at :data:`MAX_CANDIDATES`.

The union is de-duplicated by unordered pair (a mined row wins over an entity row), sorted ``sim DESC, src, dst`` and
cut at :data:`MAX_CANDIDATES`. Every pair is oriented ``src < dst`` by path. Constants are carried over (spec digest
§1 phase 6).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from git_memhtml.domain.neighbors import rank_values, tie_key
from git_memhtml.index.corpus import CorpusRow, first_chunk_vector_map
from git_memhtml.index.db import IndexDB
from git_memhtml.index.edge_candidates import authored_pairs, entity_claims, mined_pairs
from git_memhtml.sleep.phases.memory_text import claim_once

MINED_REL = "relates_to"
"""The derived rel of the mined arm (relationship-mining, docs/phases.md §1.5)."""
ENTITY_FLOOR = 0.8
"""Cosine floor of a shared-entity pair (carried over)."""
ENTITY_K = 5
"""Partners kept per memory in the shared-entity arm (carried over)."""
MAX_CANDIDATES = 200
"""Pairs judged per night at most, after the union (carried over)."""
SIDE_CHARS = 1200
"""Characters of each side of a pair shown to the model (carried over)."""

BLOCK_BYTES = 64 * 1024 * 1024
"""Upper bound on one float64 similarity block of an entity group (an implementation choice, as docs/graph.md §5.5)."""

Arm = Literal["mined", "entity"]


@dataclass(frozen=True)
class CandidatePair:
    """One pair to type: ``src < dst`` (repository paths), its cosine ``sim`` and the arm that proposed it."""

    src: str
    dst: str
    sim: float
    arm: Arm

    @property
    def key(self) -> tuple[str, str]:
        """The unordered identity ``(src, dst)``."""
        return (self.src, self.dst)


def rank_shared_entity_pairs(
    claims: Sequence[tuple[str, str]],
    vectors: Mapping[str, np.ndarray],
    excluded: set[tuple[str, str]],
    *,
    floor: float = ENTITY_FLOOR,
    k: int = ENTITY_K,
    limit: int = MAX_CANDIDATES,
) -> list[tuple[str, str, float]]:
    """Rank the pairs of memories that claim one entity by cosine (pure).

    Each memory keeps its top ``k`` partners among the memories it shares an entity with (cosine ≥ ``floor``,
    ordered sim DESC then path; pairs in ``excluded`` never count), and the union of those lists is returned once per
    pair, oriented ``src < dst``, sorted ``sim DESC, src, dst`` and cut at ``limit``.

    Exact and bounded: within one entity group a memory's top ``k`` contains every partner of its overall top ``k``
    that is in the group, so the best ``k`` of the per-group lists is the overall best ``k``; each group is scanned
    in row blocks of at most :data:`BLOCK_BYTES`.

    Args:
        claims: ``[(entity key, path)]``; order does not matter, repeats are ignored.
        vectors: first-chunk vector per path; a path without one (or with a zero one) never pairs.
        excluded: unordered pairs ``(lower, higher)`` to leave out (authored edges).
    """
    groups: dict[str, set[str]] = {}
    for key, path in claims:
        groups.setdefault(key, set()).add(path)
    best: dict[tuple[str, str], float] = {}
    for key in sorted(groups):
        members = sorted(p for p in groups[key] if p in vectors)
        if len(members) < 2 or k <= 0:
            continue
        for a, b, sim in _group_pairs(members, vectors, excluded, floor, k):
            best[(a, b)] = sim
    partners: dict[str, list[tuple[float, str]]] = {}
    for (a, b), sim in best.items():
        partners.setdefault(a, []).append((sim, b))
        partners.setdefault(b, []).append((sim, a))
    kept: dict[tuple[str, str], float] = {}
    for node, found in partners.items():
        for sim, other in sorted(found, key=lambda item: (-tie_key(item[0]), item[1]))[:k]:
            kept[(min(node, other), max(node, other))] = sim
    ranked = sorted(((a, b, sim) for (a, b), sim in kept.items()), key=lambda p: (-tie_key(p[2]), p[0], p[1]))
    return ranked[: max(0, limit)]


def _group_pairs(members: list[str], vectors: Mapping[str, np.ndarray], excluded: set[tuple[str, str]],
                 floor: float, k: int) -> list[tuple[str, str, float]]:
    """Every member's top ``k`` partners in one entity group, as ``(lower, higher, sim)`` (repeats possible)."""
    matrix = np.stack([np.asarray(vectors[p], dtype=np.float64) for p in members])
    norms = np.linalg.norm(matrix, axis=1)
    valid = norms > 0
    unit = np.zeros_like(matrix)
    unit[valid] = matrix[valid] / norms[valid, None]
    n = len(members)
    block = max(1, BLOCK_BYTES // (8 * n))
    out: list[tuple[str, str, float]] = []
    for start in range(0, n, block):
        sims = unit[start:start + block] @ unit.T
        for r in range(sims.shape[0]):
            i = start + r
            if not valid[i]:
                continue
            row = sims[r]
            order = np.argsort(-rank_values(row), kind="stable")  # path-sorted members: ties go to the lower path
            taken = 0
            for j in order.tolist():
                if taken >= k or row[j] < floor:
                    break
                if j == i or not valid[j]:
                    continue
                pair = (members[i], members[j]) if i < j else (members[j], members[i])
                if pair in excluded:
                    continue
                out.append((pair[0], pair[1], float(row[j])))
                taken += 1
    return out


def candidate_pairs(db: IndexDB, space: str | None) -> list[CandidatePair]:
    """The night's candidate pairs (module docstring): mined ∪ shared-entity, at most :data:`MAX_CANDIDATES`.

    ``space`` is the vector space of the run's index; without one the shared-entity arm is empty (no cosine to
    rank by) and only mined pairs are offered.

    Raises:
        StorageError: the index cannot be read.
    """
    chosen: dict[tuple[str, str], CandidatePair] = {}
    for row in mined_pairs(db, MINED_REL):
        src, dst = min(row.src, row.dst), max(row.src, row.dst)
        chosen.setdefault((src, dst), CandidatePair(src, dst, row.strength, "mined"))
    if space is not None:
        claims = entity_claims(db)
        vectors = first_chunk_vector_map(db, sorted({p for _, p in claims}), space)
        for src, dst, sim in rank_shared_entity_pairs(claims, vectors, authored_pairs(db)):
            chosen.setdefault((src, dst), CandidatePair(src, dst, sim, "entity"))
    ranked = sorted(chosen.values(), key=lambda p: (-tie_key(p.sim), p.src, p.dst))
    return ranked[:MAX_CANDIDATES]


def shared_directory(src: str, dst: str) -> str:
    """The deepest directory holding both paths (``areas/inbox`` for two inbox files; ``''`` for none)."""
    left, right = src.split("/")[:-1], dst.split("/")[:-1]
    common: list[str] = []
    for a, b in zip(left, right, strict=False):
        if a != b:
            break
        common.append(a)
    return "/".join(common)


def batch_order(pairs: Sequence[CandidatePair]) -> list[CandidatePair]:
    """Pairs in batching order: deepest shared directory, then src, then dst (pairs of one folder sit together)."""
    return sorted(pairs, key=lambda p: (shared_directory(p.src, p.dst), p.src, p.dst))


def side_text(row: CorpusRow) -> str:
    """One side of a pair: the gist, then the rest of the body (the claim once, wherever the body holds it:
    ``memory_text.claim_once``), cut at :data:`SIDE_CHARS`."""
    return claim_once("", row.gist, row.body_text)[:SIDE_CHARS]


def member_text(src: CorpusRow, dst: CorpusRow) -> str:
    """``src:\\n<side>\\n\\ndst:\\n<side>`` (docs/phases.md §1.6)."""
    return f"src:\n{side_text(src)}\n\ndst:\n{side_text(dst)}"


MEMBER_CHARS = len("src:\n\n\ndst:\n") + 2 * SIDE_CHARS
"""Longest member text: both sides whole."""
