"""Codex CLI rollout lines → a :class:`~git_memhtml.traces.model.Delta` (docs/traces.md §2).

A rollout line is ``{"timestamp", "type", "payload"}`` with ``type`` one of ``session_meta`` (id, cwd, git
branch), ``turn_context`` (model, cwd), ``response_item`` (``message`` of a role, ``function_call``,
``custom_tool_call``, ``local_shell_call``, ``reasoning``, outputs …), ``event_msg`` (``user_message`` is what the
person typed; ``agent_message``, ``token_count`` …) and ``compacted``. Prompts come from ``event_msg`` /
``user_message`` only: the ``response_item`` user messages repeat them and add injected context
(``<environment_context>``). Any other line type is counted in ``unknown_types``.
"""

from __future__ import annotations

from typing import Any

from git_memhtml.traces.fields import cwd_slug, text_value, utc_instant
from git_memhtml.traces.heads import FIRST_PROMPT_CHARS, PROMPT_HEAD_CHARS, Redacting
from git_memhtml.traces.model import Counts, Delta, FileStamp, Prompt, Session

LINE_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
"""Rollout line types (codex-rs ``RolloutItem``)."""
TOOL_ITEMS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "web_search_call"})
"""``response_item`` payload types that are one tool call each."""


class CodexReader(Redacting):
    """Accumulates the lines of one rollout file of session ``session_id``."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.counts: dict[str, int] = dict.fromkeys(Counts.__dataclass_fields__, 0)
        self.fields: dict[str, str] = {"cwd": "", "git_branch": "", "model": "", "started_at": "", "ended_at": "",
                                       "first_prompt": ""}
        self.prompts: list[Prompt] = []
        self.redactions = 0

    def invalid(self) -> None:
        """Count a line that is not a JSON object."""
        self.counts["invalid_lines"] += 1

    def feed(self, obj: dict[str, Any]) -> None:
        """Take one decoded line."""
        kind = text_value(obj.get("type"))
        payload = obj.get("payload")
        if kind not in LINE_TYPES or not isinstance(payload, dict):
            self.counts["unknown_types"] += 1
            return
        at = utc_instant(obj.get("timestamp"))
        if at:
            self.fields["started_at"] = min(self.fields["started_at"] or at, at)
            self.fields["ended_at"] = max(self.fields["ended_at"], at)
        if kind in ("session_meta", "turn_context") and not self.fields["cwd"] and text_value(payload.get("cwd")):
            self.fields["cwd"] = self._name(text_value(payload.get("cwd")))
        if kind == "session_meta":
            git = payload.get("git")
            branch = text_value(git.get("branch")) if isinstance(git, dict) else ""
            if branch and not self.fields["git_branch"]:
                self.fields["git_branch"] = self._name(branch)
        elif kind == "turn_context":
            model = text_value(payload.get("model"))
            if model and not self.fields["model"]:
                self.fields["model"] = self._name(model)
        elif kind == "response_item":
            item = text_value(payload.get("type"))
            if item == "message" and payload.get("role") == "assistant":
                self.counts["assistant_turns"] += 1
            elif item in TOOL_ITEMS:
                self.counts["tool_calls"] += 1
        elif kind == "event_msg" and payload.get("type") == "user_message":
            text = text_value(payload.get("message"))
            if text.strip():
                self.counts["user_prompts"] += 1
                if not self.fields["first_prompt"]:
                    self.fields["first_prompt"] = self._head(text, FIRST_PROMPT_CHARS)
                self.prompts.append(Prompt(len(self.prompts), "", at, self._head(text, PROMPT_HEAD_CHARS)))

    def delta(self, stamp: FileStamp, *, oversized: int, first_read: bool) -> Delta:
        """The :class:`Delta` of the lines fed so far, read from the file of ``stamp`` (``first_read`` is unused:
        a rollout has no sub-agents)."""
        counts = dict(self.counts, oversized_lines=self.counts["oversized_lines"] + oversized)
        session = Session(session_id=self.session_id, source="codex", slug=cwd_slug(self.fields["cwd"]),
                          counts=Counts(**counts), prompts=tuple(self.prompts), file=stamp,
                          redactions=self.redactions, **self.fields)
        return Delta(session, main_file=True)
