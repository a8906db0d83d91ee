"""Every failure of a tool call as one tool result (docs/mcp.md "Errors").

The result has ``isError: true``, one text block ``<CODE>: <message>. Try: <hint>`` and the structured content
``{code, message, hint, path, argument}`` (plus the error's other actionable details, e.g. a refused batch's
per-op ``results``). An unexpected exception is ``ERR_UNKNOWN`` "internal error" with its type only; its traceback
goes to stderr with secrets redacted. Nothing here raises.
"""

from __future__ import annotations

import traceback
from typing import Any

import mcp_types as types

from git_memhtml.errors import MemhtmlError
from git_memhtml.output import log
from git_memhtml.secrets import redact

INTERNAL_HINT = "the server logged the error to its stderr; the next call works as before"
"""The hint of an internal error (the server keeps serving; the operator reads the log)."""


def failure_text(code: str, message: str, hint: str | None) -> str:
    """``<CODE>: <message>. Try: <hint>`` (the message's own final full stop is not doubled; no hint: no ``Try``)."""
    text = f"{code}: {message.rstrip().rstrip('.')}."
    return text + (f" Try: {hint}" if hint else "")


def tool_failure(error: MemhtmlError) -> types.CallToolResult:
    """The tool result of an expected failure."""
    details = {k: v for k, v in error.details.items() if k != "argument"}
    content: dict[str, Any] = {"code": error.code, "message": error.message, "hint": error.hint,
                               "path": error.path, "argument": error.details.get("argument")}
    content.update({k: v for k, v in details.items() if k not in content})
    return types.CallToolResult(content=[types.TextContent(type="text", text=failure_text(
        error.code, error.message, error.hint))], structured_content=content, is_error=True)


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
