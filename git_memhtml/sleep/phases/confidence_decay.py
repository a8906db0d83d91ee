"""Phase 7, confidence-decay: one nightly decay step for every un-reinforced memory (sleep-eval §1 phase 7, §4.3;
seed 000 §1, §5).

The value decayed is the one in the FILE (``memhtml-confidence``), not the index projection: an absent or
invalid value reads as 1.0. A file whose ``state.access.reinforcement_count`` is above 0 is exempt, and tasks are
never touched (counted as ``skippedType``). A change smaller than 0.005 is not written, so a value near the floor
stops producing diffs. A written value has three decimals and the stamp sets ``updated`` to the run instant.
"""

from __future__ import annotations

import math

from git_memhtml.document.editors import get_meta
from git_memhtml.domain.decay import decay_confidence, format_confidence, should_commit
from git_memhtml.sleep.env import PhaseEnv, PhaseOutcome
from git_memhtml.store.edits import set_meta, stamp_file


def file_confidence(html: str) -> float:
    """The ``memhtml-confidence`` of a file's head clamped to [0, 1]; absent or not a finite number → 1.0."""
    raw = get_meta(html, "confidence")
    if raw is None:
        return 1.0
    try:
        value = float(raw.strip())
    except ValueError:
        return 1.0
    if not math.isfinite(value):
        return 1.0
    return min(1.0, max(0.0, value))


def run(env: PhaseEnv) -> PhaseOutcome:
    """Decay and stamp; counts ``active, reinforced, skippedType, eligible, belowGate, decayed``.

    ``active`` counts every active indexed file (tasks included); ``eligible`` the files decayed or gated;
    ``belowGate`` the eligible files whose change is under 0.005; ``decayed`` the files stamped (or, on a dry run,
    that would be). Files missing from the tree are skipped silently (the tree wins).

    Raises:
        StorageError: the index cannot be read.
    """
    rows = env.db.query(
        "SELECT f.path, f.memory_type, coalesce(a.reinforcement_count, 0) FROM files f "
        "LEFT JOIN state.access a ON a.path = f.path WHERE f.archived = 0 ORDER BY f.path"
    )
    counts = {"active": len(rows), "reinforced": 0, "skippedType": 0, "eligible": 0, "belowGate": 0, "decayed": 0}
    for path, memory_type, reinforcements in rows:
        if memory_type == "task":
            counts["skippedType"] += 1
            continue
        if int(reinforcements) > 0:
            counts["reinforced"] += 1
            continue
        target = env.repo.root / path
        if not target.is_file():
            continue
        counts["eligible"] += 1
        old = file_confidence(target.read_bytes().decode("utf-8", errors="replace"))
        new = decay_confidence(old)
        if not should_commit(old, new):
            counts["belowGate"] += 1
            continue
        if env.dry_run:
            counts["decayed"] += 1
            continue
        edits = [set_meta("confidence", format_confidence(new)), set_meta("updated", env.at)]
        if stamp_file(env.repo, path, edits):
            counts["decayed"] += 1
    n = counts["decayed"]
    return PhaseOutcome(counts, subject=f"decay confidence on {n} un-reinforced memories")
