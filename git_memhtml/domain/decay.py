"""Confidence decay on a fixed-point grid (docs/retention.md §4.3; docs/phases.md §0.4).

Integer arithmetic on a 1/10000 grid makes every step exact and platform-independent, so 1.0 decays to 0.92 and
then 0.848 with no float residue. A value never rises and a value below the floor is never raised. Pure.
"""

from __future__ import annotations

import math

SCALE = 10_000
"""Fixed-point grid: 1.0 == 10000 (docs/retention.md §4.3 ``SCALE``)."""

DECAY_ALPHA = 0.1
"""EWMA weight of the floor in one nightly decay step (docs/retention.md §4.3, phase 7 ``decayConfidence(c, 0.1,
0.2)``)."""

DECAY_FLOOR = 0.2
"""The value un-reinforced confidence decays towards (docs/retention.md §4.3)."""

CONFIDENCE_COMMIT_DELTA = 0.005
"""A decayed value is written only when ``|new - old| >= 0.005`` (docs/retention.md §4.3; docs/phases.md §0.4)."""


def to_fixed(value: float) -> int:
    """``value`` on the :data:`SCALE` grid, rounded half away from zero for non-negative inputs."""
    return math.floor(value * SCALE + 0.5)


def ewma_step_fp(alpha_fp: int, previous_fp: int, sample_fp: int) -> int:
    """One EWMA step on the grid: ``floor((alpha*sample + (SCALE - alpha)*previous) / SCALE)`` (docs/retention.md
    §4.3)."""
    return (alpha_fp * sample_fp + (SCALE - alpha_fp) * previous_fp) // SCALE


def decay_fp(value_fp: int, alpha_fp: int, floor_fp: int) -> int:
    """``min(value, ewma_step(alpha, value, floor))``: never increases, never lifts a value below the floor."""
    return min(value_fp, ewma_step_fp(alpha_fp, value_fp, floor_fp))


def clamp_confidence(value: float | None) -> float:
    """Clamp to [0, 1]; ``None`` or NaN reads as 1.0 (docs/phases.md §1.7: absent or invalid → 1.0)."""
    if value is None or math.isnan(value):
        return 1.0
    return min(1.0, max(0.0, value))


def decay_confidence(confidence: float | None, alpha: float = DECAY_ALPHA, floor: float = DECAY_FLOOR) -> float:
    """One night's decay of a confidence in [0, 1] (clamped first; ``None``/NaN → 1.0).

    >>> decay_confidence(1.0), decay_confidence(0.92)
    (0.92, 0.848)
    """
    value_fp = to_fixed(clamp_confidence(confidence))
    return decay_fp(value_fp, to_fixed(alpha), to_fixed(floor)) / SCALE


def should_commit(old: float, new: float, delta: float = CONFIDENCE_COMMIT_DELTA) -> bool:
    """True when ``|new - old| >= delta``, compared on the :data:`SCALE` grid so float residue cannot flip it."""
    return abs(to_fixed(new) - to_fixed(old)) >= to_fixed(delta)


def format_confidence(value: float) -> str:
    """Render a confidence with three decimals as stamped into ``memhtml-confidence`` (docs/phases.md §0 "Edits")."""
    return f"{math.floor(value * 1000 + 0.5) / 1000:.3f}"
