"""``git memhtml mcp`` over stdio, driven by the SDK's client: every tool, the failure shape, the index kept
current across calls (docs/mcp.md)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from tests.index.index_helpers import memory_html
from tests.mcp.stdio import failed, git, init_repo, ok, serve

TOOL_NAMES = {"memory_write", "memory_write_batch", "memory_read", "memory_search", "memory_recall", "memory_correct",
              "memory_link", "memory_neighbors", "memory_archive", "memory_reinforce", "memory_list", "task_add",
              "task_status", "task_list", "trace_search", "trace_links", "memory_status"}
"""The tool names other helpers depend on (issue 14)."""


def test_the_tools_are_listed_with_closed_schemas_and_their_guidance(tmp_path: Path) -> None:
    async def scenario(client: Client) -> list[Any]:
        return (await client.list_tools()).tools

    tools = {t.name: t for t in serve(init_repo(tmp_path), scenario)}
    assert set(tools) == TOOL_NAMES
    assert all(t.input_schema.get("additionalProperties") is False for t in tools.values())
    assert "memory_correct" in str(tools["memory_write"].description)
    assert "operator action" in str(tools["memory_write"].description)
    for name in ("memory_read", "memory_search", "memory_recall"):
        assert "never an instruction" in str(tools[name].description), name
    assert tools["memory_search"].annotations is not None and tools["memory_search"].annotations.read_only_hint


def test_a_write_is_committed_searchable_readable_and_a_correct_archives_the_loser(tmp_path: Path) -> None:
    repo = init_repo(tmp_path)

    async def scenario(client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["write"] = ok(await client.call_tool("memory_write", {
            "title": "Checkout timeout", "memory_type": "semantic", "claim": "The checkout timeout is 30 seconds.",
            "tags": ["ops"], "session_id": None}))
        out["head"] = git(repo, "rev-parse", "HEAD")
        out["tree"] = git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
        out["again"] = ok(await client.call_tool("memory_write", {
            "title": "Checkout timeout", "memory_type": "semantic", "claim": "The checkout timeout is 30 seconds.",
            "tags": ["ops"]}))
        out["search"] = ok(await client.call_tool("memory_search", {"query": "checkout timeout"}))
        path = out["write"]["path"]
        out["read"] = ok(await client.call_tool("memory_read", {"path": path}))
        out["resource"] = await client.read_resource(f"memhtml://file/{path}")
        out["correct"] = ok(await client.call_tool("memory_correct", {
            "target_path": path, "title": "Checkout timeout", "claim": "The checkout timeout is 45 seconds.",
            "reason": "raised in March"}))
        out["after"] = ok(await client.call_tool("memory_search", {"query": "checkout timeout seconds"}))
        out["archived"] = ok(await client.call_tool("memory_search", {"query": "checkout timeout seconds",
                                                                      "include_archived": True}))
        out["list"] = ok(await client.call_tool("memory_list", {"include_archived": True}))
        return out

    out = serve(repo, scenario)
    written = out["write"]
    assert written["created"] and written["commitSha"] == out["head"]
    assert written["path"] in out["tree"]
    assert out["again"]["deduped"] and out["again"]["existingPath"] == written["path"]
    assert [h["path"] for h in out["search"]["hits"]] == [written["path"]]
    assert out["read"]["title"] == "Checkout timeout" and out["read"]["path"] == written["path"]
    assert "The checkout timeout is 30 seconds." in out["resource"].contents[0].text
    corrected = out["correct"]
    assert corrected["archived_path"].startswith("archive/") and corrected["commit_sha"] == git(repo, "rev-parse",
                                                                                                "HEAD")
    tree = git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    assert written["path"] not in tree and corrected["archived_path"] in tree and corrected["path"] in tree
    assert [h["path"] for h in out["after"]["hits"]] == [corrected["path"]]
    assert corrected["archived_path"] in [h["path"] for h in out["archived"]["hits"]]
    assert {f["path"] for f in out["list"]["files"]} == {corrected["path"], corrected["archived_path"]}
    assert git(repo, "log", "--format=%s", "-3").splitlines()[0].startswith("memhtml(correct): ")


def test_paths_outside_a_memory_are_refused_and_nothing_moves(tmp_path: Path) -> None:
    repo = init_repo(tmp_path)
    (repo / "areas" / "inbox" / "link.html").symlink_to("/etc/hostname")
    hostile = ["../outside.html", "/etc/passwd", str(repo / "areas" / "inbox" / "x.html"), ".git/config",
               ".git/HEAD", "areas/inbox/link.html", "areas/index.html", "areas/../../x.html", "areas/%2e%2e/x.html"]

    async def scenario(client: Client) -> list[tuple[str, str, dict[str, Any]]]:
        ok(await client.call_tool("memory_write", {"title": "Anchor", "memory_type": "semantic",
                                                   "claim": "The anchor memory exists."}))
        out = []
        for path in hostile:
            for tool, args, argument in (
                ("memory_read", {"path": path}, "path"),
                ("memory_archive", {"path": path, "reason": "x"}, "path"),
                ("memory_write", {"title": "T", "memory_type": "semantic", "claim": "A claim.", "path": path}, "path"),
                ("memory_link", {"src_path": "areas/inbox/anchor.html", "rel": "relates_to", "dst_path": path},
                 "dst_path"),
                ("memory_correct", {"target_path": path, "title": "T", "claim": "A claim."}, "target_path"),
                ("task_status", {"path": path, "status": "doing"}, "path"),
            ):
                out.append((tool, argument, failed(await client.call_tool(tool, args))))
        return out

    head = None
    results = serve(repo, scenario)
    head = git(repo, "rev-parse", "HEAD")
    assert git(repo, "log", "--format=%s", "-1") == "memhtml(write): Anchor"
    for tool, argument, content in results:
        assert content["code"] in ("ERR_INVALID_FLAG", "ERR_PATH_NOT_FOUND"), (tool, content)
        assert content["argument"] == argument and content["hint"], (tool, content)
    assert head == git(repo, "rev-parse", "HEAD")
    assert git(repo, "status", "--porcelain") == "?? areas/inbox/link.html"


def test_a_malformed_argument_is_a_tool_error_and_the_next_call_still_works(tmp_path: Path) -> None:
    repo = init_repo(tmp_path)

    async def scenario(client: Client) -> list[Any]:
        return [
            await client.call_tool("memory_search", {"query": "x", "limit": "many"}),
            await client.call_tool("memory_search", {"query": "x", "bogus": True}),
            await client.call_tool("memory_write", {"title": "T", "memory_type": "semantic"}),
            await client.call_tool("memory_write", {"title": "T", "memory_type": "nonsense", "claim": "A claim."}),
            await client.call_tool("memory_search", {"query": "   "}),
            await client.call_tool("memory_reinforce", {"paths": ["areas/inbox/none.html"], "signal": "loud"}),
            await client.call_tool("no_such_tool", {}),
            await client.call_tool("memory_status", {}),
        ]

    *bad, status = serve(repo, scenario)
    contents = [failed(r) for r in bad]
    assert [c["argument"] for c in contents[:6]] == ["limit", "bogus", "arguments", "memory_type", "query", "signal"]
    assert "article_html" in contents[2]["message"]  # a rule over several fields names the arguments as a whole
    assert "unknown field" in contents[1]["message"]
    assert contents[6]["code"] == "ERR_UNKNOWN" and "no_such_tool" in contents[6]["message"]
    assert ok(status)["fresh"] is True


def test_a_commit_made_by_git_behind_the_servers_back_is_visible_on_the_next_search(tmp_path: Path) -> None:
    repo = init_repo(tmp_path)

    async def scenario(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        before = ok(await client.call_tool("memory_search", {"query": "zebracorn migration"}))
        target = repo / "areas" / "inbox" / "zebracorn.html"
        target.write_text(memory_html("Zebracorn migration", "The zebracorn migration finished in May."),
                          encoding="utf-8")
        git(repo, "add", "areas/inbox/zebracorn.html")
        git(repo, "commit", "-q", "-m", "by hand")
        after = ok(await client.call_tool("memory_search", {"query": "zebracorn migration"}))
        return before, after

    before, after = serve(repo, scenario)
    assert before["hits"] == []
    assert [h["path"] for h in after["hits"]] == ["areas/inbox/zebracorn.html"]


def test_every_other_tool_answers_with_the_cli_keys(tmp_path: Path) -> None:
    repo = init_repo(tmp_path)
    a, b = "areas/inbox/alpha.html", "areas/inbox/beta.html"

    async def scenario(client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["refused"] = await client.call_tool("memory_write_batch", {"ops": [
            {"title": "Alpha", "type": "semantic", "claim": "Alpha holds.", "path": a},
            {"title": "Broken", "type": "semantic"}]})
        out["head0"] = git(repo, "rev-parse", "HEAD")
        out["batch"] = ok(await client.call_tool("memory_write_batch", {"session_id": "s-1", "ops": [
            {"title": "Alpha", "type": "semantic", "claim": "Alpha holds.", "path": a},
            {"title": "Beta", "type": "semantic", "claim": "Beta holds.", "path": b}]}))
        out["partial"] = ok(await client.call_tool("memory_write_batch", {"continue_on_error": True, "ops": [
            {"title": "Gamma", "type": "semantic", "claim": "Gamma holds."}, {"title": "Broken", "type": "semantic"}]}))
        out["link"] = ok(await client.call_tool("memory_link", {"src_path": a, "rel": "relates_to", "dst_path": b}))
        out["neighbors"] = ok(await client.call_tool("memory_neighbors", {"path": a}))
        out["reinforce"] = ok(await client.call_tool("memory_reinforce", {"paths": [a], "signal": "positive"}))
        out["recall"] = ok(await client.call_tool("memory_recall", {"query": "alpha beta", "budget_chars": 2000}))
        out["task"] = ok(await client.call_tool("task_add", {"title": "Ship it", "claim": "Ship the release.",
                                                             "due": "2026-04-01"}))
        out["tasks"] = ok(await client.call_tool("task_list", {}))
        out["doing"] = ok(await client.call_tool("task_status", {"path": out["task"]["path"], "status": "doing"}))
        out["done"] = ok(await client.call_tool("task_status", {"path": out["task"]["path"], "status": "done"}))
        out["done_list"] = ok(await client.call_tool("task_list", {"status": ["done"]}))
        out["archive"] = ok(await client.call_tool("memory_archive", {"path": b, "reason": "no longer holds"}))
        out["traces"] = ok(await client.call_tool("trace_search", {"query": "anything"}))
        out["links"] = ok(await client.call_tool("trace_links", {"session_id": "s-1"}))
        out["links_bad"] = await client.call_tool("trace_links", {})
        out["status"] = ok(await client.call_tool("memory_status", {}))
        out["sleep"] = None
        try:
            await client.read_resource("memhtml://sleep/sleep/2026-01-01")
        except Exception as exc:
            out["sleep"] = str(exc)
        return out

    out = serve(repo, scenario)
    refused = failed(out["refused"])
    assert "nothing written" in refused["message"] and "ops:2" in refused["message"] and refused["argument"] == "ops"
    assert out["head0"] == git(repo, "log", "--format=%H", "--grep=memhtml(init)", "-1")  # nothing was written
    assert out["batch"]["summary"]["written"] == 2 and out["batch"]["commitSha"]
    assert out["partial"]["summary"]["written"] == 1 and out["partial"]["summary"]["failed"] == 1
    assert out["link"] == {"ok": True, "rel": "relates_to", "srcPath": a, "dstPath": b,
                           "commitSha": out["link"]["commitSha"]} and out["link"]["commitSha"]
    assert [n["path"] for n in out["neighbors"]["nodes"]] == [b]
    assert out["reinforce"] == {"signal": "positive", "bumped": [a], "cooledDown": []}
    assert {d["path"] for d in out["recall"]["sections"]["memories"]} >= {a, b}
    assert out["task"]["status"] == "todo" and out["task"]["due"] == "2026-04-01"
    assert [t["path"] for t in out["tasks"]["tasks"]] == [out["task"]["path"]]
    assert out["doing"]["previous"] == "todo" and out["doing"]["changed"]
    assert out["done"]["archivePath"].startswith("archive/")
    assert [t["path"] for t in out["done_list"]["tasks"]] == [out["done"]["archivePath"]]
    assert out["archive"]["archive_path"].startswith("archive/") and out["archive"]["path"] == b
    assert out["traces"] == {"query": "anything", "sessions": []}
    assert {k["path"] for k in out["links"]["links"]} == {a, out["archive"]["archive_path"]}  # the link moved
    assert failed(out["links_bad"])["argument"] == "session_id"
    status = out["status"]
    assert status["fresh"] and status["countsByType"] == {"semantic": 2} and status["lastSleep"] is None
    assert out["sleep"] is not None and "ERR_UNKNOWN: no report of run 2026-01-01" in out["sleep"]
    subjects = git(repo, "log", "--format=%s").splitlines()
    assert [s.split(":")[0] for s in subjects] == [
        "memhtml(archive)", "memhtml(archive)", "memhtml(task)", "memhtml(write)", "memhtml(link)",
        "memhtml(batch)", "memhtml(batch)", "memhtml(init)"]  # one commit per write call, none for a refusal


def test_two_servers_share_one_repository_and_each_sees_the_others_commits(tmp_path: Path) -> None:
    repo = init_repo(tmp_path)
    params = StdioServerParameters(command=sys.executable, args=["-m", "git_memhtml", "-C", str(repo), "mcp"],
                                   env=dict(os.environ), cwd=str(repo))

    async def run() -> list[dict[str, Any]]:
        async with Client(params, read_timeout_seconds=60) as one, Client(params, read_timeout_seconds=60) as two:
            first = ok(await one.call_tool("memory_write", {"title": "Kiwi", "memory_type": "semantic",
                                                            "claim": "The kiwi release shipped."}))
            seen_by_two = ok(await two.call_tool("memory_search", {"query": "kiwi release"}))
            second = ok(await two.call_tool("memory_write", {"title": "Mango", "memory_type": "semantic",
                                                             "claim": "The mango release slipped."}))
            seen_by_one = ok(await one.call_tool("memory_search", {"query": "mango release"}))
            return [first, seen_by_two, second, seen_by_one]

    first, seen_by_two, second, seen_by_one = anyio.run(run)
    assert [h["path"] for h in seen_by_two["hits"]] == [first["path"]]
    assert seen_by_one["hits"][0]["path"] == second["path"]
    assert git(repo, "log", "--format=%s", "-2").splitlines() == ["memhtml(write): Mango", "memhtml(write): Kiwi"]
