"""The incremental scan behind ``git memhtml trace index`` (docs/traces.md §3).

Each found file gets a :func:`~git_memhtml.traces.watermark.decide` verdict. A file to ``rescan`` makes its whole
session be read again from byte 0 (every file of it: a session folds its main file and its sidecars together, so no
file's share can be taken back alone). Files are read read-only, complete lines only, and each session's rows and
its files' watermarks are written in one transaction, so an interrupted scan leaves every session either as it
was or fully updated. Transcript text is data: nothing in it is ever acted on.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from git_memhtml.traces.claude import ClaudeReader
from git_memhtml.traces.codex import CodexReader
from git_memhtml.traces.discover import TranscriptFile, claude_files, codex_files
from git_memhtml.traces.fields import json_object
from git_memhtml.traces.lines import ReadTally, complete_lines, open_read_only
from git_memhtml.traces.model import Delta, FileStamp, Session, Watermark, merge
from git_memhtml.traces.watermark import Decision, decide


class TracePlane(Protocol):
    """Where the scan keeps what it read (``git_memhtml.index.traces.TraceTables`` over the index)."""

    def atomic(self) -> AbstractContextManager[None]: ...
    def watermarks(self, paths: Sequence[str] | None = None) -> dict[str, Watermark]: ...
    def save_watermark(self, mark: Watermark, *, now: str) -> None: ...
    def load_session(self, session_id: str) -> Session | None: ...
    def forget_session(self, session_id: str) -> None: ...
    def save_session(self, session: Session, *, now: str) -> None: ...
    def session_count(self) -> int: ...


@dataclass(frozen=True)
class Root:
    """One configured root: its ``source``, ``path`` and whether it is a folder now."""

    source: str
    path: str
    present: bool


@dataclass(frozen=True)
class ScanReport:
    """What one scan did (every count ≥ 0; prompts, sub-agents, lines and bytes are those read by this scan).

    ``files_unchanged`` were skipped on their watermark; ``files_unreadable`` could not be opened (permission, gone,
    no longer a regular file: retried next scan); ``torn_lines`` are unterminated last lines left for the next
    scan; ``unknown_types`` / ``invalid_lines`` / ``dropped_lines`` / ``oversized_lines`` as in
    :class:`~git_memhtml.traces.model.Counts`; ``redactions`` secrets replaced in stored heads; ``sessions`` the
    sessions the trace plane holds after the scan.
    """

    roots: tuple[Root, ...] = ()
    files_found: int = 0
    files_scanned: int = 0
    files_unchanged: int = 0
    files_unreadable: int = 0
    sessions_new: int = 0
    sessions_updated: int = 0
    sessions_rescanned: int = 0
    prompts: int = 0
    sub_agents: int = 0
    lines_read: int = 0
    bytes_read: int = 0
    unknown_types: int = 0
    invalid_lines: int = 0
    dropped_lines: int = 0
    oversized_lines: int = 0
    torn_lines: int = 0
    redactions: int = 0
    sessions: int = 0
    unreadable: tuple[str, ...] = field(default=())
    """The paths counted in ``files_unreadable`` (at most 20)."""


def discover(claude_root: Path, codex_root: Path) -> tuple[tuple[Root, ...], list[TranscriptFile]]:
    """The roots as found and every transcript file under them (Claude Code first)."""
    roots = (Root("claude-code", str(claude_root), claude_root.is_dir()),
             Root("codex", str(codex_root), codex_root.is_dir()))
    return roots, claude_files(claude_root) + codex_files(codex_root)


def _stat(path: str) -> tuple[int, int] | None:
    """``(size, mtime_ms)`` of the regular file ``path`` (opened read-only, no symlink), ``None`` when it cannot
    be opened."""
    try:
        fd = open_read_only(path)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return st.st_size, st.st_mtime_ns // 1_000_000


def _read(file: TranscriptFile, offset: int, size: int, mtime_ms: int) -> tuple[Delta, ReadTally] | None:
    """Parse ``file``'s complete lines from ``offset`` up to ``size``; ``None`` when it cannot be opened."""
    reader: ClaudeReader | CodexReader
    if file.source == "codex":
        reader = CodexReader(file.session_id)
    else:
        reader = ClaudeReader(file.session_id, slug=file.slug, sub_agent=file.sub_agent)
    tally = ReadTally()
    try:
        fd = open_read_only(file.path)
    except OSError:
        return None
    try:
        for line in complete_lines(fd, offset, tally, limit=size):
            obj = json_object(line)
            if obj is None:
                if line.strip():
                    reader.invalid()
                continue
            reader.feed(obj)
    except OSError:
        return None
    finally:
        os.close(fd)
    stamp = FileStamp(file.path, size, mtime_ms)
    return reader.delta(stamp, oversized=tally.oversized, first_read=offset == 0), tally


def _decisions(marks: dict[str, Watermark], group: Sequence[TranscriptFile],
               stats: dict[str, tuple[int, int]]) -> tuple[dict[str, Decision], bool]:
    """Each file's verdict against ``marks``, and whether the session must be read again whole."""
    decisions: dict[str, Decision] = {}
    for file in group:
        mark = marks.get(file.path)
        decisions[file.path] = decide(mark if mark is not None and mark.session_id == file.session_id else None,
                                      *stats[file.path])
    return decisions, "rescan" in decisions.values()


def scan(plane: TracePlane, roots: tuple[Root, ...], files: Sequence[TranscriptFile], *, now: str) -> ScanReport:
    """Scan ``files`` against ``plane``'s watermarks and store what is new (see the module doc).

    Each session is decided and written inside one write transaction that reads the watermarks afresh, so two
    scans running at once never read the same bytes twice into a session: the second waits for the first's
    transaction, then finds the watermarks it wrote.
    """
    stats: dict[str, tuple[int, int]] = {}
    unreadable: list[str] = []
    by_session: dict[str, list[TranscriptFile]] = {}
    for file in files:
        found = _stat(file.path)
        if found is None:
            unreadable.append(file.path)
            continue
        stats[file.path] = found
        by_session.setdefault(file.session_id, []).append(file)
    totals = dict.fromkeys(("files_scanned", "files_unchanged", "sessions_new", "sessions_updated",
                            "sessions_rescanned", "prompts", "sub_agents", "lines_read", "bytes_read",
                            "unknown_types", "invalid_lines", "dropped_lines", "oversized_lines", "torn_lines",
                            "redactions"), 0)
    for session_id, group in by_session.items():
        with plane.atomic():
            marks = plane.watermarks(tuple(f.path for f in group))
            decisions, reset = _decisions(marks, group, stats)
            work = [(f, "new" if reset else decisions[f.path]) for f in group]
            totals["files_unchanged"] += sum(1 for _, d in work if d == "skip")
            work = [(f, d) for f, d in work if d != "skip"]
            if not work:
                continue
            if reset:
                plane.forget_session(session_id)
                stored = None
            else:
                stored = plane.load_session(session_id)
            existed = stored is not None
            session = stored
            new_marks: list[Watermark] = []
            for file, decision in work:
                size, mtime_ms = stats[file.path]
                offset = marks[file.path].offset if decision == "tail" else 0
                result = _read(file, offset, size, mtime_ms)
                if result is None:
                    unreadable.append(file.path)
                    continue
                delta, tally = result
                session = merge(session, delta)
                new_marks.append(Watermark(file.path, file.source, session_id, size, mtime_ms, tally.end))
                counts = delta.session.counts
                totals["files_scanned"] += 1
                totals["prompts"] += counts.user_prompts
                totals["sub_agents"] += counts.sub_agents
                totals["lines_read"] += tally.lines
                totals["bytes_read"] += tally.bytes_read
                totals["torn_lines"] += tally.torn
                totals["redactions"] += delta.session.redactions
                for name in ("unknown_types", "invalid_lines", "dropped_lines", "oversized_lines"):
                    totals[name] += getattr(counts, name)
            if session is not None:
                plane.save_session(session, now=now)
            for mark in new_marks:
                plane.save_watermark(mark, now=now)
        totals["sessions_rescanned" if reset else "sessions_updated" if existed else "sessions_new"] += 1
    return ScanReport(roots=roots, files_found=len(files), files_unreadable=len(unreadable),
                      sessions=plane.session_count(), unreadable=tuple(unreadable[:20]), **totals)
