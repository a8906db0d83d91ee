"""Phase 9, retention-triage: archive every memory in the evict band (docs/phases.md §1.9, docs/retention.md §4;
docs/phases.md §1, §0.1, docs/retention.md §4.1).

The retention pass (``sleep.scoring``) scores the active non-task corpus after confidence-decay and dedup-merge;
every non-arc memory whose score is at or below 0.3 is moved to ``archive/<YYYY>/`` with ``git mv`` and stamped
archived — unless its disuse was observed for less than ``domain.retention.OBSERVATION_WINDOW_DAYS`` (30) days:
disuse is evidence only over a window in which use was being recorded, from the later of the memory's creation and
the store's first recorded read (issue 8 item 4). Such a memory is held and counted ``unobserved``; a store that
never recorded a read evicts nothing. Scores and bands stay the spec's. Tasks are never scored (a neglected task scores
at the floor and is exactly the one still owed); arcs are never evicted here. Nothing is deleted.
"""

from __future__ import annotations

from dataclasses import dataclass

from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.sleep.phases.scoring import retention_pass
from git_memhtml.store.edits import archive_file

EXEMPT_TYPES: frozenset[str] = frozenset({"arc", "task"})
"""Types retention-triage never archives (docs/phases.md §1.9)."""


@dataclass(frozen=True)
class RetentionTriageCounts(PhaseCounts):
    """See :func:`run`."""

    scored: int
    keep: int
    compress: int
    evict: int
    evicted: int
    unobserved: int


def run(env: PhaseEnv) -> PhaseOutcome:
    """Score and evict; counts ``scored, keep, compress, evict, evicted, unobserved``; body lists
    ``path -> archive path``.

    ``evict`` is the band count (docs/phases.md §1.9); ``unobserved`` counts the non-arc evict-band memories held
    because their observed window is under 30 days; ``evicted`` the ones archived.

    Raises:
        StorageError: the index cannot be read. GitError: a move failed.
    """
    scored = retention_pass(env.db, at=env.at, root=env.repo.root)
    counts = {"scored": len(scored), "keep": 0, "compress": 0, "evict": 0, "evicted": 0, "unobserved": 0}
    moved: list[str] = []
    staged: list[str] = []
    for item in scored:
        counts[item.band] += 1
        if item.band != "evict" or item.row.memory_type in EXEMPT_TYPES:
            continue
        if item.unobserved:
            counts["unobserved"] += 1
            continue
        if env.dry_run:
            counts["evicted"] += 1
            continue
        target = archive_file(env.repo, item.row.path, at=env.at, stage=False)
        if target is not None:
            counts["evicted"] += 1
            moved.append(f"{item.row.path} -> {target} (score {item.score:.4f})")
            staged += [item.row.path, target]
    if staged:
        env.repo.stage(staged)  # once: each stage call rewrites the whole git index
    n = counts["evicted"]
    return PhaseOutcome(
        RetentionTriageCounts(**counts),
        subject=f"evict {n} memories below the retention floor",
        body="\n".join(moved) if moved else None,
    )


register(PhaseSpec("retention-triage", run, RetentionTriageCounts, prerequisites=("preflight", "dedup-merge")))
