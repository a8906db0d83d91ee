"""The SQL of the trace plane (``state.traces``, ``traces_fts``, ``trace_prompts``, ``trace_watermarks``,
``memory_session_links``; docs/traces.md §5). The only module that names these tables: retrieval never does
(``tests/traces/test_trace_tables_isolated.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from git_memhtml.index.retrieval_sql import fts_match
from git_memhtml.traces.model import COUNT_NAMES, Counts, FileStamp, Link, Prompt, Session, Watermark

if TYPE_CHECKING:
    from git_memhtml.index.db import IndexDB


_SESSION_COLUMNS = ("session_id, source, slug, cwd, git_branch, model, started_at, ended_at, "
                    + ", ".join(COUNT_NAMES)
                    + ", first_prompt, ai_title, file_path, file_size, file_mtime_ms, redactions")


def _session(row: Sequence[Any], prompts: tuple[Prompt, ...]) -> Session:
    counts = Counts(*(int(v) for v in row[8:8 + len(COUNT_NAMES)]))
    rest = row[8 + len(COUNT_NAMES):]
    stamp = FileStamp(rest[2], int(rest[3]), int(rest[4])) if rest[2] is not None else None
    return Session(session_id=row[0], source=row[1], slug=row[2], cwd=row[3], git_branch=row[4], model=row[5],
                   started_at=row[6], ended_at=row[7], counts=counts, first_prompt=rest[0], ai_title=rest[1],
                   prompts=prompts, file=stamp, redactions=int(rest[5]))


class TraceTables:
    """The trace plane's tables over one open index (the :class:`~git_memhtml.traces.scan.TracePlane` the scanner
    writes through)."""

    def __init__(self, db: IndexDB) -> None:
        self.db = db

    def atomic(self) -> AbstractContextManager[None]:
        """One write transaction (``IndexDB.atomic``)."""
        return self.db.atomic()

    def watermarks(self, paths: Sequence[str] | None = None) -> dict[str, Watermark]:
        """The watermarks of ``paths`` (every file's when ``None``) by path."""
        sql = "SELECT path, source, session_id, file_size, mtime_ms, byte_offset FROM state.trace_watermarks"
        if paths is None:
            rows = self.db.query(sql)
        else:
            rows = [row for path in paths for row in self.db.query(sql + " WHERE path = ?", (path,))]
        return {r[0]: Watermark(r[0], r[1], r[2], int(r[3]), int(r[4]), int(r[5])) for r in rows}

    def save_watermark(self, mark: Watermark, *, now: str) -> None:
        """Insert or replace the watermark of ``mark.path``."""
        self.db.execute(
            "INSERT INTO state.trace_watermarks (path, source, session_id, file_size, mtime_ms, byte_offset, "
            "scanned_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET source = excluded.source, "
            "session_id = excluded.session_id, file_size = excluded.file_size, mtime_ms = excluded.mtime_ms, "
            "byte_offset = excluded.byte_offset, scanned_at = excluded.scanned_at",
            (mark.path, mark.source, mark.session_id, mark.size, mark.mtime_ms, mark.offset, now),
        )

    def load_session(self, session_id: str) -> Session | None:
        """The stored session ``session_id`` with its prompts, or ``None``."""
        row = self.db.query_one(f"SELECT {_SESSION_COLUMNS} FROM state.traces WHERE session_id = ?", (session_id,))
        if row is None:
            return None
        prompts = tuple(Prompt(int(o), u, a, h) for o, u, a, h in self.db.query(
            "SELECT ordinal, uuid, at, head FROM state.trace_prompts WHERE session_id = ? ORDER BY ordinal",
            (session_id,)))
        return _session(row, prompts)

    def forget_session(self, session_id: str) -> None:
        """Delete the session's row and prompts (a rescan re-reads every file of it) and its files' watermarks."""
        self.db.execute("DELETE FROM state.traces WHERE session_id = ?", (session_id,))
        self.db.execute("DELETE FROM state.trace_prompts WHERE session_id = ?", (session_id,))
        self.db.execute("DELETE FROM state.trace_watermarks WHERE session_id = ?", (session_id,))

    def save_session(self, session: Session, *, now: str) -> None:
        """Insert or update the session row (its rowid, so its FTS row, stays) and replace its prompts."""
        counts = [getattr(session.counts, name) for name in COUNT_NAMES]
        stamp = session.file
        search_text = "\n".join(t for t in (session.first_prompt, session.ai_title) if t)
        values = [session.session_id, session.source, session.slug, session.cwd, session.git_branch, session.model,
                  session.started_at, session.ended_at, *counts, session.first_prompt, session.ai_title,
                  stamp.path if stamp else None, stamp.size if stamp else None, stamp.mtime_ms if stamp else None,
                  session.redactions, search_text, now]
        names = _SESSION_COLUMNS + ", search_text, indexed_at"
        updates = ", ".join(f"{n.strip()} = excluded.{n.strip()}" for n in names.split(",")[1:])
        self.db.execute(f"INSERT INTO state.traces ({names}) VALUES ({', '.join('?' for _ in values)}) "
                        f"ON CONFLICT(session_id) DO UPDATE SET {updates}", values)
        self.db.execute("DELETE FROM state.trace_prompts WHERE session_id = ?", (session.session_id,))
        self.db.executemany("INSERT INTO state.trace_prompts (session_id, ordinal, uuid, at, head) "
                            "VALUES (?, ?, ?, ?, ?)",
                            [(session.session_id, p.ordinal, p.uuid, p.at, p.head) for p in session.prompts])

    def search_sessions(self, query: str, *, cwd: str | None = None, since: str | None = None,
                        limit: int = 20) -> list[Session]:
        """Sessions whose first prompt or title match ``query`` (its words, each quoted, OR-ed: no FTS syntax gets
        through), best ``bm25`` first; with no searchable word in ``query``, every session, newest first. ``cwd``
        filters on equality, ``since`` (UTC ISO) on ``started_at >= since``. Prompts are not loaded."""
        clauses, params = [], []
        if cwd is not None:
            clauses.append("t.cwd = ?")
            params.append(cwd)
        if since is not None:
            clauses.append("t.started_at >= ?")
            params.append(since)
        columns = ", ".join(f"t.{c.strip()}" for c in _SESSION_COLUMNS.split(","))
        match = fts_match(query)
        where = "".join(f" AND {c}" for c in clauses)
        if match is None:
            sql = (f"SELECT {columns} FROM state.traces t WHERE 1 = 1{where} "
                   "ORDER BY t.started_at DESC, t.session_id LIMIT ?")
            rows = self.db.query(sql, [*params, limit])
        else:
            sql = (f"SELECT {columns} FROM state.traces_fts JOIN state.traces t ON t.rowid = traces_fts.rowid "
                   f"WHERE traces_fts MATCH ?{where} "
                   "ORDER BY bm25(traces_fts), t.started_at DESC, t.session_id LIMIT ?")
            rows = self.db.query(sql, [match, *params, limit])
        return [_session(row, ()) for row in rows]

    def session_count(self) -> int:
        """Sessions in the trace plane."""
        row = self.db.query_one("SELECT count(*) FROM state.traces")
        return int(row[0]) if row else 0

    def refresh_wrote_links(self, *, now: str) -> int:
        """Make the ``wrote`` links equal the ``session_id`` of this checkout's indexed memories (``files``): add the
        missing ones, drop those whose memory no longer names the session (moved, edited or gone). Other kinds are
        left alone. Returns the number of ``wrote`` links after the refresh."""
        self.db.execute(
            "DELETE FROM state.memory_session_links WHERE link_kind = 'wrote' AND NOT EXISTS ("
            "SELECT 1 FROM main.files f WHERE f.path = memory_session_links.path "
            "AND f.session_id = memory_session_links.session_id)")
        self.db.execute(
            "INSERT OR IGNORE INTO state.memory_session_links (path, session_id, prompt_id, turn_uuid, link_kind, at) "
            "SELECT f.path, f.session_id, f.prompt_id, f.turn_uuid, 'wrote', coalesce(f.created_at, ?) "
            "FROM main.files f WHERE f.session_id IS NOT NULL AND f.session_id <> ''", (now,))
        row = self.db.query_one("SELECT count(*) FROM state.memory_session_links WHERE link_kind = 'wrote'")
        return int(row[0]) if row else 0

    def links(self, *, session_id: str | None = None, path: str | None = None) -> list[Link]:
        """The links of one session or of one memory path (exactly one of them), by path, session, kind."""
        column, value = ("session_id", session_id) if session_id is not None else ("path", path)
        rows = self.db.query("SELECT path, session_id, prompt_id, turn_uuid, link_kind, at "
                             f"FROM state.memory_session_links WHERE {column} = ? "
                             "ORDER BY path, session_id, link_kind", (value,))
        return [Link(*row) for row in rows]

    def settled_sessions(self, *, before_ms: int, min_bytes: int, limit: int) -> list[Session]:
        """Sessions trace-consolidation may read (docs/traces.md §8): no ``trace_consolidations`` row, a main file
        of at least ``min_bytes`` bytes last modified before ``before_ms`` (ms since the epoch); newest file first,
        then session id; at most ``limit``. Prompts are not loaded."""
        columns = ", ".join(f"t.{c.strip()}" for c in _SESSION_COLUMNS.split(","))
        rows = self.db.query(
            f"SELECT {columns} FROM state.traces t WHERE t.file_path IS NOT NULL AND t.file_size >= ? "
            "AND t.file_mtime_ms < ? AND NOT EXISTS (SELECT 1 FROM state.trace_consolidations c "
            "WHERE c.session_id = t.session_id) ORDER BY t.file_mtime_ms DESC, t.session_id LIMIT ?",
            (min_bytes, before_ms, limit))
        return [_session(row, ()) for row in rows]

    def session_files(self, session_id: str) -> list[str]:
        """Every transcript file scanned for ``session_id`` (the main file and its sub-agent sidecars), by path."""
        rows = self.db.query("SELECT path FROM state.trace_watermarks WHERE session_id = ? ORDER BY path",
                             (session_id,))
        return [str(row[0]) for row in rows]

    def mark_consolidated(self, session_id: str, run_id: str, *, at: str) -> None:
        """Record that ``session_id`` was consolidated by ``run_id`` (a merged run's ``session-consolidated`` mark);
        a second mark keeps the first."""
        self.db.execute("INSERT OR IGNORE INTO state.trace_consolidations (session_id, run_id, consolidated_at) "
                        "VALUES (?, ?, ?)", (session_id, run_id, at))

    def consolidated(self) -> dict[str, str]:
        """session id → the run that consolidated it."""
        return {str(r[0]): str(r[1]) for r in self.db.query(
            "SELECT session_id, run_id FROM state.trace_consolidations ORDER BY session_id")}
