"""The one session model both transcript formats parse into (docs/traces.md §2).

A :class:`Session` is what the trace plane keeps of one agent session: identity (id, source, slug, cwd, branch,
model), times, counts, capped heads of its text and a pointer to its main file. A :class:`Delta` is what one read
of one file (whole, or its tail from a watermark) adds to a session; :func:`merge` folds a delta into the stored
session: older identity, newer state, min/max times, counts added (docs/traces.md §3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal

Source = Literal["claude-code", "codex"]
"""Which agent wrote the transcript."""

SAFE_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
"""What a session id must look like to be kept (ours, docs/traces.md §3): Claude Code's are UUIDs, Codex's UUIDs
too. A ``/``, a ``\\``, ``..``, whitespace or a control character never passes, so an id can never name a path."""


def safe_session_id(value: object) -> str | None:
    """``value`` when it is a string matching :data:`SAFE_SESSION_ID` and holding no ``..``; else ``None``."""
    if isinstance(value, str) and SAFE_SESSION_ID.fullmatch(value) and ".." not in value:
        return value
    return None


@dataclass(frozen=True)
class Prompt:
    """One user prompt: its position in the session (0-based), the line's uuid (``""`` when none), the instant
    (UTC ISO with ms, ``""`` when the line had none) and its stored head (≤ 200 characters, redacted)."""

    ordinal: int
    uuid: str
    at: str
    head: str


@dataclass(frozen=True)
class Counts:
    """Line and event counts of a session (all ≥ 0).

    Attributes:
        user_prompts: prompts a person typed (docs/traces.md §2 says which lines count).
        assistant_turns: assistant messages (Claude Code: ``assistant`` lines; Codex: ``message`` items of role
            ``assistant``).
        tool_calls: ``tool_use`` blocks (Claude Code) or ``function_call``/``custom_tool_call``/``local_shell_call``
            items (Codex).
        sub_agents: sub-agent sidecar files read for the session (Claude Code only).
        unknown_types: lines whose ``type`` no parser knows (counted, never fatal).
        invalid_lines: lines that are not UTF-8, not JSON, or not a JSON object.
        dropped_lines: JSON objects without a usable session id (no ``sessionId``, an unsafe one, or another
            session's id in this session's file).
        oversized_lines: lines over the line cap (``traces.lines.MAX_LINE_BYTES``), skipped unread.
    """

    user_prompts: int = 0
    assistant_turns: int = 0
    tool_calls: int = 0
    sub_agents: int = 0
    unknown_types: int = 0
    invalid_lines: int = 0
    dropped_lines: int = 0
    oversized_lines: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(**{name: getattr(self, name) + getattr(other, name) for name in COUNT_NAMES})


COUNT_NAMES: tuple[str, ...] = tuple(Counts.__dataclass_fields__)
"""The field names of :class:`Counts`, in declaration order (the ``traces`` table's count columns)."""


@dataclass(frozen=True)
class FileStamp:
    """A transcript file as last seen: absolute path, size in bytes, mtime in whole milliseconds (truncated)."""

    path: str
    size: int
    mtime_ms: int


@dataclass(frozen=True)
class Session:
    """One agent session as the trace plane stores it.

    Attributes:
        session_id: the agent's id (:func:`safe_session_id`).
        source: ``claude-code`` or ``codex``.
        slug: Claude Code's project folder name (``-home-user-git-x``); for Codex the same spelling of its cwd.
        cwd / git_branch / model: as first seen (``""`` when none was).
        started_at / ended_at: the earliest and latest line instants, UTC ISO with ms (``""`` when none).
        counts: :class:`Counts`.
        first_prompt: head of the first prompt, ≤ 500 characters, redacted.
        ai_title: the agent's own title of the session (newest wins), ≤ 200 characters, redacted.
        prompts: every prompt's :class:`Prompt`, in order.
        file: the session's main transcript file (a sub-agent-only session: the first sidecar read).
        redactions: secrets replaced in the stored heads of this session.
    """

    session_id: str
    source: Source
    slug: str = ""
    cwd: str = ""
    git_branch: str = ""
    model: str = ""
    started_at: str = ""
    ended_at: str = ""
    counts: Counts = field(default_factory=Counts)
    first_prompt: str = ""
    ai_title: str = ""
    prompts: tuple[Prompt, ...] = ()
    file: FileStamp | None = None
    redactions: int = 0


@dataclass(frozen=True)
class Delta:
    """What one read of one file contributes to its session (shape of :class:`Session`, prompts numbered from 0:
    :func:`merge` renumbers them after the stored ones)."""

    session: Session
    main_file: bool
    """The file read is the session's main transcript (its stamp becomes :attr:`Session.file`)."""


def _first(old: str, new: str) -> str:
    return old or new


def _min_time(old: str, new: str) -> str:
    return min(t for t in (old, new) if t) if (old or new) else ""


def _max_time(old: str, new: str) -> str:
    return max(old, new)


def merge(old: Session | None, delta: Delta) -> Session:
    """Fold ``delta`` into the stored session ``old`` (``None``: a new session).

    Identity (slug, cwd, branch, model, first prompt) keeps the older value when it has one; the title takes the
    newer one when the delta has one; start is the minimum and end the maximum of both; counts and redactions are
    added; the delta's prompts follow the stored ones. The main file's stamp comes from the delta when it read the
    main file, else stays.
    """
    new = delta.session
    if old is None:
        old = Session(session_id=new.session_id, source=new.source)
    base = len(old.prompts)
    prompts = old.prompts + tuple(replace(p, ordinal=base + i) for i, p in enumerate(new.prompts))
    stamp = new.file if delta.main_file or old.file is None else old.file
    return replace(
        old,
        slug=_first(old.slug, new.slug),
        cwd=_first(old.cwd, new.cwd),
        git_branch=_first(old.git_branch, new.git_branch),
        model=_first(old.model, new.model),
        started_at=_min_time(old.started_at, new.started_at),
        ended_at=_max_time(old.ended_at, new.ended_at),
        counts=old.counts + new.counts,
        first_prompt=_first(old.first_prompt, new.first_prompt),
        ai_title=new.ai_title or old.ai_title,
        prompts=prompts,
        file=stamp,
        redactions=old.redactions + new.redactions,
    )


@dataclass(frozen=True)
class Watermark:
    """Where the last scan of one file stopped: its size and mtime (ms, truncated) then, and the offset after the
    last complete line consumed."""

    path: str
    source: Source
    session_id: str
    size: int
    mtime_ms: int
    offset: int


@dataclass(frozen=True)
class Link:
    """One ``memory_session_links`` row."""

    path: str
    session_id: str
    prompt_id: str | None
    turn_uuid: str | None
    link_kind: str
    at: str
