"""Phase 9, retention-triage: archive every memory in the evict band (sleep-eval §1 phase 9, §4; seed 000 §1, §4,
§6).

The retention pass (``sleep.scoring``) scores the active non-task corpus after confidence-decay and dedup-merge;
every non-arc memory whose score is at or below 0.3 is moved to ``archive/<YYYY>/`` with ``git mv`` and stamped
archived — unless it was created less than ``domain.retention.EVICTION_GRACE_DAYS`` (30) days before the run: a
new memory nobody has read yet is not "unused for long" (issue 8 item 4), and is counted ``graced``. Tasks are
never scored (a neglected task scores at the floor and is exactly the one still owed); arcs
are never evicted here. Nothing is deleted.
"""

from __future__ import annotations

from git_memhtml.sleep.env import PhaseEnv, PhaseOutcome
from git_memhtml.sleep.scoring import retention_pass
from git_memhtml.store.edits import archive_file

EXEMPT_TYPES: frozenset[str] = frozenset({"arc", "task"})
"""Types retention-triage never archives (sleep-eval §1 phase 9)."""


def run(env: PhaseEnv) -> PhaseOutcome:
    """Score and evict; counts ``scored, keep, compress, evict, evicted, graced``; body lists ``path -> archive path``.

    ``evict`` is the band count (sleep-eval §1 phase 9); ``graced`` counts the evict-band memories kept because
    they are inside the eviction grace; ``evicted`` the ones archived.

    Raises:
        StorageError: the index cannot be read. GitError: a move failed.
    """
    scored = retention_pass(env.db, at=env.at, root=env.repo.root)
    counts = {"scored": len(scored), "keep": 0, "compress": 0, "evict": 0, "evicted": 0, "graced": 0}
    moved: list[str] = []
    for item in scored:
        counts[item.band] += 1
        if item.band != "evict" or item.row.memory_type in EXEMPT_TYPES:
            continue
        if item.graced:
            counts["graced"] += 1
            continue
        if env.dry_run:
            counts["evicted"] += 1
            continue
        target = archive_file(env.repo, item.row.path, at=env.at)
        if target is not None:
            counts["evicted"] += 1
            moved.append(f"{item.row.path} -> {target} (score {item.score:.4f})")
    n = counts["evicted"]
    return PhaseOutcome(
        counts,
        subject=f"evict {n} memories below the retention floor",
        body="\n".join(moved) if moved else None,
    )
