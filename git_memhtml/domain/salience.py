"""Salience of a memory for the salience retrieval arm (docs/retrieval.md §4.2 "Salience"). Pure."""

from __future__ import annotations

import math

SALIENCE_DECAY_PER_HOUR = 0.01
"""``exp(-0.01 × hours since last access, else update)`` is the recency term of salience (docs/retrieval.md §4)."""


def salience(hours_since: float, access_count: int, outcome_score: float) -> float:
    """``exp(-0.01·hours) + ln(1 + access_count) + max(outcome, 0)`` (docs/retrieval.md §4.2 "Salience"); unbounded
    above.

    Args:
        hours_since: hours since ``coalesce(last_accessed_at, updated_at)``; negative reads as 0.
        access_count: ``state.access.access_count`` (negative reads as 0).
        outcome_score: ``state.access.outcome_score`` in [-1, 1]; negative outcomes add nothing.
    """
    return (
        math.exp(-SALIENCE_DECAY_PER_HOUR * max(0.0, hours_since))
        + math.log1p(max(0, access_count))
        + max(outcome_score, 0.0)
    )
