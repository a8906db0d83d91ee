"""Reinforcement arithmetic of the access plane (docs/retention.md §4.5; docs/retrieval.md §4.4 "Reinforcement").

The SQL upsert in ``index/access.py`` is the sole writer of ``state.access``; these pure functions state the same
rules so they can be tested on their own, and a differential test holds the two to the same rows
(tests/index/test_sql_matches_domain.py). The upsert takes its constants from here. Instants are
ISO-8601 UTC strings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from git_memhtml.domain.instants import require_instant

Signal = Literal["positive", "negative", "neutral"]
"""How a memory served, the ``--signal`` of ``git memhtml reinforce`` (docs/retention.md §4.5); a read is
``neutral``."""

SIGNAL_VALUES: dict[Signal, int] = {"positive": 1, "negative": -1, "neutral": 0}
"""Numeric value of each reinforcement signal, in the order the CLI offers them (docs/retention.md §4.5)."""

COOLDOWN_SECONDS = 900
"""A bump applies only when there was no previous access or ``now - last >= 900 s`` (docs/retention.md §4.5)."""

OUTCOME_DECAY = 0.7
"""Weight of the previous outcome in ``outcome = clamp(0.7*prev + 0.3*signal, -1, 1)`` (docs/retention.md §4.5)."""

OUTCOME_GAIN = 0.3
"""Weight of the new signal in the outcome update (docs/retention.md §4.5)."""


@dataclass(frozen=True)
class AccessState:
    """The access facts of one path, a ``state.access`` row without its key (docs/index.md §3.3; docs/retention.md §4.4,
    §4.5): counts, the outcome score in [-1, 1] and the last instants (ISO-8601 UTC, or ``None``). The defaults are a
    path with no row. The one declaration of these fields: the scorer and the eval fixture use it too."""

    access_count: int = 0
    reinforcement_count: int = 0
    outcome_score: float = 0.0
    last_accessed_at: str | None = None
    last_reinforced_at: str | None = None


_instant = require_instant


def should_bump_access(last_accessed_at: str | None, now: str) -> bool:
    """True when there is no previous access or at least :data:`COOLDOWN_SECONDS` have passed."""
    if last_accessed_at is None:
        return True
    return (_instant(now) - _instant(last_accessed_at)).total_seconds() >= COOLDOWN_SECONDS


def next_outcome(previous: float | None, signal: int) -> float:
    """Outcome after a non-neutral ``signal`` (±1): ``signal`` on first insert, else the clamped EWMA."""
    if previous is None:
        return float(max(-1, min(1, signal)))
    return max(-1.0, min(1.0, OUTCOME_DECAY * previous + OUTCOME_GAIN * signal))


def apply_reinforcement(state: AccessState | None, signal: Signal, now: str) -> AccessState | None:
    """The row after one bump, or ``None`` when the cooldown refuses it (the signal is gated too).

    Every bump adds 1 to ``access_count``; a non-neutral signal also adds 1 to ``reinforcement_count``, updates
    the outcome and stamps ``last_reinforced_at``. ``state=None`` means no row yet (first insert).
    """
    value = SIGNAL_VALUES[signal]
    if state is not None and not should_bump_access(state.last_accessed_at, now):
        return None
    base = state if state is not None else AccessState()
    if value == 0:
        return AccessState(
            access_count=base.access_count + 1,
            reinforcement_count=base.reinforcement_count,
            outcome_score=base.outcome_score,
            last_accessed_at=now,
            last_reinforced_at=base.last_reinforced_at,
        )
    return AccessState(
        access_count=base.access_count + 1,
        reinforcement_count=base.reinforcement_count + 1,
        outcome_score=next_outcome(None if state is None else base.outcome_score, value),
        last_accessed_at=now,
        last_reinforced_at=now,
    )
