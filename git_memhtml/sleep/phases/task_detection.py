"""Phase 13, task-detection: the commitment nobody closed (docs/phases.md §1.13).

Skeleton split out of ``_nomodel.py`` for issue 11: with no model bound (or on a dry run) the phase reports ``ok``
with the reason and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.sleep.engine.model import PhaseModel

PHASE = "task-detection"


@dataclass(frozen=True)
class TaskDetectionCounts(PhaseCounts):
    """``candidates, batches, findings, minted``."""

    candidates: int = 0
    batches: int = 0
    findings: int = 0
    minted: int = 0


def run(env: PhaseEnv) -> PhaseOutcome:
    """task-detection: nothing asked without a bound model (docs/phases.md §0.5)."""
    model = PhaseModel.for_phase(env, PHASE)
    return PhaseOutcome(TaskDetectionCounts(), detail=model.detail or "model path not built", model=model.usage())


register(PhaseSpec(PHASE, run, TaskDetectionCounts, model=True))
