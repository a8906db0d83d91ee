"""The model phase a later issue builds: trace-consolidation (docs/phases.md §0.5).

It reports ``ok`` and says why it did nothing: trace-consolidation needs a *consolidator* (a separate port, not the
phase model), so a bound model alone is ``no consolidator bound``. It writes nothing and spends no call.
placement-triage has its own module (``placement_triage.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome

NO_MODEL = "no model bound"
NO_CONSOLIDATOR = "no consolidator bound"


@dataclass(frozen=True)
class TraceConsolidationCounts(PhaseCounts):
    """``sessions, batch, candidates, consolidated``."""

    sessions: int = 0
    batch: int = 0
    candidates: int = 0
    consolidated: int = 0


def trace_consolidation(env: PhaseEnv) -> PhaseOutcome:
    """trace-consolidation without a consolidator: nothing read, nothing watermarked."""
    return PhaseOutcome(TraceConsolidationCounts(), detail=NO_CONSOLIDATOR)


register(PhaseSpec("trace-consolidation", trace_consolidation, TraceConsolidationCounts, model=True))
