"""Reads of the store through the index: ``list`` (docs/retrieval.md §4.9 "Other reads")."""

from __future__ import annotations

from typing import Any

from git_memhtml.domain.entities import entity_key
from git_memhtml.index.db import IndexDB

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
    where = ["1 = 1"]
    params: list[Any] = []
    if not include_archived and para != "archive":
        where.append("f.archived = 0")
    for column, value in (("f.memory_type", memory_type), ("f.workspace", workspace), ("f.para", para)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    if tag is not None:
        where.append("EXISTS (SELECT 1 FROM file_tags t WHERE t.path = f.path AND t.tag = ?)")
        params.append(tag)
    if entity is not None:
        where.append("EXISTS (SELECT 1 FROM file_entities e WHERE e.path = f.path AND e.entity_key = ?)")
        params.append(entity_key(entity))
    if cursor is not None:
        where.append("f.path > ?")
        params.append(cursor)
    limit = max(1, min(limit, LIST_LIMIT_MAX))
    rows = db.query(
        "SELECT f.path, f.title, f.gist, f.memory_type, f.updated_at, f.archived, f.task_status FROM files f "
        f"WHERE {' AND '.join(where)} ORDER BY f.path LIMIT ?",
        (*params, limit + 1),
    )
    page = rows[:limit]
    out = [
        {
            "path": r[0],
            "title": r[1],
            "gist": r[2],
            "memoryType": r[3],
            "updatedAt": r[4],
            "archived": bool(r[5]),
            "taskStatus": r[6],
        }
        for r in page
    ]
    return out, (str(page[-1][0]) if len(rows) > limit else None)
