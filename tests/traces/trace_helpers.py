"""Helpers of the trace tests: writing transcripts of the documented shapes and scanning them into a real index."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from git_memhtml.index.db import IndexDB
from git_memhtml.index.traces import TraceTables
from git_memhtml.traces.model import Session
from git_memhtml.traces.scan import ScanReport, discover, scan

NOW = "2026-02-01T00:00:00Z"
SID = "11111111-2222-3333-4444-555555555555"


def claude_line(kind: str = "user", text: str = "hello", session_id: str | None = SID, **extra: Any) -> bytes:
    """One Claude Code line: a user prompt (``kind="user"``) or an assistant message, newline-terminated."""
    obj: dict[str, Any] = {"type": kind, "timestamp": "2026-01-21T10:00:00.000Z", "cwd": "/home/u/p",
                           "gitBranch": "main", "uuid": f"u-{text[:8]}"}
    if session_id is not None:
        obj["sessionId"] = session_id
    if kind == "user":
        obj["message"] = {"role": "user", "content": text}
    elif kind == "assistant":
        obj["message"] = {"role": "assistant", "model": "claude-test",
                          "content": [{"type": "text", "text": text}, {"type": "tool_use", "id": "t", "name": "Bash",
                                                                        "input": {}}]}
    obj.update(extra)
    return (json.dumps(obj) + "\n").encode()


def claude_root(tmp: Path, lines: bytes, *, session_id: str = SID, slug: str = "-home-u-p") -> tuple[Path, Path]:
    """A Claude Code root with one session file holding ``lines``; returns (root, file)."""
    folder = tmp / "claude" / "projects" / slug
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session_id}.jsonl"
    path.write_bytes(lines)
    return tmp / "claude", path


def bump_mtime(path: Path, seconds: int = 5) -> None:
    """Move ``path``'s mtime forward (a write within the same millisecond would look unchanged)."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + seconds * 1_000_000_000))


def scan_roots(db: IndexDB, claude: Path, codex: Path) -> ScanReport:
    """One scan of both roots into ``db``."""
    roots, files = discover(claude, codex)
    return scan(TraceTables(db), roots, files, now=NOW)


def stored(db: IndexDB, session_id: str = SID) -> Session | None:
    """The stored session with its prompts."""
    return TraceTables(db).load_session(session_id)
