"""Drive ``git memhtml -C <repo> mcp`` over stdio with the SDK's own client (a real subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult

T = TypeVar("T")


def serve(repo: Path, scenario: Callable[[Client], Awaitable[T]]) -> T:
    """Start the server on ``repo`` (the test's environment: fake embedder, pinned identity), run ``scenario``
    with a connected client, close it; return what the scenario returned."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "git_memhtml", "-C", str(repo), "mcp"],
                                   env=dict(os.environ), cwd=str(repo))

    async def run() -> T:
        async with Client(params, read_timeout_seconds=60) as client:
            return await scenario(client)

    return anyio.run(run)


def ok(result: CallToolResult) -> dict[str, Any]:
    """The structured content of a successful call (fails the test with the error text otherwise)."""
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def failed(result: CallToolResult) -> dict[str, Any]:
    """The structured content of a failed call, after checking the failure shape of docs/mcp.md "Errors"."""
    assert result.is_error
    content = result.structured_content
    assert isinstance(content, dict)
    assert set(content) >= {"code", "message", "hint", "path", "argument"}
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith(f"{content['code']}: ") and f". Try: {content['hint']}" in text
    return content


def git(repo: Path, *args: str) -> str:
    """``git -C repo …``'s stdout (check=True)."""
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def init_repo(tmp_path: Path) -> Path:
    """A fresh memory repository at ``tmp_path/mem`` (``git memhtml init``)."""
    from git_memhtml.cli.main import main

    root = tmp_path / "mem"
    assert main(["init", str(root)]) == 0
    return root
