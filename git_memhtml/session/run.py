"""The two hook bodies: recall for a prompt, trace indexing for a finished session (docs/session.md §1, §4).

Both only read the memory: neither writes a memory file, commits, catches the index up with the work tree or bumps
an access. Both open the index only when the repository already has one (``<git-dir>/memhtml/index.db``), so a hook
run in a git repository that is not a memory creates nothing there. Every failure is raised; the CLI turns it
into silence.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from git_memhtml.embed.base import Embedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.index.recall import recall
from git_memhtml.index.retrieval import ArmWeights
from git_memhtml.index.traces import TraceTables
from git_memhtml.session.events import HookEvent, query_of
from git_memhtml.session.pack import agent_output, pack_text
from git_memhtml.traces.discover import TranscriptFile
from git_memhtml.traces.scan import ScanReport, discover, scan


def _existing_index(repo: GitRepo) -> IndexDB | None:
    """The repository's index when it has one (no recovery: a corrupt index is the caller's failure, never moved
    aside by a hook); ``None`` when it has none."""
    if not (Path(repo.git_dir) / "memhtml" / "index.db").is_file():
        return None
    return IndexDB.for_repo(repo)


def session_recall(repo: GitRepo, event: HookEvent, *, budget: int, embedder: Embedder | None,
                   weights: ArmWeights, now: str, mmr_lambda: float | None) -> str:
    """What ``event.agent``'s prompt hook prints: the recall pack of the event's prompt within ``budget``
    characters, framed as memory data (:func:`~git_memhtml.session.pack.agent_output`); ``""`` when there is no
    prompt, no index, or nothing to recall.

    Raises:
        StorageError: the index cannot be opened or read (locked past SQLite's wait, corrupt).
        EmbedModelMismatch, UsageError: as :func:`git_memhtml.index.recall.recall`.
    """
    query = query_of(event)
    if not query:
        return ""
    db = _existing_index(repo)
    if db is None:
        return ""
    try:
        pack = recall(db, query, budget=budget, embedder=embedder, weights=weights, now=now, mmr_lambda=mmr_lambda)
    finally:
        db.close()
    text = pack_text(pack)
    return agent_output(event.agent, event.event_name, text) if text else ""


def transcript_files(files: Sequence[TranscriptFile], transcript_path: str) -> list[TranscriptFile]:
    """The files of the one session whose main file is ``transcript_path`` (compared by real path): that file and
    its sub-agent sidecars; ``[]`` when ``transcript_path`` is none of ``files`` (outside the configured roots, or
    not a transcript), so a hook never reads a file the roots do not hold."""
    wanted = os.path.realpath(transcript_path)
    main = next((f for f in files if not f.sub_agent and os.path.realpath(f.path) == wanted), None)
    if main is None:
        return []
    return [f for f in files if f.source == main.source and f.session_id == main.session_id]


@dataclass(frozen=True)
class TraceOutcome:
    """One trace hook run: ``report`` of the scan (``None`` when nothing was scanned: no index, or a
    ``transcript_path`` outside the roots) and ``links`` (memories naming a session after the refresh)."""

    report: ScanReport | None
    links: int


def session_trace(repo: GitRepo, event: HookEvent, *, claude_root: Path, codex_root: Path, now: str) -> TraceOutcome:
    """Index the finished session's transcript into the trace plane (docs/traces.md §3): with
    ``event.transcript_path``, that session's files only; without it, every transcript under the roots (as
    ``git memhtml trace index``). Then refresh the ``wrote`` links.

    Raises:
        StorageError: the index cannot be opened or written (locked past SQLite's wait, corrupt, read-only).
    """
    db = _existing_index(repo)
    if db is None:
        return TraceOutcome(None, 0)
    try:
        tables = TraceTables(db)
        roots, files = discover(claude_root, codex_root)
        if event.transcript_path:
            files = transcript_files(files, event.transcript_path)
            if not files:
                return TraceOutcome(None, 0)
        report = scan(tables, roots, files, now=now)
        with db.atomic():
            links = tables.refresh_wrote_links(now=now)
        return TraceOutcome(report, links)
    finally:
        db.close()
