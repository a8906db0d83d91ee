"""Bodies of the model phases when no model is bound (docs/phases.md §0.5: they report ``ok`` and say why).

Models arrive with a later issue (docs/design.md §3.7); until then ``memhtml.llm`` has only ``off``, and these phases
write nothing and spend no call.
"""

from __future__ import annotations

from git_memhtml.sleep.env import PhaseEnv, PhaseOutcome

NO_MODEL = "no model bound"
NO_CONSOLIDATOR = "no consolidator bound"
DEEP_ONLY = "deep only"


def edge_typing(env: PhaseEnv) -> PhaseOutcome:
    """edge-typing without a model: nothing judged (docs/phases.md §1.6 "Degraded modes")."""
    return PhaseOutcome({"candidates": 0, "judged": 0}, detail=NO_MODEL)


def arc_synthesis(env: PhaseEnv) -> PhaseOutcome:
    """arc-synthesis without a model."""
    return PhaseOutcome({"arcs": 0, "planned": 0, "written": 0, "skipped": 0}, detail=NO_MODEL)


def compress(env: PhaseEnv) -> PhaseOutcome:
    """compress without a model."""
    return PhaseOutcome(
        {"candidates": 0, "communities": 0, "batches": 0, "canonicals": 0, "archived": 0, "skipped": 0},
        detail=NO_MODEL,
    )


def trace_consolidation(env: PhaseEnv) -> PhaseOutcome:
    """trace-consolidation without a consolidator: nothing read, nothing watermarked."""
    return PhaseOutcome({"sessions": 0, "batch": 0, "candidates": 0, "consolidated": 0}, detail=NO_CONSOLIDATOR)


def task_detection(env: PhaseEnv) -> PhaseOutcome:
    """task-detection without a model."""
    return PhaseOutcome({"candidates": 0, "batches": 0, "findings": 0, "minted": 0}, detail=NO_MODEL)


def placement_triage(env: PhaseEnv) -> PhaseOutcome:
    """placement-triage: deep-only; the flag gates it before the credential does (docs/phases.md §1.14)."""
    if not env.deep:
        return PhaseOutcome({"candidates": 0, "moved": 0}, detail=DEEP_ONLY)
    return PhaseOutcome({"candidates": 0, "moved": 0}, detail=NO_MODEL)
