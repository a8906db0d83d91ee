"""The observation window (issue 8 item 4): disuse counts only over days in which reads were being recorded, from
the later of a memory's creation and the store's first recorded read; the spec's formula itself is unchanged."""

from __future__ import annotations

import random

import pytest

from git_memhtml.domain.retention import (
    HALF_LIVES,
    OBSERVATION_WINDOW_DAYS,
    RetentionInput,
    band,
    disuse_observed,
    observed_window_days,
    retention_score,
)

AT = "2026-05-01T00:00:00Z"


@pytest.mark.parametrize(
    ("created", "since", "days"),
    [
        ("2026-01-01T00:00:00Z", None, 0.0),  # the store never recorded a read
        ("2026-01-01T00:00:00Z", "2026-04-01T00:00:00Z", 30.0),  # created before: observed from the first read
        ("2026-04-11T00:00:00Z", "2026-01-01T00:00:00Z", 20.0),  # created after: observed from its creation
        ("2026-04-11", "2026-01-01T00:00:00Z", 20.0),  # a bare date is midnight UTC
        ("2026-04-30T12:00:00+02:00", "2026-01-01T00:00:00Z", 14.0 / 24.0),  # offsets count (10:00Z)
        ("2026-06-01T00:00:00Z", "2026-01-01T00:00:00Z", 0.0),  # created after the run: clamped
        ("2026-01-01T00:00:00Z", "2026-06-01T00:00:00Z", 0.0),  # first read after the run: clamped
        ("garbage", "2026-01-01T00:00:00Z", 0.0),  # an unreadable creation stamp establishes nothing
        ("2026-01-01T00:00:00Z", "garbage", 0.0),
        ("", "", 0.0),
    ],
)
def test_observed_window(created: str, since: str | None, days: float) -> None:
    assert observed_window_days(created, since, AT) == pytest.approx(days)


def test_an_unreadable_run_instant_is_an_error() -> None:
    with pytest.raises(ValueError, match="not an ISO-8601 instant"):
        observed_window_days("2026-01-01", "2026-01-01", "soon")


@pytest.mark.parametrize(
    ("days", "observed"),
    [(0.0, False), (-3.0, False), (float("nan"), False), (29.999, False), (30.0, True), (31.0, True),
     (400.0, True)],
)
def test_window_boundary(days: float, observed: bool) -> None:
    assert disuse_observed(days) is observed


def test_window_is_the_default_half_life() -> None:
    assert OBSERVATION_WINDOW_DAYS == HALF_LIVES["default"] == 30.0


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


@pytest.mark.parametrize("age", [14.0, 31.0, 90.0, 400.0])
def test_never_read_memories_score_low_but_their_disuse_was_never_observed(age: float) -> None:
    rng = random.Random(8)
    inputs = [_never_read(rng, age) for _ in range(10_000)]
    assert sum(band(retention_score(i)) == "evict" for i in inputs) > 1000  # the spec's formula alone thins them
    assert not disuse_observed(observed_window_days("2026-01-01T00:00:00Z", None, "2027-12-31T00:00:00Z"))
