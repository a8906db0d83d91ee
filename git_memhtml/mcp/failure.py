"""Every failure of a tool call as one tool result (docs/mcp.md "Errors").

The result has ``isError: true``, one text block ``<CODE>: <message>. Try: <hint>`` and the structured content
``{code, message, hint, path, argument}`` (plus the error's other actionable details, e.g. a refused batch's
per-op ``results``). An unexpected exception is ``ERR_UNKNOWN`` "internal error" with its type only; its traceback
goes to stderr with secrets redacted. Nothing here raises.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Collection
from typing import Any

import mcp_types as types

from git_memhtml.errors import MemhtmlError
from git_memhtml.output import log
from git_memhtml.secrets import redact

INTERNAL_HINT = "the server logged the error to its stderr; the next call works as before"
"""The hint of an internal error (the server keeps serving; the operator reads the log)."""


TOOL_OF_VERB = {
    "task add": "task_add", "task status": "task_status", "task list": "task_list", "trace search": "trace_search",
    "trace links": "trace_links", "list": "memory_list", "search": "memory_search", "recall": "memory_recall",
    "read": "memory_read", "write": "memory_write", "apply": "memory_write_batch", "correct": "memory_correct",
    "archive": "memory_archive", "link": "memory_link", "neighbors": "memory_neighbors",
    "reinforce": "memory_reinforce",
}
"""The CLI verbs that have a tool: a message or hint written for the CLI names the tool instead over MCP. Verbs
without one (``index rebuild``, ``sleep``, ``doctor``, ``config``) are the operator's and stay as they are."""

_VERB = re.compile(r"git memhtml (" + "|".join(sorted(map(re.escape, TOOL_OF_VERB), key=len, reverse=True))
                   + r")\b")
_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)")


def for_tool(text: str | None, arguments: Collection[str] = ()) -> str | None:
    """``text`` (a message or hint shared with the CLI) in the tool vocabulary: ``git memhtml <verb>`` of a verb
    with a tool becomes the tool's name, and ``--flag`` becomes ``flag`` in snake case when the called tool has that
    argument (``arguments``: its field names); anything else is left as written."""
    if not text:
        return text
    text = _VERB.sub(lambda m: TOOL_OF_VERB[m.group(1)], text)

    def flag(match: re.Match[str]) -> str:
        name = match.group(1).replace("-", "_")
        return name if name in arguments else match.group(0)

    return _FLAG.sub(flag, text)


def failure_text(code: str, message: str, hint: str | None) -> str:
    """``<CODE>: <message>. Try: <hint>`` (the message's own final full stop is not doubled; no hint: no ``Try``)."""
    text = f"{code}: {message.rstrip().rstrip('.')}."
    return text + (f" Try: {hint}" if hint else "")


def tool_failure(error: MemhtmlError, arguments: Collection[str] = ()) -> types.CallToolResult:
    """The tool result of an expected failure; its message and hint are put in the tool vocabulary
    (:func:`for_tool`, ``arguments``: the called tool's argument names)."""
    message = for_tool(error.message, arguments) or error.message
    hint = for_tool(error.hint, arguments)
    details = {k: v for k, v in error.details.items() if k != "argument"}
    content: dict[str, Any] = {"code": error.code, "message": message, "hint": hint,
                               "path": error.path, "argument": error.details.get("argument")}
    content.update({k: v for k, v in details.items() if k not in content})
    return types.CallToolResult(content=[types.TextContent(type="text", text=failure_text(
        error.code, message, hint))], structured_content=content, is_error=True)


def internal_failure(tool: str, exc: BaseException) -> types.CallToolResult:
    """The tool result of an unexpected exception in ``tool``, after logging it (redacted) to stderr."""
    trace = "".join(traceback.format_exception(exc))
    try:
        shown = redact(trace).text
    except Exception as failed:  # the scan's own failure must not log the text it could not scan
        shown = f"[withheld: the secret scan failed with {type(failed).__name__}]"
    log(f"internal error in tool {tool}: {type(exc).__name__}\n{shown}")
    message = f"internal error in {tool}: {type(exc).__name__}"
    content = {"code": MemhtmlError.code, "message": message, "hint": INTERNAL_HINT, "path": None, "argument": None}
    return types.CallToolResult(content=[types.TextContent(type="text", text=failure_text(
        MemhtmlError.code, message, INTERNAL_HINT))], structured_content=content, is_error=True)
