"""Phase 10, compress: fold a compress-band community into one canonical memory (docs/phases.md §1.10).

Skeleton split out of ``_nomodel.py`` for issue 11: with no model bound (or on a dry run) the phase reports ``ok``
with the reason and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.sleep.engine.model import PhaseModel

PHASE = "compress"


@dataclass(frozen=True)
class CompressCounts(PhaseCounts):
    """``candidates, communities, batches, canonicals, archived, skipped``."""

    candidates: int = 0
    communities: int = 0
    batches: int = 0
    canonicals: int = 0
    archived: int = 0
    skipped: int = 0


def run(env: PhaseEnv) -> PhaseOutcome:
    """compress: nothing asked without a bound model (docs/phases.md §0.5)."""
    model = PhaseModel.for_phase(env, PHASE)
    return PhaseOutcome(CompressCounts(), detail=model.detail or "model path not built", model=model.usage())


register(PhaseSpec(PHASE, run, CompressCounts, model=True, prerequisites=("preflight", "dedup-merge")))
