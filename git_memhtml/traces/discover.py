"""Finding transcript files under the configured roots, following no symlink (docs/traces.md §1).

Claude Code (``memhtml.traceroot``, default ``~/.claude``): ``<root>/projects/<cwd-slug>/<session-id>.jsonl`` and
the sub-agent sidecars ``<root>/projects/<cwd-slug>/<session-id>/subagents/agent-<id>.jsonl``. Codex CLI
(``memhtml.codexroot``, default ``~/.codex``): ``<root>/sessions/YYYY/MM/DD/rollout-<stamp>-<uuid>.jsonl``.

Below a root nothing that is a symlink is entered or read (a folder or file link, inside the root or pointing out
of it, or a loop), names that are not UTF-8 are left out, and only names of the documented shapes are taken: a
session id must pass :func:`~git_memhtml.traces.model.safe_session_id`, so a name such as ``...jsonl`` or one with
a control character is skipped. The root itself may be a symlink (``~/.claude`` often is).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from git_memhtml.pathnames import is_utf8_name
from git_memhtml.traces.model import Source, safe_session_id

_UUID_TAIL = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_AGENT = re.compile(r"agent-([A-Za-z0-9][A-Za-z0-9_-]{0,63})\.jsonl")
_YEAR, _TWO = re.compile(r"[0-9]{4}"), re.compile(r"[0-9]{2}")


@dataclass(frozen=True)
class TranscriptFile:
    """One transcript file found: absolute ``path``, ``source``, the ``session_id`` its path names, the Claude Code
    project ``slug`` (``""`` for Codex), and whether it is a sub-agent sidecar (then ``agent_id`` is set)."""

    path: str
    source: Source
    session_id: str
    slug: str = ""
    agent_id: str = ""

    @property
    def sub_agent(self) -> bool:
        """The file is a Claude Code sub-agent sidecar."""
        return bool(self.agent_id)


def _entries(folder: str) -> list[os.DirEntry[str]]:
    """``folder``'s entries by name, leaving out names that are not UTF-8 (they could not be stored or shown as
    they are); ``[]`` when it cannot be listed (missing, not a folder, no permission) or its own path is not
    UTF-8."""
    if not folder or not is_utf8_name(folder):
        return []
    try:
        with os.scandir(folder) as it:
            return sorted((e for e in it if is_utf8_name(e.name)), key=lambda e: e.name)
    except OSError:
        return []


def _folders(folder: str) -> Iterator[os.DirEntry[str]]:
    for entry in _entries(folder):
        if entry.is_dir(follow_symlinks=False):
            yield entry


def _files(folder: str) -> Iterator[os.DirEntry[str]]:
    for entry in _entries(folder):
        if entry.is_file(follow_symlinks=False) and entry.name.endswith(".jsonl"):
            yield entry


def _top(root: Path, name: str) -> str:
    """``root/name`` when it is a real folder (not a symlink), else ``""`` (which lists as empty)."""
    path = os.path.join(os.path.abspath(root), name)
    return "" if os.path.islink(path) else path


def claude_files(root: Path) -> list[TranscriptFile]:
    """Every Claude Code transcript under ``root``: per project folder, each main file, then each session's
    sidecars (so a session's main file is read before its sub-agents)."""
    found: list[TranscriptFile] = []
    for project in _folders(_top(root, "projects")):
        for entry in _files(project.path):
            session_id = safe_session_id(entry.name[: -len(".jsonl")])
            if session_id is not None:
                found.append(TranscriptFile(entry.path, "claude-code", session_id, project.name))
        for folder in _folders(project.path):
            session_id = safe_session_id(folder.name)
            if session_id is None:
                continue
            for sub in _folders(folder.path):
                if sub.name != "subagents":
                    continue
                for entry in _files(sub.path):
                    match = _AGENT.fullmatch(entry.name)
                    if match:
                        found.append(TranscriptFile(entry.path, "claude-code", session_id, project.name,
                                                    agent_id=match.group(1)))
    return found


def codex_session_id(name: str) -> str | None:
    """The session id a rollout file name carries: the trailing UUID of ``rollout-<stamp>-<uuid>.jsonl``, else
    everything after ``rollout-``; ``None`` for any other name or an unsafe id."""
    if not name.startswith("rollout-") or not name.endswith(".jsonl"):
        return None
    rest = name[len("rollout-"): -len(".jsonl")]
    match = _UUID_TAIL.search(rest)
    return safe_session_id(match.group(0) if match else rest)


def codex_files(root: Path) -> list[TranscriptFile]:
    """Every Codex rollout under ``root/sessions/YYYY/MM/DD/``."""
    found: list[TranscriptFile] = []
    for year in _folders(_top(root, "sessions")):
        if not _YEAR.fullmatch(year.name):
            continue
        for month in _folders(year.path):
            if not _TWO.fullmatch(month.name):
                continue
            for day in _folders(month.path):
                if not _TWO.fullmatch(day.name):
                    continue
                for entry in _files(day.path):
                    session_id = codex_session_id(entry.name)
                    if session_id is not None:
                        found.append(TranscriptFile(entry.path, "codex", session_id))
    return found
