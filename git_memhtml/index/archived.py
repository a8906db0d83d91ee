"""What an empty result means: archived rows the same scope and query match (docs/retrieval.md §4.5 "archivedMatches").

When a search hides archived rows and returns nothing, the agent needs to tell "never existed" from "archived"
and follow ``supersededBy`` to the replacement. An archived row *matches* when it satisfies every other field of
the scope and the query's lexical form (the sanitised FTS ``MATCH``; every archived row in scope when the query
keeps no token). The vector arm has no threshold, so it cannot say "matches"; recency and salience match
everything. Read-only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from git_memhtml.index.db import IndexDB
from git_memhtml.index.retrieval_sql import Params, Scope, fts_match, scope_sql, superseded_by_sql

ARCHIVED_LISTED = 10
"""Archived matches listed with their ``supersededBy`` (the count covers all); an implementation choice."""


@dataclass(frozen=True)
class ArchivedMatch:
    """One archived row the empty search would have matched: its path, title and replacement (or ``None``)."""

    path: str
    title: str
    superseded_by: str | None


def archived_matches_sql(scope: Scope, match: str | None) -> tuple[str, str, Params]:
    """Return ``(count_sql, list_sql, params)``: archived rows under ``scope``'s other fields matching ``match``.

    The list is ordered by ``bm25`` (or newest ``coalesce(event_at, updated_at)`` without a match), then path,
    ``LIMIT :listed``. The scope filter is :func:`scope_sql` of the same scope with archived rows admitted, plus
    ``archived = 1``; ``as_of`` is dropped (a point-in-time scope already admits archived rows).
    """
    filter_sql, params = scope_sql(replace(scope, include_archived=True, as_of=None))
    where = f"{filter_sql} AND f.archived = 1"
    if match is not None:
        source = f"files_fts JOIN files f ON f.id = files_fts.rowid WHERE files_fts MATCH :match AND {where}"
        order = "bm25(files_fts), f.path"
        params["match"] = match
    else:
        source = f"files f WHERE {where}"
        order = "coalesce(f.event_at, f.updated_at) DESC, f.path"
    params["listed"] = ARCHIVED_LISTED
    return (f"SELECT count(*) FROM {source}", f"SELECT f.path, f.title FROM {source} ORDER BY {order} LIMIT :listed",
            params)


def archived_matches(db: IndexDB, query: str, scope: Scope) -> tuple[int, tuple[ArchivedMatch, ...]]:
    """Count the archived rows ``scope`` + ``query`` match and list the first :data:`ARCHIVED_LISTED` of them.

    Returns ``(0, ())`` when the scope already admits archived rows (``include_archived`` or ``as_of``): they
    would have been hits. Raises ``StorageError`` when SQLite fails.
    """
    if scope.include_archived or scope.as_of is not None:
        return 0, ()
    count_sql, list_sql, params = archived_matches_sql(scope, fts_match(query))
    count_params = {k: v for k, v in params.items() if k != "listed"}
    row = db.query_one(count_sql, count_params)
    count = int(row[0]) if row is not None else 0
    if count == 0:
        return 0, ()
    rows = db.query(list_sql, params)
    paths = [str(r[0]) for r in rows]
    sql, sparams = superseded_by_sql(paths)
    superseded: dict[str, str] = {}
    for dst, src in db.query(sql, sparams):
        superseded.setdefault(dst, src)
    return count, tuple(ArchivedMatch(str(p), str(t), superseded.get(str(p))) for p, t in rows)
