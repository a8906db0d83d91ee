"""Retention signals, profiles, bands and reprieve (docs/retention.md §4.1, §4.2, §4.4; docs/phases.md §0.4,
docs/retention.md §4.1)."""

from __future__ import annotations

import math

import pytest

from git_memhtml.domain.retention import (
    COMPRESS_ABOVE,
    HALF_LIVES,
    KEEP_ABOVE,
    LN2,
    MAX_REPRIEVES,
    REPRIEVE_DAYS,
    REPRIEVE_FLOOR,
    WEIGHT_PROFILES,
    RetentionInput,
    age_days,
    band,
    density_signal,
    half_life_for,
    neumaier_sum,
    profile_for,
    recency_signal,
    reprieve_score,
    retention_score,
    retention_signals,
    should_reprieve,
)


def test_every_profile_sums_to_one_under_neumaier() -> None:
    assert set(WEIGHT_PROFILES) == {"episodic", "semantic", "procedural", "arc", "error_pattern", "default"}
    for name, weights in WEIGHT_PROFILES.items():
        assert neumaier_sum(weights.values()) == 1.0, name
        assert len(weights.values()) == 8


def test_neumaier_is_needed_where_naive_summation_drifts() -> None:
    values = WEIGHT_PROFILES["episodic"].values()
    assert sum(values) != 1.0
    assert neumaier_sum(values) == 1.0
    assert neumaier_sum([1e100, 1.0, -1e100]) == 1.0


def test_profile_table_values() -> None:
    assert WEIGHT_PROFILES["episodic"].recency == 0.25
    assert WEIGHT_PROFILES["semantic"].pagerank == 0.20
    assert WEIGHT_PROFILES["procedural"].recency == 0.0
    assert WEIGHT_PROFILES["procedural"].reinforcement == 0.20
    assert WEIGHT_PROFILES["error_pattern"].contested == 0.15
    assert WEIGHT_PROFILES["arc"].bridge == 0.15
    assert profile_for("agent_insight") == WEIGHT_PROFILES["default"]


def test_half_lives() -> None:
    assert HALF_LIVES["episodic"] == 10 and HALF_LIVES["semantic"] == 90 and HALF_LIVES["arc"] == 30
    assert HALF_LIVES["error_pattern"] == 14
    assert half_life_for("procedural") is None and half_life_for("task") is None
    assert half_life_for("verdict") == 30


def test_recency_half_life_is_an_equality() -> None:
    assert math.log(2) == LN2
    assert recency_signal(10, 10) == 0.5
    assert recency_signal(20, 10) == 0.25
    assert recency_signal(0, 10) == 1.0 and recency_signal(-3, 10) == 1.0
    assert recency_signal(1000, None) == 1.0


def test_age_days_is_clamped() -> None:
    assert age_days("2026-01-01T00:00:00Z", "2026-01-11T00:00:00Z") == 10.0
    assert age_days("2026-01-11T00:00:00Z", "2026-01-01T00:00:00Z") == 0.0


def test_signal_saturations() -> None:
    s = retention_signals(
        RetentionInput(
            "semantic", access_count=5, confidence=1.4, pagerank=0.2, max_pagerank=0.8, bridges=2,
            reinforcements=7, word_count=50, contradictions=1,
        )
    )
    assert (s.access, s.confidence, s.pagerank, s.bridge, s.reinforcement, s.density) == (
        0.5, 1.0, 0.25, 0.4, 1.0, 0.5,
    )
    assert s.contested == pytest.approx(2 / 3)
    assert retention_signals(RetentionInput("x", access_count=30, contradictions=9)).access == 1.0
    assert retention_signals(RetentionInput("x", contradictions=9)).contested == 0.0
    assert retention_signals(RetentionInput("x", pagerank=0.3, max_pagerank=0)).pagerank == 0.0


def test_density_short_and_long() -> None:
    assert density_signal(9) == 0.45
    assert density_signal(10) == 0.1
    assert density_signal(250) == 1.0
    assert density_signal(0) == 0.0


def test_composite_by_hand() -> None:
    inp = RetentionInput(
        "episodic", age_days=10, access_count=2, confidence=0.6, pagerank=1, max_pagerank=1, bridges=0,
        reinforcements=1, word_count=40, contradictions=0,
    )
    # .25*.5 + .15*.2 + .10*.6 + .10*1 + .10*0 + .10*.2 + .10*.4 + .10*1
    assert retention_score(inp) == 0.475


def test_composite_rounds_to_four_places() -> None:
    inp = RetentionInput("semantic", age_days=1, word_count=33, confidence=0.777)
    score = retention_score(inp)
    assert score == round(score, 4)
    assert 0.0 <= score <= 1.0


def test_band_boundaries_go_to_the_lower_band() -> None:
    assert (KEEP_ABOVE, COMPRESS_ABOVE) == (0.7, 0.3)
    assert band(0.7001) == "keep"
    assert band(0.7) == "compress"
    assert band(0.3001) == "compress"
    assert band(0.3) == "evict"
    assert band(1.0) == "keep" and band(0.0) == "evict"


def test_reprieve_constants_and_score() -> None:
    assert (REPRIEVE_FLOOR, REPRIEVE_DAYS, MAX_REPRIEVES) == (0.5, 14, 3)
    assert reprieve_score(10, 0, 0.0, 0) == 0.5
    assert reprieve_score(9.9, 0, 0.0, 0) == pytest.approx(0.496)
    assert reprieve_score(50, 0, 0.0, 0) == reprieve_score(10, 0, 0.0, 0)  # importance clamped to 10
    assert reprieve_score(0, 0, 0.0, 0) == pytest.approx(0.14)  # importance clamped to 1
    assert reprieve_score(1, 1, 0.5, 100) == pytest.approx(0.04 + 0.3 * math.log(2) + 0.1 + 0.1 * math.exp(-1))
    assert reprieve_score(1, 0, -1.0, 0) == pytest.approx(0.14)  # negative outcome adds nothing


def test_should_reprieve_floor_and_max() -> None:
    assert should_reprieve(0.5, 0)
    assert not should_reprieve(0.4999, 0)
    assert should_reprieve(0.9, 2)
    assert not should_reprieve(0.9, 3)
    assert not should_reprieve(0.9, 0, max_reprieves=0)
