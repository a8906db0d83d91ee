"""Phase 11, reprieve: a memory whose ``valid-until`` has passed is extended or archived (docs/phases.md §1.11,
docs/retention.md §4.4; docs/phases.md §1, §0.4).

Selection: active non-arc, non-task memories with a ``valid_until`` at or before the run instant. Each gets the
reprieve score ``0.4*importance/10 + 0.3*ln(1+access) + 0.2*max(0, outcome) + 0.1*exp(-0.01*hours)`` (hours
since the last access, else since ``updated_at``). A score >= 0.5 with fewer than 3 reprieves extends validity
by 14 days from the run date and counts the reprieve; anything else is archived.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from git_memhtml.domain.instants import format_instant, parse_instant
from git_memhtml.domain.reinforce import AccessState
from git_memhtml.domain.retention import MAX_REPRIEVES, REPRIEVE_DAYS, reprieve_score, should_reprieve
from git_memhtml.index.access import access_rows
from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.sleep.phases.scoring import active_rows
from git_memhtml.store.edits import archive_file, set_meta, stamp_file

EXEMPT_TYPES: frozenset[str] = frozenset({"arc", "task"})
"""Types reprieve never selects (docs/phases.md §1.11)."""


@dataclass(frozen=True)
class ReprieveCounts(PhaseCounts):
    """``ttl_passed`` selected, ``reprieved``, ``expired``, and the ``max_reprieves`` cap (3) they were judged by."""

    ttl_passed: int
    reprieved: int
    expired: int
    max_reprieves: int


def extended_until(at: str, days: int = REPRIEVE_DAYS) -> str:
    """The new ``valid-until``: the run instant (midnight UTC of the run date) plus ``days`` (14, docs/retention.md
    §4.4)."""
    start = parse_instant(at)
    if start is None:
        raise ValueError(f"run instant {at!r} is not ISO-8601")
    return format_instant(start + timedelta(days=days))


def hours_since(earlier: str | None, at: datetime) -> float:
    """Hours from ``earlier`` to ``at``, clamped at 0; an absent or unreadable stamp reads as 0 hours."""
    start = parse_instant(earlier) if earlier else None
    if start is None:
        return 0.0
    return max(0.0, (at - start).total_seconds() / 3600.0)


def run(env: PhaseEnv) -> PhaseOutcome:
    """Reprieve or expire; counts ``ttlPassed, reprieved, expired, maxReprieves``.

    Raises:
        StorageError: the index cannot be read. GitError: a move failed.
    """
    now = parse_instant(env.at)
    if now is None:
        raise ValueError(f"run instant {env.at!r} is not ISO-8601")
    access = access_rows(env.db)
    counts = {"ttl_passed": 0, "reprieved": 0, "expired": 0, "max_reprieves": MAX_REPRIEVES}
    lines: list[str] = []
    staged: list[str] = []
    for row in active_rows(env.db, env.repo.root):
        until = parse_instant(row.valid_until) if row.valid_until else None
        if row.memory_type in EXEMPT_TYPES or until is None or until > now:
            continue
        counts["ttl_passed"] += 1
        facts = access.get(row.path, AccessState())
        hours = hours_since(facts.last_accessed_at or row.updated_at, now)
        score = reprieve_score(row.importance, facts.access_count, facts.outcome_score, hours)
        if should_reprieve(score, row.reprieves):
            if env.dry_run:
                counts["reprieved"] += 1
                continue
            edits = [
                set_meta("valid-until", extended_until(env.at)),
                set_meta("reprieves", str(row.reprieves + 1)),
                set_meta("updated", env.at),
            ]
            if stamp_file(env.repo, row.path, edits, stage=False):
                staged.append(row.path)
                counts["reprieved"] += 1
                lines.append(f"reprieve {row.path} (score {score:.4f}, reprieve {row.reprieves + 1})")
            continue
        if env.dry_run:
            counts["expired"] += 1
            continue
        target = archive_file(env.repo, row.path, at=env.at, stage=False)
        if target is not None:
            staged += [row.path, target]
            counts["expired"] += 1
            lines.append(f"expire {row.path} -> {target} (score {score:.4f}, {row.reprieves} reprieves)")
    if staged:
        env.repo.stage(staged)  # once: each stage call rewrites the whole git index
    return PhaseOutcome(
        ReprieveCounts(**counts),
        subject=f"reprieve {counts['reprieved']}, expire {counts['expired']} TTL-passed memories",
        body="\n".join(lines) if lines else None,
    )


register(PhaseSpec("reprieve", run, ReprieveCounts))
