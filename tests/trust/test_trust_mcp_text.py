"""Trust rules for the MCP write tools, beside the CLI's tables (docs/mcp.md):

- free text never becomes structure (``test_trust_free_text.py``): every free-text argument of every committing tool
  × every hostile value of :data:`HOSTILE` either is a tool error that commits nothing (a provenance id with a
  control character; a code point a memory file cannot carry) or commits once with exactly the trailers we put there;
- an acknowledged write is in ``HEAD`` (``test_trust_acknowledged.py``): servers and CLI writers race on one
  repository; every tool result that is not an error names a write that ``HEAD`` holds, one commit each, and
  nothing is left in the work tree.

A tool joins by adding a row to :data:`TEXT_FIELDS` or :data:`RACERS`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.mcp.stdio import ok
from tests.trust.test_trust_free_text import HOSTILE, NOW, TARGET, git, parse_trailers, template

__all__ = ["template"]  # the fixture this module uses, defined by the CLI's free-text table

ROOT = Path(__file__).resolve().parents[2]
SESSION = "s-benign"

TEXT_FIELDS: list[tuple[str, str, Callable[[str, str, str], dict[str, Any]], Callable[[str], list[tuple[str, str]]],
                        str]] = [
    ("memory_write", "title", lambda v, t, n: {"title": v, "memory_type": "semantic", "claim": f"C {n}.",
                                            "session_id": SESSION}, lambda _: [("Memhtml-Session", SESSION)], "file"),
    ("memory_write", "session_id", lambda v, t, n: {"title": "T", "memory_type": "semantic", "claim": f"C {n}.",
                                                 "session_id": v}, lambda v: [("Memhtml-Session", v)], "id"),
    ("memory_write", "prompt_id", lambda v, t, n: {"title": "T", "memory_type": "semantic", "claim": f"C {n}.",
                                                "prompt_id": v}, lambda v: [("Memhtml-Prompt", v)], "id"),
    ("memory_write_batch", "ops[0].title", lambda v, t, n: {"ops": [{"title": v, "type": "semantic",
                                                                  "body": f"A body sentence for {n} holds."}]},
     lambda _: [], "file"),
    ("memory_correct", "reason", lambda v, t, n: {"target_path": t, "title": "T2", "claim": f"New claim for {n} holds.",
                                               "reason": v}, lambda _: [], "text"),
    ("memory_correct", "title", lambda v, t, n: {"target_path": t, "title": v, "claim": f"New claim for {n} holds.",
                                              "reason": "r"}, lambda _: [], "file"),
    ("memory_archive", "reason", lambda v, t, n: {"path": t, "reason": v}, lambda _: [], "text"),
    ("task_add", "title", lambda v, t, n: {"title": v, "claim": f"Do the thing for {n}."}, lambda _: [], "file"),
]
"""``(tool, argument, arguments with value v and target path t, the trailers the commit must carry, kind)``; kind
``id``: a provenance id (a control character is refused), ``file``: text that becomes memory content (a code point
HTML cannot carry is refused by the render gate), ``text``: anything is folded."""

_ID_REFUSED = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_FILE_REFUSED = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")


def _params(root: Path) -> StdioServerParameters:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMHTML_NOW": NOW, "MEMHTML_HOOK_DETACH": "0"}
    return StdioServerParameters(command=sys.executable, args=["-m", "git_memhtml", "-C", str(root), "mcp"], env=env,
                                 cwd=str(root))


@pytest.mark.parametrize("row", TEXT_FIELDS, ids=[f"{r[0]}:{r[1]}" for r in TEXT_FIELDS])
def test_a_tool_commit_carries_only_the_trailers_we_put_there(template: Path, tmp_path: Path,
                                                               row: tuple[Any, ...]) -> None:
    tool, _argument, arguments, trailers, kind = row
    root = tmp_path / "mem"
    subprocess.run(["cp", "-a", str(template), str(root)], check=True)
    outcomes: list[tuple[str, str, str, Any]] = []

    async def scenario() -> None:
        async with Client(_params(root), read_timeout_seconds=120) as client:
            for name, value in HOSTILE.items():
                target = TARGET
                if tool in ("memory_correct", "memory_archive"):  # each value gets its own live target
                    made = ok(await client.call_tool("memory_write", {
                        "title": f"Target {name}", "memory_type": "semantic", "claim": f"Target {name} holds."}))
                    target = made["path"]
                before = git(root, "rev-parse", "HEAD").strip()
                result = await client.call_tool(tool, arguments(value, target, name))
                outcomes.append((name, before, git(root, "rev-parse", "HEAD").strip(), result))

    anyio.run(scenario)
    for name, before, after, result in outcomes:
        value = HOSTILE[name]
        refused = (kind == "id" and _ID_REFUSED.search(value)) or (kind == "file" and _FILE_REFUSED.search(value))
        if refused:
            assert result.is_error, (name, result.content)
            assert after == before, f"{name}: a refused call committed"
            continue
        assert not result.is_error, (name, result.content)
        assert after != before and git(root, "rev-parse", f"{after}~1").strip() == before, f"{name}: one commit"
        message = git(root, "log", "-1", "--format=%B", after)
        expected = trailers(value)
        assert parse_trailers(git(root, "log", "-1", "--format=%(trailers:only,unfold)", after)) == expected, name
        assert parse_trailers(git(root, "interpret-trailers", "--parse", stdin=message)) == expected, name
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]", message), name
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""


RACERS: list[tuple[str, Callable[[int, int], dict[str, Any]]]] = [
    ("memory_write", lambda w, i: {"title": f"mcp w{w} n{i}", "memory_type": "semantic",
                                   "claim": f"Server {w} fact {i} holds."}),
    ("memory_write_batch", lambda w, i: {"ops": [{"title": f"mcp batch w{w} n{i} k{k}", "type": "semantic",
                                                  "claim": f"Server {w} batch {i} item {k} holds."}
                                                 for k in range(2)]}),
    ("task_add", lambda w, i: {"title": f"mcp task w{w} n{i}", "claim": f"Server {w} task {i} is open."}),
]
"""``(tool, arguments of writer w's i-th call)``: every tool that adds memories."""

SERVERS = 3
CALLS = 3
CLI_WRITERS = 2


def _paths(data: dict[str, Any]) -> list[str]:
    if "results" in data:
        return [r["path"] for r in data["results"] if r.get("path")]
    return [data["path"]]


def test_every_acknowledged_tool_write_is_in_head_while_servers_and_the_cli_race(template: Path,
                                                                                 tmp_path: Path) -> None:
    root = tmp_path / "mem"
    subprocess.run(["cp", "-a", str(template), str(root)], check=True)
    base = git(root, "rev-parse", "HEAD").strip()
    acknowledged: list[list[str]] = []
    failures: list[str] = []

    async def server(w: int) -> None:
        async with Client(_params(root), read_timeout_seconds=120) as client:
            for i in range(CALLS):
                for tool, arguments in RACERS:
                    result = await client.call_tool(tool, arguments(w, i))
                    if result.is_error:
                        failures.append(str(result.content))
                    else:
                        assert isinstance(result.structured_content, dict)
                        acknowledged.append(_paths(result.structured_content))

    async def servers() -> None:
        async with anyio.create_task_group() as group:
            for w in range(SERVERS):
                group.start_soon(server, w)

    def cli_writer(w: int) -> list[tuple[int, str]]:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMHTML_NOW": NOW, "MEMHTML_HOOK_DETACH": "0"}
        out = []
        for i in range(CALLS):
            proc = subprocess.run([sys.executable, "-m", "git_memhtml", "-C", str(root), "write", "--type", "semantic",
                                   "--title", f"cli w{w} n{i}", "--claim", f"Writer {w} fact {i} holds.", "--json"],
                                  capture_output=True, text=True, env=env, check=False, timeout=300)
            out.append((proc.returncode, proc.stdout))
        return out

    with ThreadPoolExecutor(CLI_WRITERS) as pool:
        cli_runs = [pool.submit(cli_writer, w) for w in range(CLI_WRITERS)]
        anyio.run(servers)
        cli_results = [r for f in cli_runs for r in f.result()]
    tree = set(git(root, "ls-tree", "-r", "--name-only", "HEAD").splitlines())
    for paths in acknowledged:
        for path in paths:
            assert path in tree, f"acknowledged {path} is not in HEAD"
    assert sum(1 for code, _ in cli_results if code == 0) + len(acknowledged) == len(
        git(root, "rev-list", f"{base}..HEAD").split()), "one commit per acknowledged write"
    assert all(code in (0, 1) for code, _ in cli_results), cli_results
    assert len(acknowledged) + len(failures) == SERVERS * CALLS * len(RACERS)
    assert acknowledged, "no tool write was acknowledged"
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
