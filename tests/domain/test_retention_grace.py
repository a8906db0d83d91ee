"""The eviction grace (issue 8 item 4): a never-read memory created less than 30 days before the run is not
"unused for long", whatever the spec's formula scores it; past the grace the formula decides unchanged."""

from __future__ import annotations

import random

import pytest

from git_memhtml.domain.retention import (
    EVICTION_GRACE_DAYS,
    HALF_LIVES,
    RetentionInput,
    band,
    in_eviction_grace,
    retention_score,
)


@pytest.mark.parametrize(
    ("age", "graced"),
    [(0.0, True), (-3.0, True), (14.0, True), (29.999, True), (30.0, False), (31.0, False), (400.0, False)],
)
def test_grace_boundary(age: float, graced: bool) -> None:
    assert in_eviction_grace(age) is graced


def test_grace_is_the_default_half_life() -> None:
    assert EVICTION_GRACE_DAYS == HALF_LIVES["default"] == 30.0


def _never_read(rng: random.Random, age: float) -> RetentionInput:
    """A memory of a fresh synthetic import: never read, no reinforcement, one decay step per 7 days."""
    memory_type = rng.choice(("semantic",) * 12 + ("episodic",) * 5 + ("procedural",) * 3)
    confidence = 1.0
    for _ in range(int(age // 7)):
        confidence = 0.1 * 0.2 + 0.9 * confidence
    return RetentionInput(
        memory_type=memory_type, age_days=age, access_count=0, confidence=confidence,
        pagerank=rng.random() ** 4, max_pagerank=1.0, word_count=rng.randint(15, 40),
    )


def test_ten_thousand_never_read_memories_at_two_weeks() -> None:
    rng = random.Random(8)
    inputs = [_never_read(rng, 14.0) for _ in range(10_000)]
    evict_band = [i for i in inputs if band(retention_score(i)) == "evict"]
    assert len(evict_band) > 1000  # the spec's formula alone would thin the import
    assert in_eviction_grace(14.0)  # … which the grace holds back
    rng = random.Random(8)
    later = [_never_read(rng, 31.0) for _ in range(10_000)]
    assert sum(band(retention_score(i)) == "evict" for i in later) > len(evict_band)  # and past it, the formula
