"""``sleep plan``: would a run change anything? Index counts only; no phase runs (docs/sleep.md §2.8, docs/sleep.md
§2.9).

Verdict: ``would-change`` when a counted signal is non-zero; ``no-signal`` when every signal is zero, every
uncountable input is empty and the index describes the checkout; ``unknown`` otherwise.
"""

from __future__ import annotations

from typing import Any

from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.runs import latest_run

SESSIONS_PER_RUN = 10
"""Transcripts consolidated per night (docs/phases.md §1.12)."""


def plan(repo: GitRepo, db: IndexDB) -> dict[str, Any]:
    """Return the plan: verdict, signals (each naming the phases it feeds), unknowns, freshness, dirty paths."""
    last = latest_run(db)
    since = last.started_at if last else ""
    head = repo.head_sha()
    state = db.query_one("SELECT head_sha FROM index_state WHERE id = 1")
    indexed = state[0] if state else None
    dirty = [e.path for e in repo.dirty()]
    fresh = indexed is not None and indexed == head and not dirty

    def count(sql: str, params: tuple[object, ...] = ()) -> int:
        found = db.query_one(sql, params)
        return int(found[0]) if found and found[0] is not None else 0

    signals: dict[str, dict[str, Any]] = {
        "memoriesSinceLastRun": {
            "count": count(
                "SELECT count(*) FROM files WHERE archived = 0 AND memory_type <> 'task' AND updated_at >= ?", (since,)
            ),
            "feeds": ["dedup-merge", "entity-resolution", "relationship-mining", "confidence-decay"],
        },
        "unembeddedChunks": {
            "count": count("SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.chunk_id = c.chunk_id)"),
            "feeds": ["preflight"],
        },
        "settledSessions": {"count": 0, "feeds": ["trace-consolidation"]},
        "danglingAuthoredLinks": {
            "count": count(
                "SELECT count(*) FROM edges e WHERE e.derived = 0 AND NOT EXISTS (SELECT 1 FROM files f WHERE f.path = e.dst_path)"
            ),
            "feeds": ["integrity"],
        },
        "pendingEntityMerges": {
            "count": count("SELECT count(*) FROM state.entity_corroboration WHERE promoted = 0"),
            "feeds": ["entity-resolution"],
        },
        "ttlPassed": {
            "count": count(
                "SELECT count(*) FROM files WHERE archived = 0 AND memory_type NOT IN ('task','arc') "
                "AND valid_until IS NOT NULL AND valid_until <> '' AND valid_until <= strftime('%Y-%m-%dT%H:%M:%SZ','now')"
            ),
            "feeds": ["reprieve"],
        },
    }
    active = count("SELECT count(*) FROM files WHERE archived = 0 AND memory_type <> 'task'")
    unknowns: dict[str, dict[str, Any]] = {
        "pairCandidates": {"input": active, "reason": "counting candidate pairs is the neighbour scan itself"},
        "communityMembers": {
            "input": count("SELECT count(*) FROM files WHERE archived = 0 AND path LIKE 'areas/inbox/%' AND memory_type <> 'task'"),
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
        "sessionsPerRun": SESSIONS_PER_RUN,
        "indexedCommit": indexed,
        "headSha": head,
        "indexFresh": fresh,
        "dirty": dirty,
        "lastRun": None if last is None else {"runId": last.run_id, "status": last.status, "startedAt": last.started_at},
    }
