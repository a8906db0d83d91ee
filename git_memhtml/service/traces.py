"""Trace verbs: search the indexed agent sessions and list the memory ↔ session links (docs/traces.md)."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from git_memhtml.errors import UsageError
from git_memhtml.service.door import naming

if TYPE_CHECKING:
    from git_memhtml.index.db import IndexDB
    from git_memhtml.traces.model import Session

SEARCH_LIMIT = 20
"""Default ``trace search`` limit (the brief of issue 13)."""


def session_row(session: Session) -> dict[str, Any]:
    """One session as ``trace search --json`` shows it (its prompts left out)."""
    data = asdict(session)
    data.pop("prompts")
    return data


def search(db: IndexDB, query: str, *, cwd: str | None = None, since: str | None = None, limit: int = SEARCH_LIMIT,
           names: tuple[str, str] = ("--cwd", "--since")) -> tuple[list[Session], dict[str, Any]]:
    """Sessions matching ``query`` by first prompt and title (bm25; a query with no word lists the newest), and
    ``trace search --json``'s data ``{query, sessions}``. ``names``: the door's spellings of cwd and since.

    Raises:
        UsageError: ``since`` is no date or instant, or ``cwd`` is blank (naming the argument).
    """
    from git_memhtml.index.traces import TraceTables
    from git_memhtml.traces.fields import utc_instant

    cwd_name, since_name = names
    since_at = None
    if since is not None:
        since_at = utc_instant(since.strip())
        if not since_at:
            raise naming(UsageError(f"{since_name} {since!r} is not a date or an instant",
                                    hint=f"e.g. {since_name} 2026-01-22 or {since_name} 2026-01-22T19:38:00Z"),
                         since_name)
    if cwd is not None and not cwd.strip():
        raise naming(UsageError(f"{cwd_name} is empty",
                                hint=f"name the folder the session ran in, e.g. {cwd_name} /home/me/project"), cwd_name)
    sessions = TraceTables(db).search_sessions(query, cwd=cwd, since=since_at, limit=limit)
    return sessions, {"query": query, "sessions": [session_row(s) for s in sessions]}


def check_session_id(session_id: str, argument: str) -> str:
    """``session_id`` unchanged when it is a session id.

    Raises:
        UsageError: letters, digits, ``.``, ``_``, ``:``, ``-`` only; no ``..``, no ``/`` (naming ``argument``).
    """
    from git_memhtml.traces.model import safe_session_id

    if safe_session_id(session_id) is None:
        raise naming(UsageError(f"{argument} {session_id!r} is not a session id (letters, digits, '.', '_', ':', "
                                "'-'; no '..', no '/')", hint="copy the id from trace search"), argument)
    return session_id


def links(db: IndexDB, *, session_id: str | None, path: str | None, now: str) -> dict[str, Any]:
    """The links between memories and sessions of ``session_id`` or of the memory ``path`` (a resolved repository
    path), after refreshing the ``wrote`` links of this checkout: ``trace links --json``'s data
    ``{sessionId, path, links}``."""
    from git_memhtml.index.traces import TraceTables

    tables = TraceTables(db)
    with db.atomic():
        tables.refresh_wrote_links(now=now)
    found = tables.links(session_id=session_id, path=path)
    return {"sessionId": session_id, "path": path, "links": [asdict(k) for k in found]}
