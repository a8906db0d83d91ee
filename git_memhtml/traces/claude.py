"""Claude Code transcript lines → a :class:`~git_memhtml.traces.model.Delta` (docs/traces.md §2).

Line types read: ``user, assistant, system, attachment, agent-name, ai-title, pr-link`` (docs/traces.md §2) and
``summary`` (the title line the real transcripts carry). Types skipped on purpose: ``last-prompt, mode,
permission-mode, queue-operation, file-history-snapshot, file-history-delta, progress``. Any other type is counted
in ``unknown_types``. A read line without a ``sessionId``, with an unsafe one, or with another session's id is
dropped and counted (a title line may omit it: it belongs to its file).
"""

from __future__ import annotations

from typing import Any

from git_memhtml.traces.fields import text_value, utc_instant
from git_memhtml.traces.heads import FIRST_PROMPT_CHARS, PROMPT_HEAD_CHARS, TITLE_CHARS, Redacting
from git_memhtml.traces.model import Counts, Delta, FileStamp, Prompt, Session, safe_session_id

READ_TYPES = frozenset({"user", "assistant", "system", "attachment", "agent-name", "ai-title", "pr-link", "summary"})
"""Line types whose content the parser looks at (docs/traces.md §2, plus ``summary``)."""
SKIPPED_TYPES = frozenset({"last-prompt", "mode", "permission-mode", "queue-operation", "file-history-snapshot",
                           "file-history-delta", "progress"})
"""Known line types that carry nothing the trace plane keeps (docs/traces.md §2, plus ``progress``: tool progress)."""
TITLE_TYPES = frozenset({"summary", "ai-title"})


def prompt_text(obj: dict[str, Any]) -> str | None:
    """The text a person typed on a ``user`` line, or ``None`` when the line is no prompt: a meta line
    (``isMeta``), a sub-agent's line (``isSidechain``), a tool result, or a message with no text."""
    if obj.get("isMeta") is True or obj.get("isSidechain") is True:
        return None
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content if content.strip() else None
    if not isinstance(content, list):
        return None
    blocks = [b for b in content if isinstance(b, dict)]
    if any(b.get("type") == "tool_result" for b in blocks):
        return None
    text = "\n".join(text_value(b.get("text")) for b in blocks if b.get("type") == "text")
    return text if text.strip() else None


class ClaudeReader(Redacting):
    """Accumulates the lines of one Claude Code file of session ``session_id`` (the main file, or a sub-agent
    sidecar when ``sub_agent``)."""

    def __init__(self, session_id: str, *, slug: str, sub_agent: bool) -> None:
        self.session_id = session_id
        self.slug = slug
        self.sub_agent = sub_agent
        self.counts: dict[str, int] = dict.fromkeys(Counts.__dataclass_fields__, 0)
        self.fields: dict[str, str] = {"cwd": "", "git_branch": "", "model": "", "started_at": "", "ended_at": "",
                                       "first_prompt": "", "ai_title": ""}
        self.prompts: list[Prompt] = []
        self.redactions = 0

    def invalid(self) -> None:
        """Count a line that is not a JSON object."""
        self.counts["invalid_lines"] += 1

    def feed(self, obj: dict[str, Any]) -> None:
        """Take one decoded line."""
        kind = text_value(obj.get("type"))
        if kind in SKIPPED_TYPES:
            return
        if kind not in READ_TYPES:
            self.counts["unknown_types"] += 1
            return
        raw_id = obj.get("sessionId")
        missing = raw_id is None and kind not in TITLE_TYPES
        foreign = raw_id is not None and (safe_session_id(raw_id) is None or raw_id != self.session_id)
        if missing or foreign:
            self.counts["dropped_lines"] += 1
            return
        at = utc_instant(obj.get("timestamp"))
        if at:
            self.fields["started_at"] = min(self.fields["started_at"] or at, at)
            self.fields["ended_at"] = max(self.fields["ended_at"], at)
        for key, name in (("cwd", "cwd"), ("gitBranch", "git_branch")):
            if not self.fields[name] and text_value(obj.get(key)):
                self.fields[name] = self._name(text_value(obj.get(key)))
        if kind in TITLE_TYPES:
            title = text_value(obj.get("summary") if kind == "summary" else obj.get("aiTitle") or obj.get("title"))
            if title.strip():
                self.fields["ai_title"] = self._head(title, TITLE_CHARS)
        elif kind == "assistant":
            self._assistant(obj)
        elif kind == "user" and not self.sub_agent:
            text = prompt_text(obj)
            if text is not None:
                self.counts["user_prompts"] += 1
                if not self.fields["first_prompt"]:
                    self.fields["first_prompt"] = self._head(text, FIRST_PROMPT_CHARS)
                self.prompts.append(Prompt(len(self.prompts), self._name(text_value(obj.get("uuid"))), at,
                                           self._head(text, PROMPT_HEAD_CHARS)))

    def _assistant(self, obj: dict[str, Any]) -> None:
        self.counts["assistant_turns"] += 1
        message = obj.get("message")
        if not isinstance(message, dict):
            return
        model = text_value(message.get("model"))
        if model and not model.startswith("<") and not self.fields["model"]:
            self.fields["model"] = self._name(model)
        content = message.get("content")
        if isinstance(content, list):
            self.counts["tool_calls"] += sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_use")

    def delta(self, stamp: FileStamp, *, oversized: int, first_read: bool) -> Delta:
        """The :class:`Delta` of the lines fed so far, read from the file of ``stamp``; ``first_read`` (the read
        started at byte 0) makes a sub-agent file count as one sub-agent."""
        counts = dict(self.counts, oversized_lines=self.counts["oversized_lines"] + oversized)
        if self.sub_agent and first_read:
            counts["sub_agents"] += 1
        session = Session(session_id=self.session_id, source="claude-code", slug=self.slug,
                          counts=Counts(**counts), prompts=tuple(self.prompts), file=stamp,
                          redactions=self.redactions, **self.fields)
        return Delta(session, main_file=not self.sub_agent)
