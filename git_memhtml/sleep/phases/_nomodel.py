"""The model phases, as they run with no model bound (docs/phases.md §0.5: they report ``ok`` and say why).

Models arrive with a later issue (docs/design.md §3.7); until then ``memhtml.llm`` has only ``off``, the runner binds no
client (``env.services.model is None``), and these phases write nothing and spend no call. A bound client with no
model path behind it is refused rather than ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

from git_memhtml.errors import ModelUnavailable
from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome

NO_MODEL = "no model bound"
NO_CONSOLIDATOR = "no consolidator bound"
DEEP_ONLY = "deep only"


def _unbound(env: PhaseEnv, phase: str, reason: str = NO_MODEL) -> str:
    """``reason`` when no model is bound; a bound model is refused, since no model path exists yet.

    Raises:
        ModelUnavailable: a model client is bound (the phase fails, its writes are undone).
    """
    if env.services.model is not None:
        raise ModelUnavailable(f"{phase} has no model path yet; the bound model cannot be used",
                               hint="run with memhtml.llm = off")
    return reason


@dataclass(frozen=True)
class EdgeTypingCounts(PhaseCounts):
    """``candidates, judged``."""

    candidates: int = 0
    judged: int = 0


def edge_typing(env: PhaseEnv) -> PhaseOutcome:
    """edge-typing without a model: nothing judged (docs/phases.md §1.6 "Degraded modes")."""
    return PhaseOutcome(EdgeTypingCounts(), detail=_unbound(env, "edge-typing"))


@dataclass(frozen=True)
class ArcSynthesisCounts(PhaseCounts):
    """``arcs, planned, written, skipped``."""

    arcs: int = 0
    planned: int = 0
    written: int = 0
    skipped: int = 0


def arc_synthesis(env: PhaseEnv) -> PhaseOutcome:
    """arc-synthesis without a model."""
    return PhaseOutcome(ArcSynthesisCounts(), detail=_unbound(env, "arc-synthesis"))


@dataclass(frozen=True)
class CompressCounts(PhaseCounts):
    """``candidates, communities, batches, canonicals, archived, skipped``."""

    candidates: int = 0
    communities: int = 0
    batches: int = 0
    canonicals: int = 0
    archived: int = 0
    skipped: int = 0


def compress(env: PhaseEnv) -> PhaseOutcome:
    """compress without a model."""
    return PhaseOutcome(CompressCounts(), detail=_unbound(env, "compress"))


@dataclass(frozen=True)
class TraceConsolidationCounts(PhaseCounts):
    """``sessions, batch, candidates, consolidated``."""

    sessions: int = 0
    batch: int = 0
    candidates: int = 0
    consolidated: int = 0


def trace_consolidation(env: PhaseEnv) -> PhaseOutcome:
    """trace-consolidation without a consolidator: nothing read, nothing watermarked."""
    return PhaseOutcome(TraceConsolidationCounts(), detail=_unbound(env, "trace-consolidation", NO_CONSOLIDATOR))


@dataclass(frozen=True)
class TaskDetectionCounts(PhaseCounts):
    """``candidates, batches, findings, minted``."""

    candidates: int = 0
    batches: int = 0
    findings: int = 0
    minted: int = 0


def task_detection(env: PhaseEnv) -> PhaseOutcome:
    """task-detection without a model."""
    return PhaseOutcome(TaskDetectionCounts(), detail=_unbound(env, "task-detection"))


@dataclass(frozen=True)
class PlacementTriageCounts(PhaseCounts):
    """``candidates, moved``."""

    candidates: int = 0
    moved: int = 0


def placement_triage(env: PhaseEnv) -> PhaseOutcome:
    """placement-triage: deep-only; the flag gates it before the credential does (docs/phases.md §1.14)."""
    if not env.deep:
        return PhaseOutcome(PlacementTriageCounts(), detail=DEEP_ONLY)
    return PhaseOutcome(PlacementTriageCounts(), detail=_unbound(env, "placement-triage"))


register(PhaseSpec("edge-typing", edge_typing, EdgeTypingCounts, model=True))
register(PhaseSpec("arc-synthesis", arc_synthesis, ArcSynthesisCounts, model=True))
register(PhaseSpec("compress", compress, CompressCounts, model=True, prerequisites=("preflight", "dedup-merge")))
register(PhaseSpec("trace-consolidation", trace_consolidation, TraceConsolidationCounts, model=True))
register(PhaseSpec("task-detection", task_detection, TaskDetectionCounts, model=True))
register(PhaseSpec("placement-triage", placement_triage, PlacementTriageCounts, model=True))
