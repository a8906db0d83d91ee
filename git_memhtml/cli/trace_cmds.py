"""``git memhtml trace index|search|links``: the trace plane of agent session transcripts (docs/traces.md).

Transcripts are read, never written; their text reaches the index only as capped heads (``traces/heads.py``).
"""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import TYPE_CHECKING

import click

from git_memhtml.cli.app import utc_now
from git_memhtml.cli.common import app_of, json_option, respond
from git_memhtml.cut import clip
from git_memhtml.errors import UsageError
from git_memhtml.output import kv, table
from git_memhtml.service.traces import SEARCH_LIMIT

if TYPE_CHECKING:
    from git_memhtml.traces.scan import ScanReport



@click.group("trace")
def trace_group() -> None:
    """Index agent session transcripts (Claude Code, Codex CLI) and search them; read only."""


def _absent(path: str) -> str:
    """Why a root contributes nothing: a path that exists but is no folder (a mistyped file, ``/dev/null``) is
    told apart from a missing one."""
    return " (not a folder)" if os.path.lexists(path) else " (not found)"


def _report_text(report: ScanReport, links: int) -> str:
    lines = [f"{root.source} root {root.path}" + ("" if root.present else _absent(root.path)) for root in report.roots]
    lines += [f"{path}: not read (cannot be opened as a regular file; retried next scan)" for path in report.unreadable]
    lines.append(kv({
        "files": f"{report.files_found} found, {report.files_scanned} read, {report.files_unchanged} unchanged, "
                 f"{report.files_unreadable} unreadable",
        "sessions": f"{report.sessions} indexed: {report.sessions_new} new, {report.sessions_updated} updated, "
                    f"{report.sessions_rescanned} rescanned",
        "prompts": report.prompts,
        "sub-agents": report.sub_agents,
        "read": f"{report.lines_read} lines, {report.bytes_read} bytes",
        "skipped lines": f"{report.unknown_types} of unknown type, {report.invalid_lines} invalid, "
                         f"{report.dropped_lines} without a session id, {report.oversized_lines} oversized, "
                         f"{report.torn_lines} torn (left for the next scan)",
        "redactions": report.redactions,
        "links": f"{links} memories name a session",
    }))
    return "\n".join(lines)


@trace_group.command("index")
@json_option
@click.pass_context
def index_cmd(ctx: click.Context, as_json: bool) -> int:
    """Scan the transcript roots incrementally (memhtml.traceroot, memhtml.codexroot) into the trace plane.

    Only what was appended since the last scan is read; a file that shrank or was rewritten makes its session be
    read again. Also refreshes the links of this checkout's memories that name a session (memhtml-session).
    """
    from git_memhtml.config import trace_roots
    from git_memhtml.index.traces import TraceTables
    from git_memhtml.traces.scan import discover, scan

    app = app_of(ctx)
    claude_root, codex_root = trace_roots(app.settings().settings, app.env)
    now = utc_now()
    with app.index() as db:
        tables = TraceTables(db)
        roots, files = discover(claude_root, codex_root)
        report = scan(tables, roots, files, now=now)
        with db.atomic():
            links = tables.refresh_wrote_links(now=now)
    data = asdict(report) | {"links": links}
    respond(as_json, "trace.report", data, lambda: _report_text(report, links))
    return 0


@trace_group.command("search")
@click.argument("query")
@click.option("--cwd", help="Only sessions started in this folder (exact match).")
@click.option("--since", help="Only sessions started at or after this date or instant (YYYY-MM-DD or ISO 8601).")
@click.option("--limit", type=click.IntRange(1, 1000), default=SEARCH_LIMIT, show_default=True,
              help="Most sessions shown.")
@json_option
@click.pass_context
def search_cmd(ctx: click.Context, query: str, cwd: str | None, since: str | None, limit: int,
               as_json: bool) -> int:
    """Search indexed sessions by first prompt and title (bm25; a query with no word lists the newest)."""
    from git_memhtml.service.traces import search

    app = app_of(ctx)
    with app.index(catch_up=False) as db:
        sessions, data = search(db, query, cwd=cwd, since=since, limit=limit)

    def human() -> str:
        if not sessions:
            return "no session matches (git memhtml trace index scans the transcripts)"
        return table(["started", "session", "prompts", "turns", "tools", "title / first prompt"],
                     [[s.started_at[:16], s.session_id, s.counts.user_prompts, s.counts.assistant_turns,
                       s.counts.tool_calls, clip(s.ai_title or s.first_prompt, 60)] for s in sessions])

    respond(as_json, "trace.sessions", data, human)
    return 0


@trace_group.command("links")
@click.option("--session-id", "session_id", help="The session whose memories to list.")
@click.option("--path", "path", help="The memory whose sessions to list.")
@json_option
@click.pass_context
def links_cmd(ctx: click.Context, session_id: str | None, path: str | None, as_json: bool) -> int:
    """List the links between memories and sessions: give exactly one of --session-id and --path."""
    from git_memhtml.service.traces import check_session_id, links

    if (session_id is None) == (path is None):
        raise UsageError("give exactly one of --session-id and --path",
                         hint="git memhtml trace links --session-id <id>, or --path <memory file>")
    app = app_of(ctx)
    repo_path = None
    if session_id is not None:
        check_session_id(session_id, "--session-id")
    if path is not None:
        repo_path = app.memory_path(path, "read", name="--path")
    with app.index() as db:
        data = links(db, session_id=session_id, path=repo_path, now=utc_now())
    found = data["links"]

    def human() -> str:
        if not found:
            return "no link"
        return table(["path", "session", "kind", "at"],
                     [[k["path"], k["session_id"], k["link_kind"], k["at"]] for k in found])

    respond(as_json, "trace.links", data, human)
    return 0
