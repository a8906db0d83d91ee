"""Hostile input to ``git memhtml mcp`` found by an attack session (docs/mcp.md "Paths", "Errors")."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from tests.mcp.stdio import failed, init_repo, serve


def test_a_refused_tool_path_never_hints_at_an_absolute_path_or_the_current_folder(tmp_path: Path) -> None:
    repo = init_repo(tmp_path)
    (repo / "areas" / "inbox" / "sym.html").symlink_to(tmp_path / "elsewhere.html")

    async def scenario(client: Client) -> list[dict[str, object]]:
        return [failed(await client.call_tool("memory_read", {"path": value}))
                for value in (".git/config", "../x.html", "areas/inbox/sym.html", "areas/inbox/x.txt")]

    for refusal in serve(repo, scenario):
        hint = str(refusal["hint"])
        assert "absolute" not in hint and "current folder" not in hint, refusal
        assert "memory_list" in hint, refusal


def _raw_replies(repo: Path, lines: list[bytes]) -> list[dict[str, object]]:
    """Send ``lines`` (after initialize) to a real server on stdin, close it; the JSON-RPC replies that carry an id."""
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}
    stdin = b"\n".join([json.dumps(init).encode(), b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
                        *lines]) + b"\n"
    out = subprocess.run([sys.executable, "-m", "git_memhtml", "-C", str(repo), "mcp"], input=stdin,
                         capture_output=True, timeout=60, env=dict(os.environ), check=True).stdout
    return [r for r in map(json.loads, out.splitlines()) if r.get("id") not in (None, 0)]


_CALL = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory_write","arguments":%s}}'
WIRE_REFUSED = [
    ("lone-surrogate", _CALL % (1, b'{"title":"\\ud800","memory_type":"semantic","claim":"x"}'), -32602),
    ("invalid-utf8", _CALL % (2, b'{"title":"bad \xff utf8","memory_type":"semantic","claim":"bad \xc3\x28."}'),
     -32700),
    ("deep-nesting", _CALL % (3, b'{"title":"t","memory_type":"semantic","claim":"c","tags":' + b"[" * 5000
                               + b"]" * 5000 + b"}"), -32700),
    ("nested-past-the-bound", _CALL % (4, b'{"title":"t","tags":' + b"[" * 80 + b"]" * 80 + b"}"), -32700),
    ("not-json", b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{', -32700),
    ("not-json-rpc", b'{"jsonrpc":"1.0","id":6,"method":7}', -32600),
]
"""``(case, line, JSON-RPC error code)``: lines the server must answer with an error carrying their id, never drop
(the caller would wait for ever) and never rewrite (invalid UTF-8 was written into a memory as U+FFFD)."""


@pytest.mark.parametrize(("case", "line", "code"), WIRE_REFUSED, ids=[c for c, _, _ in WIRE_REFUSED])
def test_a_line_the_wire_refuses_gets_an_error_with_its_id_and_the_next_call_is_served(
        tmp_path: Path, case: str, line: bytes, code: int) -> None:
    repo = init_repo(tmp_path)
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout
    after = b'{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"memory_status","arguments":{}}}'
    replies = _raw_replies(repo, [line, after])
    assert [r["id"] for r in replies] == [replies[0]["id"], 99] and replies[0]["id"] in (1, 2, 3, 4, 5, 6), replies
    error = replies[0]["error"]
    assert isinstance(error, dict) and error["code"] == code, (case, replies[0])
    result = replies[1]["result"]
    assert isinstance(result, dict) and result.get("isError") is not True, replies[1]
    assert subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout == head, "nothing was written"


def test_judge_line_reads_the_id_of_a_line_that_is_not_json_or_not_utf8() -> None:
    from git_memhtml.mcp.wire import Refusal, judge_line

    assert judge_line(b"   \n") is None
    for raw, expected in ((b'{"id": 7, "x": \xff}', 7), (b'{"id":"a-1","method":', "a-1"), (b"garbage", None)):
        verdict = judge_line(raw)
        assert isinstance(verdict, Refusal) and verdict.id == expected, (raw, verdict)


def test_a_refusal_written_for_the_cli_reaches_the_agent_in_the_tool_vocabulary(tmp_path: Path) -> None:
    repo = init_repo(tmp_path)

    async def scenario(client: Client) -> list[dict[str, object]]:
        return [failed(await client.call_tool("memory_search", {"query": "x", "as_of": "yesterday"})),
                failed(await client.call_tool("memory_reinforce", {"paths": ["areas/inbox/none.html"]})),
                failed(await client.call_tool("task_status", {"path": "areas/inbox/none.html", "status": "done"}))]

    for refusal in serve(repo, scenario):
        text = f"{refusal['message']} {refusal['hint']}"
        assert "--" not in text and not re.search(r"git memhtml (list|search|task|read)\b", text), refusal
