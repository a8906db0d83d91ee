"""Phase 6, edge-typing: type mined edges: supports, refines, contradicts (docs/phases.md §1.6).

Skeleton split out of ``_nomodel.py`` for issue 11: with no model bound (or on a dry run) the phase reports ``ok``
with the reason and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.sleep.engine.model import PhaseModel

PHASE = "edge-typing"


@dataclass(frozen=True)
class EdgeTypingCounts(PhaseCounts):
    """``candidates, judged``."""

    candidates: int = 0
    judged: int = 0


def run(env: PhaseEnv) -> PhaseOutcome:
    """edge-typing: nothing asked without a bound model (docs/phases.md §0.5)."""
    model = PhaseModel.for_phase(env, PHASE)
    return PhaseOutcome(EdgeTypingCounts(), detail=model.detail or "model path not built", model=model.usage())


register(PhaseSpec(PHASE, run, EdgeTypingCounts, model=True))
