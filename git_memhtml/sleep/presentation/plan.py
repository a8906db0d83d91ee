"""``sleep plan``: would a run change anything? Index counts only; no phase runs (docs/sleep.md §2.8, docs/sleep.md
§2.9).

Verdict: ``would-change`` when a counted signal is non-zero; ``no-signal`` when every signal is zero, every
uncountable input is empty and the index describes the checkout; ``unknown`` otherwise.
"""

from __future__ import annotations

from typing import Any

from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.index.runs import latest_run
from git_memhtml.index.stats import plan_counts
from git_memhtml.index.traces import TraceTables
from git_memhtml.index.watermark import indexed_head
from git_memhtml.traces.settled import TRACE_MIN_BYTES, TRACE_SESSIONS_CAP, TRACE_SESSIONS_PER_RUN, quiet_before_millis


def plan(repo: GitRepo, db: IndexDB, *, at: str) -> dict[str, Any]:
    """Return the plan: verdict, signals (each naming the phases it feeds), unknowns, freshness, dirty paths.

    ``at`` is the instant a run started now would stamp (midnight UTC of today): ``settledSessions`` counts the
    sessions trace-consolidation would find settled then, up to 32 (``traces/settled.py``).

    Raises:
        ValueError: ``at`` is not an instant.
    """
    last = latest_run(db)
    since = last.started_at if last else ""
    head = repo.head_sha()
    indexed = indexed_head(db)
    dirty = [e.path for e in repo.dirty()]
    fresh = indexed is not None and indexed == head and not dirty
    counts = plan_counts(db, since=since)

    signals: dict[str, dict[str, Any]] = {
        "memoriesSinceLastRun": {
            "count": counts.memories_since,
            "feeds": ["dedup-merge", "entity-resolution", "relationship-mining", "confidence-decay"],
        },
        "unembeddedChunks": {
            "count": counts.unembedded_chunks,
            "feeds": ["preflight"],
        },
        "settledSessions": {"count": len(TraceTables(db).settled_sessions(
            before_ms=quiet_before_millis(at), min_bytes=TRACE_MIN_BYTES, limit=TRACE_SESSIONS_CAP)),
            "feeds": ["trace-consolidation"]},
        "danglingAuthoredLinks": {
            "count": counts.dangling_authored_links,
            "feeds": ["integrity"],
        },
        "pendingEntityMerges": {
            "count": counts.pending_entity_merges,
            "feeds": ["entity-resolution"],
        },
        "ttlPassed": {
            "count": counts.ttl_passed,
            "feeds": ["reprieve"],
        },
    }
    active = counts.active
    unknowns: dict[str, dict[str, Any]] = {
        "pairCandidates": {"input": active, "reason": "counting candidate pairs is the neighbour scan itself"},
        "communityMembers": {
            "input": counts.inbox,
            "reason": "communities come from label propagation over mined edges",
        },
        "retentionBands": {"input": active, "reason": "band membership needs the full retention pass"},
    }
    if any(s["count"] > 0 for s in signals.values()):
        verdict = "would-change"
    elif not fresh or any(u["input"] > 0 for u in unknowns.values()):
        verdict = "unknown"
    else:
        verdict = "no-signal"
    return {
        "verdict": verdict,
        "signals": signals,
        "unknowns": unknowns,
        "sessionsPerRun": TRACE_SESSIONS_PER_RUN,
        "indexedCommit": indexed,
        "headSha": head,
        "indexFresh": fresh,
        "dirty": dirty,
        "lastRun": (
            None if last is None
            else {"runId": last.run_id, "status": last.status, "startedAt": last.started_at}
        ),
    }
