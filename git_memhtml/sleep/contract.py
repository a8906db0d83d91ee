"""The sleep contract: the seventeen phases, their order, model use and hard prerequisites.

Source: docs/phases.md §1–§0.2 and docs/phases.md §1.14 (v0.6.0: 17 phases, ``placement-triage`` deep-only, preflight a
hard prerequisite of every later phase, dedup-merge of compress and retention-triage).
"""

from __future__ import annotations

from collections.abc import Mapping

SLEEP_PHASES: tuple[str, ...] = (
    "preflight",
    "dedup-merge",
    "entity-resolution",
    "person-links",
    "relationship-mining",
    "edge-typing",
    "confidence-decay",
    "arc-synthesis",
    "retention-triage",
    "compress",
    "reprieve",
    "trace-consolidation",
    "task-detection",
    "placement-triage",
    "integrity",
    "state-export",
    "report",
)
"""Canonical order (docs/phases.md §1 table)."""

LLM_PHASES: frozenset[str] = frozenset(
    {
        "dedup-merge",
        "entity-resolution",
        "edge-typing",
        "arc-synthesis",
        "compress",
        "trace-consolidation",
        "task-detection",
        "placement-triage",
    }
)
"""The eight phases that call a model when one is bound (docs/phases.md §1)."""

NON_COMMITTING_PHASES: frozenset[str] = frozenset({"preflight", "relationship-mining"})
"""Phases that never commit, by design (docs/phases.md §0.3: preflight only refreshes the index; mined edges are
index-only)."""

SWEEP_PHASES: frozenset[str] = frozenset({"confidence-decay", "integrity", "state-export", "report"})
"""Uniform sweeps whose diffs do not pin a path for placement-triage (docs/phases.md §1.14)."""

HARD_PREREQUISITES: Mapping[str, tuple[str, ...]] = {
    **{phase: ("preflight",) for phase in SLEEP_PHASES[1:]},
    "compress": ("preflight", "dedup-merge"),
    "retention-triage": ("preflight", "dedup-merge"),
}
"""phase → phases whose failure skips it (docs/phases.md §0.2: preflight gates all sixteen after it)."""

DETECTED_TASK_CAP = 10
"""Detected tasks minted per night across all detectors (docs/tasks.md §7)."""

MAX_SAME_DAY_RUNS = 100
"""Run ids per date: ``sleep/<date>``, then ``-2`` … ``-100`` (docs/sleep.md §2.1 "Run abort")."""

STALE_RUN_HOURS = 20
"""A ``running`` row older than this is reaped as abandoned (docs/sleep.md §2.4 "reaped")."""


def phase_ordinal(phase: str) -> int:
    """Return the 1-based position of ``phase`` in :data:`SLEEP_PHASES`."""
    return SLEEP_PHASES.index(phase) + 1


def select_phases(names: str | None) -> tuple[str, ...]:
    """Parse a ``--phases a,b`` value into canonical order; ``None`` or blank selects all.

    Raises:
        ValueError: naming the unknown phase (the CLI turns it into a usage error).
    """
    if names is None or not names.strip():
        return SLEEP_PHASES
    wanted = {n.strip() for n in names.split(",") if n.strip()}
    unknown = sorted(wanted - set(SLEEP_PHASES))
    if unknown:
        raise ValueError(f"unknown phase(s): {', '.join(unknown)}; phases: {', '.join(SLEEP_PHASES)}")
    return tuple(p for p in SLEEP_PHASES if p in wanted)
