"""Phase 8, arc-synthesis: the arc of a story told across many memories (docs/phases.md §1.8).

Skeleton split out of ``_nomodel.py`` for issue 11: with no model bound (or on a dry run) the phase reports ``ok``
with the reason and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.sleep.engine.model import PhaseModel

PHASE = "arc-synthesis"


@dataclass(frozen=True)
class ArcSynthesisCounts(PhaseCounts):
    """``arcs, planned, written, skipped``."""

    arcs: int = 0
    planned: int = 0
    written: int = 0
    skipped: int = 0


def run(env: PhaseEnv) -> PhaseOutcome:
    """arc-synthesis: nothing asked without a bound model (docs/phases.md §0.5)."""
    model = PhaseModel.for_phase(env, PHASE)
    return PhaseOutcome(ArcSynthesisCounts(), detail=model.detail or "model path not built", model=model.usage())


register(PhaseSpec(PHASE, run, ArcSynthesisCounts, model=True))
