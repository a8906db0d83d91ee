"""Reinforcement arithmetic (docs/retention.md §4.5)."""

from __future__ import annotations

import pytest

from git_memhtml.domain.reinforce import (
    COOLDOWN_SECONDS,
    SIGNAL_VALUES,
    AccessState,
    apply_reinforcement,
    next_outcome,
    should_bump_access,
)


def test_constants() -> None:
    assert COOLDOWN_SECONDS == 900
    assert SIGNAL_VALUES == {"positive": 1, "negative": -1, "neutral": 0}


def test_cooldown_boundary() -> None:
    assert should_bump_access(None, "2026-01-01T00:00:00Z")
    assert should_bump_access("2026-01-01T00:00:00Z", "2026-01-01T00:15:00Z")
    assert not should_bump_access("2026-01-01T00:00:00Z", "2026-01-01T00:14:59Z")


def test_outcome_first_insert_then_ewma_and_clamp() -> None:
    assert next_outcome(None, 1) == 1.0
    assert next_outcome(1.0, -1) == pytest.approx(0.4)
    assert next_outcome(0.4, 1) == pytest.approx(0.58)
    assert next_outcome(-1.0, -1) == -1.0


def test_apply_positive_neutral_and_cooled() -> None:
    first = apply_reinforcement(None, "positive", "2026-01-01T00:00:00Z")
    assert first == AccessState(1, 1, 1.0, "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z")
    assert apply_reinforcement(first, "negative", "2026-01-01T00:10:00Z") is None
    neutral = apply_reinforcement(first, "neutral", "2026-01-01T00:20:00Z")
    assert neutral is not None
    assert (neutral.access_count, neutral.reinforcement_count, neutral.outcome_score) == (2, 1, 1.0)
    assert neutral.last_reinforced_at == "2026-01-01T00:00:00Z"
    negative = apply_reinforcement(neutral, "negative", "2026-01-01T01:00:00Z")
    assert negative is not None
    assert (negative.access_count, negative.reinforcement_count) == (3, 2)
    assert negative.outcome_score == pytest.approx(0.4)
