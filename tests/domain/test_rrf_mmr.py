"""RRF fusion (k=60), greedy MMR (λ=0.5) and salience (docs/retrieval.md §4)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from git_memhtml.domain.rrf import MMR_LAMBDA, RRF_K, mmr, rrf_fuse
from git_memhtml.domain.salience import SALIENCE_DECAY_PER_HOUR, salience


def test_constants() -> None:
    assert (RRF_K, MMR_LAMBDA, SALIENCE_DECAY_PER_HOUR) == (60, 0.5, 0.01)


def test_rrf_example() -> None:
    fused = rrf_fuse(
        {"fts": ["a", "b", "c"], "vector": ["b", "a"], "recency": ["c"]},
        {"fts": 1.0, "vector": 1.0, "recency": 0.5},
    )
    assert [p for p, _ in fused] == ["a", "b", "c"]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[1][1] == pytest.approx(1 / 62 + 1 / 61)
    assert fused[2][1] == pytest.approx(1 / 63 + 0.5 / 61)


def test_rrf_ties_by_path_and_k_matters() -> None:
    fused = rrf_fuse({"x": ["b"], "y": ["a"]}, {"x": 1.0, "y": 1.0})
    assert fused == [("a", 1 / 61), ("b", 1 / 61)]
    assert rrf_fuse({"x": ["a"]}, {"x": 1.0}, k=0) == [("a", 1.0)]


def test_rrf_skips_unweighted_arms_and_repeats() -> None:
    fused = rrf_fuse({"x": ["a", "a", "b"], "ghost": ["b"]}, {"x": 1.0})
    assert fused == [("a", 1 / 61), ("b", 1 / 63)]


def test_mmr_penalises_near_duplicates() -> None:
    vectors = {"a": np.array([1.0, 0.0]), "b": np.array([1.0, 0.01]), "c": np.array([0.0, 1.0])}
    assert mmr(["a", "b", "c"], vectors=vectors, limit=3) == ["a", "c", "b"]
    assert mmr(["a", "b", "c"], vectors=None, limit=2) == ["a", "b"]


def test_mmr_without_vector_has_no_penalty_and_lambda_one_is_relevance_order() -> None:
    vectors = {"a": np.array([1.0, 0.0]), "c": np.array([1.0, 0.0])}
    assert mmr(["a", "b", "c"], vectors=vectors, limit=3) == ["a", "b", "c"]
    dup = {"a": np.array([1.0, 0.0]), "b": np.array([1.0, 0.0]), "c": np.array([0.0, 1.0])}
    assert mmr(["a", "b", "c"], vectors=dup, lambda_=1.0, limit=3) == ["a", "b", "c"]
    assert mmr(["a", "b", "c"], relevance={"a": 0.1, "b": 0.9, "c": 0.5}, limit=1) == ["b"]


def test_salience_formula() -> None:
    assert salience(0, 0, 0.0) == 1.0
    assert salience(100, 3, 0.5) == pytest.approx(math.exp(-1) + math.log(4) + 0.5)
    assert salience(100, 3, -0.5) == pytest.approx(math.exp(-1) + math.log(4))
