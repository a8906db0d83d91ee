"""Phase bodies: a total mapping from every name of ``SLEEP_PHASES`` to its body, checked at import."""

from __future__ import annotations

from collections.abc import Mapping

from git_memhtml.sleep.contract import SLEEP_PHASES
from git_memhtml.sleep.env import PhaseBody
from git_memhtml.sleep.phases import (
    _nomodel,
    confidence_decay,
    dedup_merge,
    entity_resolution,
    integrity,
    person_links,
    preflight,
    relationship_mining,
    report,
    reprieve,
    retention_triage,
    state_export,
)

PHASE_BODIES: Mapping[str, PhaseBody] = {
    "preflight": preflight.run,
    "dedup-merge": dedup_merge.run,
    "entity-resolution": entity_resolution.run,
    "person-links": person_links.run,
    "relationship-mining": relationship_mining.run,
    "edge-typing": _nomodel.edge_typing,
    "confidence-decay": confidence_decay.run,
    "arc-synthesis": _nomodel.arc_synthesis,
    "retention-triage": retention_triage.run,
    "compress": _nomodel.compress,
    "reprieve": reprieve.run,
    "trace-consolidation": _nomodel.trace_consolidation,
    "task-detection": _nomodel.task_detection,
    "placement-triage": _nomodel.placement_triage,
    "integrity": integrity.run,
    "state-export": state_export.run,
    "report": report.run,
}

if set(PHASE_BODIES) != set(SLEEP_PHASES):  # the total-mapping check (docs/phases.md §1)
    missing = sorted(set(SLEEP_PHASES) - set(PHASE_BODIES))
    extra = sorted(set(PHASE_BODIES) - set(SLEEP_PHASES))
    raise ImportError(f"PHASE_BODIES is not total: missing {missing}, unknown {extra}")
