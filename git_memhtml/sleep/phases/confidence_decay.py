"""Phase 7, confidence-decay: one decay step per elapsed week for every un-reinforced memory (docs/phases.md §1.7,
docs/retention.md §4.3; docs/phases.md §0.4, docs/sleep.md §2.9).

Decision (docs/sleep.md "Decay follows time, not runs"): the original applies one step per *run*, so a caller
that runs sleep twice forgets twice as fast, and a second run over an unchanged corpus changes scores and can
evict — contradicting docs/sleep.md §2.9 ("a run over an unchanged corpus re-derives the same deterministic scores").
Here the number of steps is ``floor(days from the file's memhtml-updated to the run instant / 7)``: the same
EWMA step (1.0 → 0.92 → 0.848), applied per :data:`DECAY_PERIOD_DAYS` without a stamp, whatever the cadence.
``updated`` is read as the run's base commit has it, so a stamp an earlier phase of the same night made (an
entity rewrite, a person link) does not hide the time the memory really went untouched.

The value decayed is the one in the FILE (``memhtml-confidence``), not the index projection: an absent or
invalid value reads as 1.0. A file whose ``state.access.reinforcement_count`` is above 0 is exempt, and tasks are
never touched (counted as ``skippedType``). A change smaller than 0.005 is not written, so a value near the floor
stops producing diffs. A written value has three decimals and the stamp sets ``updated`` to the run instant.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from git_memhtml.document.editors import get_meta
from git_memhtml.domain.decay import decay_confidence, format_confidence, should_commit
from git_memhtml.domain.instants import parse_instant
from git_memhtml.index.memories import live_reinforcements
from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.store.edits import set_meta, stamp_file

DECAY_PERIOD_DAYS = 7
"""One decay step per this many days since the file's last ``updated`` stamp (our decision, docs/sleep.md)."""
MAX_STEPS = 104
"""Cap on steps applied at once (two years of weeks); the value is at the 0.2 floor long before."""


@dataclass(frozen=True)
class ConfidenceDecayCounts(PhaseCounts):
    """See :func:`run`."""

    active: int
    reinforced: int
    skipped_type: int
    not_due: int
    eligible: int
    below_gate: int
    decayed: int


def due_steps(updated: str | None, at: str) -> int:
    """Return how many decay steps are due: whole :data:`DECAY_PERIOD_DAYS` periods from ``updated`` to ``at``.

    An unreadable ``updated`` counts as one period (the file has never been stamped by a readable clock).
    """
    then, now = parse_instant(updated), parse_instant(at)
    if now is None:
        return 0
    if then is None:
        return 1
    days = (now - then).total_seconds() / 86400
    return max(0, min(MAX_STEPS, int(days // DECAY_PERIOD_DAYS)))


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


def _base_updated(env: PhaseEnv, blob: str | None, data: bytes, html: str) -> str | None:
    """``updated`` of the file as the run's base commit has it (blob ``blob``), or ``None`` when the base lacks it.

    Most files are unchanged since the base: their bytes equal the blob's, and the work-tree text already read
    (whose head scan the editors keep) answers without a second decode.
    """
    if blob is None:
        return None
    base = env.repo.read_blob(blob)
    text = html if base == data else base.decode("utf-8", errors="replace")
    return get_meta(text, "updated")


def run(env: PhaseEnv) -> PhaseOutcome:
    """Decay and stamp; counts ``active, reinforced, skippedType, eligible, belowGate, decayed``.

    ``active`` counts every active indexed file (tasks included); ``notDue`` the files stamped less than a decay
    period before the run; ``eligible`` the files decayed or gated;
    ``belowGate`` the eligible files whose change is under 0.005; ``decayed`` the files stamped (or, on a dry run,
    that would be). Files missing from the tree are skipped silently (the tree wins).

    Raises:
        StorageError: the index cannot be read.
    """
    rows = live_reinforcements(env.db)
    counts = {
        "active": len(rows),
        "reinforced": 0,
        "skipped_type": 0,
        "not_due": 0,
        "eligible": 0,
        "below_gate": 0,
        "decayed": 0,
    }
    stamped: list[str] = []
    base_blobs = env.repo.tree_blobs(env.base_sha, prefixes=()) if env.base_sha else {}  # one tree read
    for row in rows:
        path = row.path
        if row.memory_type == "task":
            counts["skipped_type"] += 1
            continue
        if row.reinforcement_count > 0:
            counts["reinforced"] += 1
            continue
        target = env.repo.root / path
        if not target.is_file():
            continue
        data = target.read_bytes()
        html = data.decode("utf-8", errors="replace")
        anchor = _base_updated(env, base_blobs.get(path), data, html)
        steps = due_steps(anchor or get_meta(html, "updated"), env.at)
        if steps == 0:
            counts["not_due"] += 1
            continue
        counts["eligible"] += 1
        old = file_confidence(html)
        new = old
        for _ in range(steps):
            new = decay_confidence(new)
        if not should_commit(old, new):
            counts["below_gate"] += 1
            continue
        if env.dry_run:
            counts["decayed"] += 1
            continue
        edits = [set_meta("confidence", format_confidence(new)), set_meta("updated", env.at)]
        if stamp_file(env.repo, path, edits, stage=False):
            counts["decayed"] += 1
            stamped.append(path)
    if stamped:
        env.repo.stage(stamped)  # once: each stage call rewrites the whole git index
    n = counts["decayed"]
    return PhaseOutcome(ConfidenceDecayCounts(**counts), subject=f"decay confidence on {n} un-reinforced memories")


register(PhaseSpec("confidence-decay", run, ConfidenceDecayCounts, sweep=True))
