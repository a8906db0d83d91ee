"""``memory_status``: the health of the memory at a glance (spec digest §7)."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from git_memhtml.index.db import IndexDB
    from git_memhtml.service.door import Door


def memory_status(door: Door, db: IndexDB) -> dict[str, Any]:
    """``index status --json``'s data (``indexed_head, head, fresh, files, archived, chunks, embeddings, edges,
    space``) plus ``dirty`` (uncommitted memory-tree changes), ``countsByType`` (live files by type), ``embedder``
    (the configured space, ``None`` for lexical only) and ``lastSleep`` (``{runId, status, startedAt, endedAt}`` of
    the latest real run, or ``None``). Reads only."""
    from git_memhtml.index.indexer import status
    from git_memhtml.index.runs import latest_run
    from git_memhtml.index.stats import live_type_counts

    repo = door.repo()
    embedder = door.embedder()
    run = latest_run(db)
    return asdict(status(repo, db)) | {
        "dirty": bool(repo.dirty()),
        "countsByType": live_type_counts(db),
        "embedder": None if embedder is None else embedder.space,
        "lastSleep": None if run is None else {"runId": run.run_id, "status": run.status, "startedAt": run.started_at,
                                               "endedAt": run.ended_at},
    }
