"""Fixed-point confidence decay (docs/retention.md §4.3)."""

from __future__ import annotations

from git_memhtml.domain.decay import (
    CONFIDENCE_COMMIT_DELTA,
    DECAY_ALPHA,
    DECAY_FLOOR,
    SCALE,
    decay_confidence,
    decay_fp,
    ewma_step_fp,
    format_confidence,
    should_commit,
)


def test_constants() -> None:
    assert (SCALE, DECAY_ALPHA, DECAY_FLOOR, CONFIDENCE_COMMIT_DELTA) == (10_000, 0.1, 0.2, 0.005)


def test_documented_sequence_is_exact() -> None:
    first = decay_confidence(1.0)
    second = decay_confidence(first)
    assert first == 0.92
    assert second == 0.848
    assert decay_confidence(second) == 0.7832


def test_ewma_step_floors_on_the_grid() -> None:
    # (1000*2000 + 9000*9999) / 10000 = 9199.1 -> 9199
    assert ewma_step_fp(1000, 9999, 2000) == 9199


def test_never_increases_and_never_lifts_below_floor() -> None:
    assert decay_confidence(0.2) == 0.2
    assert decay_confidence(0.1) == 0.1
    assert decay_fp(500, 1000, 2000) == 500
    value = 1.0
    for _ in range(200):
        nxt = decay_confidence(value)
        assert nxt <= value
        value = nxt
    assert value >= 0.2


def test_missing_or_out_of_range_reads_clamped() -> None:
    assert decay_confidence(None) == 0.92
    assert decay_confidence(float("nan")) == 0.92
    assert decay_confidence(1.7) == 0.92
    assert decay_confidence(-0.5) == 0.0


def test_commit_delta_gate_on_the_grid() -> None:
    assert should_commit(0.205, 0.2)  # exactly 0.005 despite float residue
    assert not should_commit(0.2049, 0.2)
    assert should_commit(1.0, 0.92)


def test_format_three_decimals() -> None:
    assert format_confidence(0.848) == "0.848"
    assert format_confidence(0.7832) == "0.783"
    assert format_confidence(0.9) == "0.900"
