"""When a session is *settled*: what the trace-consolidation phase may read, and ``sleep plan`` counts
(docs/phases.md §1.12).

A session is settled when its main file holds at least :data:`TRACE_MIN_BYTES` and was last modified at least
:data:`TRACE_QUIET_MILLIS` before the run instant, midnight UTC of the run date, so nothing touched on that date
qualifies; and no merged run consolidated it yet (``index/traces.py:TraceTables.settled_sessions`` runs the query).
"""

from __future__ import annotations

from datetime import datetime

TRACE_MIN_BYTES = 8192
TRACE_QUIET_MILLIS = 3_600_000
TRACE_SESSIONS_PER_RUN = 10
"""Selection (spec digest §8, carried over: ``TRACE_MIN_BYTES`` 8192, ``TRACE_QUIET_MILLIS`` 3.6e6,
``TRACE_SESSIONS_PER_RUN`` 10)."""

TRACE_SESSIONS_CAP = 32
"""Settled sessions counted at most (spec digest §8: hard cap 32)."""


def instant_millis(at: str) -> int:
    """``YYYY-MM-DDTHH:MM:SSZ`` as milliseconds since the epoch.

    Raises:
        ValueError: ``at`` is not such an instant.
    """
    return int(datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp() * 1000)


def quiet_before_millis(at: str) -> int:
    """The newest file mtime (ms since the epoch, exclusive) a session may have to be settled at run instant ``at``.

    Raises:
        ValueError: ``at`` is not an instant.
    """
    return instant_millis(at) - TRACE_QUIET_MILLIS
