"""The stdio wire: every line the client sends gets an answer, and no byte is rewritten on the way in (docs/mcp.md
"The wire").

The SDK's own stdio transport decodes stdin with ``errors="replace"`` (so invalid UTF-8 reached a tool as U+FFFD and
was committed into a memory) and hands a line it cannot parse to the server as an exception, which the server logs
and drops (so the caller waited for ever on its request id). This transport reads raw lines and judges each before
the server sees it (:func:`judge_line`):

- not UTF-8 → JSON-RPC parse error ``-32700``;
- not JSON, or nested deeper than :data:`MAX_DEPTH` → parse error ``-32700``;
- a string holding a lone surrogate (``"\\ud800"`` is valid JSON but no text) → invalid params ``-32602``;
- not a JSON-RPC message → invalid request ``-32600``.

The answer carries the request's id when one can be read from the line (the JSON when it parsed, else a
``"id": <number or string>`` found in the text), else ``null`` as JSON-RPC 2.0 §5 says, so a client waiting on that
id is answered. Good lines go to the server unchanged. While serving, fd 0 reads the null device and fd 1 writes to
stderr, so nothing a handler or a child prints can reach the wire; both are restored on exit.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from git_memhtml.output import claim_wire, release_wire

INVALID_REQUEST = -32600
"""JSON-RPC 2.0 §5.1: the JSON sent is not a valid request object."""
INVALID_PARAMS = -32602
"""JSON-RPC 2.0 §5.1: invalid method parameters."""
MAX_DEPTH = 64
"""Deepest nesting of arrays and objects a line may have (an implementation choice: no tool argument nests more than
three levels; a 5,000-deep line would otherwise cost the parser its recursion limit)."""
MAX_LINE_BYTES = 16 * 1024 * 1024
"""Longest line read (an implementation choice, 16 MiB: a tool's text arguments are refused far below it, at the
1 MiB file bound of docs/format.md; a longer line is answered with a parse error and skipped)."""

_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\\r\n]|\\.){0,200}")')
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Refusal:
    """A line the server never sees: the JSON-RPC error ``code``/``message`` to answer, to request ``id``."""

    id: int | str | None
    code: int
    message: str

    def answer(self) -> SessionMessage:
        """The JSON-RPC error response."""
        return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=self.id,
                                                 error=types.ErrorData(code=self.code, message=self.message)))


def _id_in_text(raw: bytes) -> int | str | None:
    match = _ID.search(raw)
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, int | str) else None


def _id_of(data: Any) -> int | str | None:
    if isinstance(data, dict):
        value = data.get("id")
        if isinstance(value, int | str) and not isinstance(value, bool):
            return value
    return None


def _depth(data: Any) -> int:
    """Nesting depth of parsed JSON, iteratively (no recursion on hostile input)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in node.values())
        elif isinstance(node, list):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in node)
    return deepest


def _surrogate_in(data: Any) -> bool:
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if _SURROGATE.search(node):
                return True
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def judge_line(raw: bytes) -> SessionMessage | Refusal | None:
    """Judge one line of the wire (pure): the message for the server, the refusal to answer, or ``None`` for a blank
    line (skipped, as the stdio transport of the MCP specification allows).

    Args:
        raw: the line's bytes, with or without its ``\\n``.
    """
    line = raw.strip()
    if not line:
        return None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Refusal(_id_in_text(line), types.PARSE_ERROR,
                       f"Parse error: the line is not UTF-8 (byte {exc.start}); send UTF-8 JSON")
    try:
        data: Any = json.loads(text)
    except RecursionError:  # the C parser's own bound, about a thousand levels
        return Refusal(_id_in_text(line), types.PARSE_ERROR, f"Parse error: JSON nested deeper than {MAX_DEPTH} levels")
    except ValueError as exc:
        return Refusal(_id_in_text(line), types.PARSE_ERROR, f"Parse error: not JSON ({str(exc)[:120]})")
    if _depth(data) > MAX_DEPTH:
        return Refusal(_id_of(data), types.PARSE_ERROR, f"Parse error: JSON nested deeper than {MAX_DEPTH} levels")
    if _surrogate_in(data):
        return Refusal(_id_of(data), INVALID_PARAMS,
                       "Invalid params: a string holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is no text")
    try:
        message = types.jsonrpc_message_adapter.validate_python(data, by_name=False)
    except ValidationError as exc:
        return Refusal(_id_of(data), INVALID_REQUEST,
                       f"Invalid request: not a JSON-RPC 2.0 message ({exc.error_count()} problems)")
    return SessionMessage(message)


@asynccontextmanager
async def stdio_wire() -> AsyncIterator[tuple[MemoryObjectReceiveStream[SessionMessage | Exception],
                                              MemoryObjectSendStream[SessionMessage]]]:
    """Serve the process's stdin/stdout as ``(read stream, write stream)`` for the SDK server's ``run``; a refused
    line is answered on the write side by the reader itself (one writer task frames every line)."""
    wire_in, wire_out, saved = claim_wire()
    reader_file = os.fdopen(wire_in, "rb", buffering=0, closefd=True)
    writer_file = os.fdopen(wire_out, "wb", closefd=True)
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    server_writes, from_server = anyio.create_memory_object_stream[SessionMessage](0)
    answers = server_writes.clone()

    def read_line() -> bytes | None:
        """The next line (``b""`` at the end of input), or ``None`` for a line over :data:`MAX_LINE_BYTES` (its
        rest is skipped)."""
        line = reader_file.readline(MAX_LINE_BYTES + 1)
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while True:
                rest = reader_file.readline(MAX_LINE_BYTES)
                if not rest or rest.endswith(b"\n"):
                    return None
        return line

    async def reader() -> None:
        async with to_server, answers:
            while True:
                raw = await anyio.to_thread.run_sync(read_line, abandon_on_cancel=True)
                if raw == b"":
                    return
                verdict = judge_line(raw) if raw is not None else Refusal(
                    None, types.PARSE_ERROR, f"Parse error: a line longer than {MAX_LINE_BYTES} bytes")
                if isinstance(verdict, Refusal):
                    await answers.send(verdict.answer())
                elif verdict is not None:
                    await to_server.send(verdict)

    async def writer() -> None:
        async with from_server:
            async for message in from_server:
                body = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await anyio.to_thread.run_sync(_write, writer_file, body.encode("utf-8") + b"\n")

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(reader)
            group.start_soon(writer)
            yield server_reads, server_writes
            group.cancel_scope.cancel()  # the server is done; a reader still waiting on stdin is abandoned
    finally:
        reader_file.close()
        writer_file.close()
        release_wire(saved)


def _write(file: Any, data: bytes) -> None:
    file.write(data)
    file.flush()
