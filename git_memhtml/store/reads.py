"""Reads of the store through the index: ``list`` (docs/retrieval.md §4.9 "Other reads")."""

from __future__ import annotations

from typing import Any

from git_memhtml.domain.entities import entity_key
from git_memhtml.index.db import IndexDB
from git_memhtml.index.memories import list_page

LIST_LIMIT_MAX = 500
"""Largest page of ``list`` (docs/retrieval.md §4)."""


def list_memories(
    db: IndexDB,
    *,
    memory_type: str | None = None,
    workspace: str | None = None,
    tag: str | None = None,
    entity: str | None = None,
    para: str | None = None,
    include_archived: bool = False,
    limit: int = 50,
    cursor: str | None = None,
) -> tuple[list[dict[str, Any]], str | None]:
    """Return one page of memories in path order (keyset ``path > cursor``) and the next cursor.

    Tasks are included; archived files only with ``include_archived`` (or ``para='archive'``).
    """
    limit = max(1, min(limit, LIST_LIMIT_MAX))
    rows = list_page(
        db, memory_type=memory_type, workspace=workspace, para=para, tag=tag,
        entity_key=None if entity is None else entity_key(entity),
        include_archived=include_archived or para == "archive", after=cursor, limit=limit + 1,
    )
    page = rows[:limit]
    out = [
        {
            "path": r.path,
            "title": r.title,
            "gist": r.gist,
            "memoryType": r.memory_type,
            "updatedAt": r.updated_at,
            "archived": r.archived,
            "taskStatus": r.task_status,
        }
        for r in page
    ]
    return out, (page[-1].path if len(rows) > limit else None)
