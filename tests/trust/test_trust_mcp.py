"""Trust rules for the MCP write and path tools (docs/mcp.md): the rows of the CLI tables, run through
``git memhtml mcp`` with the SDK's client.

- Paths (``test_trust_paths.py``): every hostile path of :data:`HOSTILE`, given to every path argument of every tool,
  is a tool error naming the argument with a hint, and moves no byte of the work tree or the git dir (the index
  and state databases included). A path that cannot be sent as UTF-8 JSON text (a lone surrogate) has no row: the
  transport cannot carry it.
- One commit per operation (``test_trust_one_commit.py``): each write tool adds exactly one commit of memory files
  and leaves ``git status`` clean; a refused one adds none and names its argument and a hint.

A tool joins by adding a row to :data:`PATH_ARGUMENTS`, :data:`WRITES` or :data:`REFUSED`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp import Client

from tests.mcp.stdio import failed, git, ok, serve
from tests.trust.test_trust_paths import GOOD, HOSTILE, OTHER, SECRET_TITLE, _expand, _hash_tree, template, world

__all__ = ["template", "world"]  # the fixtures this module uses, defined by the CLI's path table

PATH_ARGUMENTS: list[tuple[str, str, Callable[[str], dict[str, Any]]]] = [
    ("memory_read", "path", lambda p: {"path": p}),
    ("memory_neighbors", "path", lambda p: {"path": p}),
    ("memory_archive", "path", lambda p: {"path": p, "reason": "trust test"}),
    ("memory_correct", "target_path", lambda p: {"target_path": p, "title": "Corrected",
                                                 "claim": "The corrected claim holds."}),
    ("memory_link", "src_path", lambda p: {"src_path": p, "rel": "relates_to", "dst_path": OTHER}),
    ("memory_link", "dst_path", lambda p: {"src_path": GOOD, "rel": "relates_to", "dst_path": p}),
    ("memory_reinforce", "paths[0]", lambda p: {"paths": [p]}),
    ("memory_write", "path", lambda p: {"title": "Hostile write", "memory_type": "semantic",
                                        "claim": "Write claims a hostile path.", "path": p}),
    ("memory_write_batch", "ops[0].path", lambda p: {"ops": [{"title": "Hostile", "type": "semantic",
                                                              "claim": "Apply claims a hostile path.", "path": p}]}),
    ("task_add", "path", lambda p: {"title": "Hostile task", "claim": "A task at a hostile path.", "path": p}),
    ("task_status", "path", lambda p: {"path": p, "status": "doing"}),
    ("trace_links", "path", lambda p: {"path": p}),
]
"""Every path argument of every tool: ``(tool, argument, arguments of a call with path p)``."""


def _sendable(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def test_every_hostile_path_is_refused_by_every_tool_and_nothing_moves(world: Path) -> None:
    root = world / "repo"
    paths = [_expand(raw, world) for raw in HOSTILE if _sendable(_expand(raw, world))]

    async def scenario(client: Client) -> tuple[dict[str, Any], dict[str, Any], list[tuple[str, str, Any]]]:
        ok(await client.call_tool("memory_status", {}))  # the start-up catch-up is done: from here nothing moves
        before = _hash_tree(world)
        results = []
        for tool, argument, build in PATH_ARGUMENTS:
            for path in paths:
                results.append((tool, argument, await client.call_tool(tool, build(path))))
        return before, _hash_tree(world), results

    head = git(root, "rev-parse", "HEAD")
    before, after, results = serve(root, scenario)
    for tool, argument, result in results:
        content = failed(result)
        assert content["code"] in ("ERR_INVALID_FLAG", "ERR_PATH_NOT_FOUND"), (tool, content)
        assert content["argument"] == argument and content["hint"], (tool, content)
        assert SECRET_TITLE not in str(result.content) + str(content)
    assert len(results) == len(PATH_ARGUMENTS) * len(paths)
    assert sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k)) == []
    assert git(root, "rev-parse", "HEAD") == head


WRITES: list[tuple[str, dict[str, Any]]] = [
    ("memory_write", {"title": "New", "memory_type": "semantic", "claim": "A new fact holds."}),
    ("memory_write", {"title": "Placed", "memory_type": "semantic", "claim": "A placed fact holds.",
                      "path": "resources/topic/placed.html"}),
    ("memory_write_batch", {"ops": [{"title": f"B{i}", "type": "semantic", "body": f"Batch {i} holds."}
                                    for i in range(3)]}),
    ("memory_correct", {"target_path": GOOD, "title": "Good memory", "claim": "The good memory moved."}),
    ("memory_link", {"src_path": OTHER, "rel": "relates_to", "dst_path": "resources/topic/placed.html"}),
    ("task_add", {"title": "A task", "claim": "Do the thing."}),
    ("task_status", {"path": "areas/inbox/tasks/a-task.html", "status": "doing"}),
    ("task_status", {"path": "areas/inbox/tasks/a-task.html", "status": "done"}),
    ("memory_archive", {"path": OTHER, "reason": "no longer holds"}),
]
"""Each committing tool that succeeds, in an order where each row's target exists."""

REFUSED: list[tuple[str, dict[str, Any], str]] = [
    ("memory_write", {"title": "No claim", "memory_type": "semantic"}, "arguments"),
    ("memory_write", {"title": "Bad", "memory_type": "semantic", "claim": "A fact.", "importance": 11}, "importance"),
    ("memory_write", {"title": "Bad", "memory_type": "semantic", "claim": "A fact.", "colour": "red"}, "colour"),
    ("memory_write_batch", {"ops": [{"title": "Fine", "type": "semantic", "claim": "Fine holds."},
                                    {"title": "Broken", "type": "semantic"}]}, "ops"),
    ("memory_correct", {"target_path": "areas/inbox/missing.html", "title": "T", "claim": "A fact."}, "target_path"),
    ("memory_link", {"src_path": GOOD, "rel": "supersedes_everything", "dst_path": OTHER}, "rel"),
    ("memory_archive", {"path": GOOD, "reason": ""}, "reason"),
    ("task_status", {"path": GOOD, "status": "sideways"}, "status"),
]
"""Each committing tool refused: ``(tool, arguments, the argument the error names)``."""


def _state(root: Path) -> tuple[str, str, dict[str, Any]]:
    tree = {k: v for k, v in _hash_tree(root).items() if not k.startswith(".git/memhtml/")}
    return git(root, "show-ref"), git(root, "status", "--porcelain"), tree


def test_each_write_tool_is_one_commit_and_each_refusal_none(world: Path) -> None:
    root = world / "repo"
    (world / "repo" / "areas" / "inbox" / "fifo.html").unlink()  # the path table's fifo: not part of this table
    for link in ("areas/inbox/ulink-in.html", "areas/inbox/ulink-out.html", "areas/inbox/dangling.html",
                 "areas/udir-in", "areas/udir-out"):
        (root / link).unlink()  # the uncommitted links: a clean status before each row
    assert git(root, "status", "--porcelain") == ""

    async def scenario(client: Client) -> list[tuple[str, Any, Any, Any, Any]]:
        rows = []
        for tool, args in WRITES:
            head = git(root, "rev-parse", "HEAD")
            result = await client.call_tool(tool, args)
            rows.append((tool, result, head, git(root, "rev-list", f"{head}..HEAD"),
                         git(root, "status", "--porcelain")))
        return rows

    async def refusals(client: Client) -> list[tuple[str, str, Any, Any, Any]]:
        rows = []
        for tool, args, argument in REFUSED:
            before = _state(root)
            result = await client.call_tool(tool, args)
            rows.append((tool, argument, result, before, _state(root)))
        return rows

    for tool, result, head, new, status in serve(root, scenario):
        ok(result)
        assert len(new.splitlines()) == 1, (tool, new)
        changed = git(root, "diff", "--name-only", head, new.strip()).splitlines()
        assert changed and all(p.endswith(".html") for p in changed), (tool, changed)
        assert status == "", (tool, status)
    for tool, argument, result, before, after in serve(root, refusals):
        content = failed(result)
        assert content["argument"] == argument and content["hint"], (tool, content)
        assert before == after, tool
