"""The two model phases a later issue builds: trace-consolidation and placement-triage (docs/phases.md §0.5).

They report ``ok`` and say why they did nothing: trace-consolidation needs a *consolidator* (a separate port, not
the phase model), so a bound model alone is ``no consolidator bound``; placement-triage runs only under ``--deep``
(``deep only``) and has no model path in this version (``no model path in this version``, or ``no model bound``).
Neither writes anything nor spends a call.
"""

from __future__ import annotations

from dataclasses import dataclass

from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome

NO_MODEL = "no model bound"
NO_CONSOLIDATOR = "no consolidator bound"
DEEP_ONLY = "deep only"


NOT_BUILT = "no model path in this version"


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


@dataclass(frozen=True)
class PlacementTriageCounts(PhaseCounts):
    """``candidates, moved``."""

    candidates: int = 0
    moved: int = 0


def placement_triage(env: PhaseEnv) -> PhaseOutcome:
    """placement-triage: deep-only; the flag gates it before the credential does (docs/phases.md §1.14)."""
    if not env.deep:
        return PhaseOutcome(PlacementTriageCounts(), detail=DEEP_ONLY)
    return PhaseOutcome(PlacementTriageCounts(), detail=NO_MODEL if env.services.model is None else NOT_BUILT)


register(PhaseSpec("trace-consolidation", trace_consolidation, TraceConsolidationCounts, model=True))
register(PhaseSpec("placement-triage", placement_triage, PlacementTriageCounts, model=True))
