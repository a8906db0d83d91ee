"""The JSON event an agent's hook hands us on stdin, read per agent into one value (docs/session.md §2).

Shapes read (each field optional unless said; unknown fields are ignored):

- ``claude-code``: ``{"hook_event_name", "session_id", "transcript_path", "cwd", "prompt"}`` (UserPromptSubmit
  carries ``prompt``; Stop and SessionEnd carry ``transcript_path``).
- ``codex``: the same names as Claude Code (its hooks take Claude Code's shape; ``transcript_path`` may be
  ``null``), plus ``turn_id`` and ``model``, which are not used.
- ``cursor``: ``{"hook_event_name", "conversation_id", "generation_id", "prompt", "workspace_roots": [...]}``
  (beforeSubmitPrompt); ``conversation_id`` is the session id, the first workspace root the cwd;
  ``transcript_path`` when a build sends it.
- ``opencode``: a plugin builds the event, so both spellings are read: ``sessionID``/``session_id``,
  ``directory``/``cwd``, ``prompt`` (or ``text``), ``transcript_path``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from git_memhtml.errors import UsageError

AGENTS: Final[tuple[str, ...]] = ("claude-code", "codex", "cursor", "opencode")
"""The agents whose hooks call ``git memhtml session`` (issue 14 part 3)."""
MAX_EVENT_BYTES: Final = 1 << 20
"""Largest event read, bytes (our decision: a prompt event is a few KiB; a bigger one is refused, not parsed)."""
MAX_QUERY_CHARS: Final = 2000
"""The prompt is cut to this many characters before it becomes a query (our decision: the lexical arm ORs every
word, so a pasted log of 100 KiB would cost a long FTS query for no better recall)."""


class HookInputError(UsageError):
    """The hook's stdin is not an event we can read (not UTF-8, not a JSON object, too large)."""

    code = "ERR_INVALID_INPUT"


@dataclass(frozen=True)
class HookEvent:
    """One hook event: ``agent`` (a name of :data:`AGENTS`), ``event_name`` (the agent's own, ``""`` when absent),
    ``prompt`` (``""`` when none), ``session_id``, ``cwd`` and ``transcript_path`` (``None`` when absent)."""

    agent: str
    event_name: str
    prompt: str
    session_id: str | None
    cwd: str | None
    transcript_path: str | None


def _text(obj: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = obj.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def parse_event(raw: bytes, agent: str) -> HookEvent:
    """Read ``raw`` (the hook's stdin) as ``agent``'s event.

    An empty stdin is an event with no field (a hook may be run by hand). The prompt is kept whole here; the query
    cut (:data:`MAX_QUERY_CHARS`) is the caller's.

    Raises:
        HookInputError: ``raw`` is over :data:`MAX_EVENT_BYTES`, not UTF-8, not JSON, or not a JSON object.
        UsageError: ``agent`` is not one of :data:`AGENTS`.
    """
    if agent not in AGENTS:
        raise UsageError(f"unknown agent {agent!r}", hint=f"pass --agent one of {', '.join(AGENTS)}")
    if len(raw) > MAX_EVENT_BYTES:
        raise HookInputError(f"the hook event is {len(raw)} bytes, over {MAX_EVENT_BYTES}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HookInputError(f"the hook event is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    if not text.strip():
        return HookEvent(agent, "", "", None, None, None)
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise HookInputError(f"the hook event is not JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise HookInputError(f"the hook event is a JSON {type(obj).__name__}, not an object")
    roots = obj.get("workspace_roots")
    first_root = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None
    return HookEvent(
        agent=agent,
        event_name=_text(obj, "hook_event_name") or "",
        prompt=_text(obj, "prompt", "text") or "",
        session_id=_text(obj, "session_id", "conversation_id", "sessionID"),
        cwd=_text(obj, "cwd", "directory") or first_root,
        transcript_path=_text(obj, "transcript_path"),
    )


def query_of(event: HookEvent) -> str:
    """The recall query of ``event``: its prompt with whitespace runs collapsed, cut to :data:`MAX_QUERY_CHARS`."""
    return " ".join(event.prompt.split())[:MAX_QUERY_CHARS]
