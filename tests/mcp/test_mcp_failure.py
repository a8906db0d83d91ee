"""The failure shape of docs/mcp.md "Errors", on real errors: the text, the structured content, the log line."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp_types import CallToolResult

from git_memhtml.cli.main import main
from git_memhtml.errors import PathRefused
from git_memhtml.mcp.failure import INTERNAL_HINT, failure_text, internal_failure, tool_failure
from git_memhtml.service.door import naming
from tests.mcp.stdio import failed, git, init_repo, serve


def test_the_text_is_code_message_and_hint_without_a_doubled_full_stop() -> None:
    assert failure_text("ERR_X", "it broke.", "do this") == "ERR_X: it broke. Try: do this"
    assert failure_text("ERR_X", "it broke", None) == "ERR_X: it broke."


def test_an_expected_failure_names_its_argument_and_keeps_other_details() -> None:
    error = naming(PathRefused("path '../x': outside", hint="name a memory", path="../x"), "path")
    error.details["results"] = [{"index": 0}]
    result = tool_failure(error)
    assert result.is_error
    assert result.structured_content == {"code": "ERR_INVALID_FLAG", "message": "path '../x': outside",
                                         "hint": "name a memory", "path": "../x", "argument": "path",
                                         "results": [{"index": 0}]}
    assert result.content[0].text == "ERR_INVALID_FLAG: path '../x': outside. Try: name a memory"  # type: ignore[union-attr]


def test_an_unexpected_exception_is_an_internal_error_result_and_its_trace_goes_to_stderr_redacted(
        capsys: pytest.CaptureFixture[str]) -> None:
    key = "AKIA" + "IOSFODNN7EXAMPLE"  # an AWS key id the detector knows
    try:
        raise RuntimeError(f"boom with {key}")
    except RuntimeError as exc:
        result = internal_failure("memory_search", exc)
    captured = capsys.readouterr()
    assert captured.out == ""  # stdout belongs to the protocol
    assert "internal error in tool memory_search: RuntimeError" in captured.err and "Traceback" in captured.err
    assert key not in captured.err
    assert result.is_error and result.structured_content == {
        "code": "ERR_UNKNOWN", "message": "internal error in memory_search: RuntimeError", "hint": INTERNAL_HINT,
        "path": None, "argument": None}
    assert "boom" not in str(result.content)  # the exception's text may hold memory text: the client gets the type


def test_an_index_the_server_cannot_open_is_each_calls_tool_error_and_the_server_stays_up(tmp_path: Path) -> None:
    # the index holds another embedder's vectors: the CLI refuses such a command; the server must start anyway and
    # say so on each call that needs the index (a refusal at start-up reaches the agent as a closed connection)
    repo = init_repo(tmp_path)
    assert main(["-C", str(repo), "write", "--title", "Deploy window", "--type", "semantic",
                 "--body", "The checkout deploy window is Friday."]) == 0  # vectors of fake:hash@1024
    git(repo, "config", "memhtml.embeddim", "256")  # the configured embedder is now fake:hash@256

    async def scenario(client: Client) -> list[CallToolResult]:
        first = await client.call_tool("memory_search", {"query": "deploy window"})
        second = await client.call_tool("memory_status", {})
        return [first, second]

    results = serve(repo, scenario)
    for result in results:
        content = failed(result)
        assert "embedder" in content["message"] and "index rebuild" in content["hint"], content
