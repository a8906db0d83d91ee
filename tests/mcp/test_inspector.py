"""The acceptance line of ``git memhtml mcp`` (issue 14): the server driven over stdio by a client no one here
wrote, the MCP Inspector, pinned to one release.

Two of the Inspector's command-line clients are used, both from the one pinned package: ``mcp-inspector --cli``
(one process per call: it starts the server, calls one method and stops it) and ``mcpdo`` (one connection kept by
a private daemon across calls, so several calls reach one server process). The Inspector hands the server only the
variables it is given with ``-e``, so every call passes the hermetic environment of this test on.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSPECTOR_VERSION = "2.12.0"
"""The pinned Inspector release (``npm view @modelcontextprotocol/inspector version`` when this test was written);
``.ci/run`` installs the same one."""
INSPECTOR_PACKAGE = f"@modelcontextprotocol/inspector@{INSPECTOR_VERSION}"
NOW = "2026-01-15T12:00:00Z"
TOOL_NAMES = (
    "memory_write", "memory_write_batch", "memory_read", "memory_search", "memory_recall", "memory_correct",
    "memory_link", "memory_neighbors", "memory_archive", "memory_reinforce", "memory_list", "task_add",
    "task_status", "task_list", "trace_search", "trace_links", "memory_status",
)
"""Every tool of the server, by the names the server's brief (issue 14) fixes."""
FAILURE_TEXT = re.compile(r"\b[A-Z][A-Z0-9_]+: .+\. Try: .+", re.DOTALL)
"""A tool error's text: ``<CODE>: <message>. Try: <hint>`` (spec digest §7)."""
TOOL_IS_ERROR = 5
"""The Inspector CLI's exit status when the tool answered with ``isError: true``."""
CALL_TIMEOUT = 120
"""Seconds one Inspector run may take (node start-up, the server's imports and one call take 2-5 s here)."""


def _pinned_on_path(name: str) -> str | None:
    """``name`` on PATH when it is the pinned Inspector release, else ``None``."""
    found = shutil.which(name)
    if found is None:
        return None
    probe = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60, check=False)
    return found if probe.stdout.strip() == INSPECTOR_VERSION else None


def _launchers() -> tuple[list[str], list[str]] | None:
    """The command prefixes of the pinned ``mcp-inspector --cli`` and ``mcpdo``: the global install when it is
    the pinned release, else through ``npx`` (which fetches the release once into its cache); ``None`` when
    neither exists."""
    cli, mcpdo = _pinned_on_path("mcp-inspector"), _pinned_on_path("mcpdo")
    if cli is not None and mcpdo is not None:
        return [cli, "--cli"], [mcpdo]
    npx = shutil.which("npx")
    if npx is None:
        return None
    return [npx, "--yes", INSPECTOR_PACKAGE, "--cli"], [npx, "--yes", "-p", INSPECTOR_PACKAGE, "mcpdo"]


LAUNCHERS = _launchers() if shutil.which("mcp-inspector") or shutil.which("npx") else None
pytestmark = [
    pytest.mark.skipif(LAUNCHERS is None, reason="neither npx nor mcp-inspector is on PATH: the MCP Inspector "
                       f"cannot run (install Node.js, then `npm install -g {INSPECTOR_PACKAGE}`; .ci/run does)"),
    pytest.mark.slow,
]


def _server_env() -> list[str]:
    """``-e KEY=VALUE`` for every variable the server needs: the hermetic test environment (conftest), the
    checkout on ``PYTHONPATH``, the pinned clock and the fake embedder."""
    keep = {key: value for key, value in os.environ.items()
            if key.startswith(("GIT_", "MEMHTML_", "XDG_")) or key in {"HOME", "TMPDIR", "PATH", "HF_HUB_OFFLINE"}}
    keep.update({"PYTHONPATH": str(ROOT), "MEMHTML_NOW": NOW, "MEMHTML_EMBED": "fake"})
    return [arg for key, value in sorted(keep.items()) for arg in ("-e", f"{key}={value}")]


@dataclass(frozen=True)
class Answer:
    """One Inspector run: its exit status, the tool result (or method result) it printed, and its stderr."""

    status: int
    result: dict[str, Any]
    stderr: str

    @property
    def is_error(self) -> bool:
        """Whether the tool answered with ``isError: true``."""
        return bool(self.result.get("isError"))

    def text(self) -> str:
        """The text of every text block of the result, joined by newlines."""
        return "\n".join(str(block.get("text", "")) for block in self.result.get("content", [])
                         if block.get("type") == "text")

    def data(self) -> dict[str, Any]:
        """The structured result: ``structuredContent`` when the server sent it, else the text parsed as JSON."""
        structured = self.result.get("structuredContent")
        if isinstance(structured, dict):
            return structured
        parsed = json.loads(self.text())
        assert isinstance(parsed, dict), parsed
        return parsed


def _parse(proc: subprocess.CompletedProcess[str], *, wrapped: bool) -> Answer:
    """The :class:`Answer` of one run; ``wrapped``: the result sits under ``"result"`` (``--cli --format json``)."""
    assert proc.stdout.strip(), f"the Inspector printed nothing (status {proc.returncode}): {proc.stderr}"
    printed = json.loads(proc.stdout)
    result = printed.get("result", {}) if wrapped else printed
    assert isinstance(result, dict), printed
    return Answer(proc.returncode, result, proc.stderr)


def _server_cmd(repo: Path) -> list[str]:
    """The server's command line: ``git memhtml -C REPO mcp`` run by this interpreter."""
    return [sys.executable, "-m", "git_memhtml", "-C", str(repo), "mcp"]


def inspect(repo: Path, *method: str) -> Answer:
    """Run ``mcp-inspector --cli`` once against a fresh server on ``repo`` with ``method`` (``--method …`` and its
    flags) and return what it printed."""
    assert LAUNCHERS is not None
    cmd = [*LAUNCHERS[0], "--format", "json", "-q", *_server_env(), "--cwd", str(repo), *method, "--",
           *_server_cmd(repo)]
    return _parse(subprocess.run(cmd, capture_output=True, text=True, timeout=CALL_TIMEOUT, check=False),
                  wrapped=True)


def call(repo: Path, tool: str, **arguments: object) -> Answer:
    """``tools/call`` of ``tool`` with ``arguments`` (passed verbatim as one JSON object)."""
    return inspect(repo, "--method", "tools/call", "--tool-name", tool, "--tool-args-json", json.dumps(arguments))


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    """A fresh memory repository made by ``git memhtml init``."""
    root = tmp_path / "mem"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMHTML_NOW": NOW}
    made = subprocess.run([sys.executable, "-m", "git_memhtml", "init", str(root)], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert made.returncode == 0, made.stderr
    return root


def test_tools_list_names_every_tool(memory: Path) -> None:
    listed = inspect(memory, "--method", "tools/list")
    assert listed.status == 0, listed.stderr
    names = [tool["name"] for tool in listed.result["tools"]]
    assert sorted(names) == sorted(TOOL_NAMES)
    for tool in listed.result["tools"]:
        assert tool.get("description"), f"{tool['name']} has no description"
        assert tool["inputSchema"]["type"] == "object"


def test_a_written_memory_is_found_by_search_from_a_new_server(memory: Path) -> None:
    written = call(memory, "memory_write", title="Deploy key rotation", memory_type="procedural",
                   body="The deploy key rotates every Tuesday at noon. The new key lives in the team vault.")
    assert written.status == 0 and not written.is_error, written.text()
    path = written.data()["path"]
    assert path.endswith(".html") and (memory / path).is_file()
    head = subprocess.run(["git", "-C", str(memory), "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.splitlines()
    assert path in head  # committed, not merely on disk
    found = call(memory, "memory_search", query="deploy key rotates", limit=5)  # a second server process
    assert found.status == 0 and not found.is_error, found.text()
    hits = found.data()["hits"]
    assert path in [hit["path"] for hit in hits]


def test_a_path_into_the_git_dir_is_a_tool_error_with_a_hint(memory: Path) -> None:
    for path in (".git/config", ".git/HEAD"):
        refused = call(memory, "memory_read", path=path)
        assert refused.status == TOOL_IS_ERROR and refused.is_error, refused.result
        assert FAILURE_TEXT.search(refused.text()), refused.text()
        assert "[core]" not in refused.text()  # nothing of the file leaks into the answer


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A private ``mcpdo`` daemon (its own folder and token, under the test's HOME), stopped at the end."""
    folder = Path(os.environ["TMPDIR"]) / "mcpd"  # short: the daemon's socket path must fit sockaddr_un
    env = {**os.environ, "MCP_INSPECTOR_DAEMON_DIR": str(folder), "MCP_INSPECTOR_DAEMON_TOKEN": "insp-test-token",
           "MCP_INSPECTOR_SECRET_STORE": "memory"}
    yield env
    assert LAUNCHERS is not None
    subprocess.run([*LAUNCHERS[1], "daemon", "stop"], env=env, capture_output=True, timeout=60, check=False)


def _mcpdo(env: dict[str, str], *args: str) -> Answer:
    assert LAUNCHERS is not None
    proc = subprocess.run([*LAUNCHERS[1], "--format", "json", *args], env=env, capture_output=True, text=True,
                          timeout=CALL_TIMEOUT, check=False)
    return _parse(proc, wrapped=False)


def test_a_malformed_argument_is_a_tool_error_and_the_server_keeps_serving(memory: Path, tmp_path: Path,
                                                                          daemon: dict[str, str]) -> None:
    pids = tmp_path / "server-pids"
    # Each start of the server appends its pid: mcpdo re-dials a server that died, so one pid proves one process.
    started = f"echo $$ >> {shlex.quote(str(pids))}; exec {shlex.join(_server_cmd(memory))}"
    connected = _mcpdo(daemon, "connect", "--connection", "mem", *_server_env(), "--cwd", str(memory), "--",
                       "/bin/sh", "-c", started)
    assert connected.result.get("name") == "mem", connected.stderr
    malformed = [
        # not an integer (a list: the Inspector converts a string to a number by the schema before sending it)
        ("memory_search", {"query": "deploy", "limit": [10]}),
        ("memory_search", {"query": "deploy", "no_such_argument": 1}),  # not in the schema
        ("memory_read", {}),  # the required path is missing
        ("memory_write", {"title": ["not", "a", "string"], "body": "x."}),
    ]
    for tool, arguments in malformed:
        refused = _mcpdo(daemon, "@mem", "tools/call", tool, "--tool-args-json", json.dumps(arguments))
        assert refused.status == TOOL_IS_ERROR and refused.is_error, (tool, arguments, refused.result)
        assert refused.text().strip(), (tool, arguments)
    status = _mcpdo(daemon, "@mem", "tools/call", "memory_status", "--tool-args-json", "{}")
    assert status.status == 0 and not status.is_error, status.text()
    assert status.data()["head"]  # the status of the repository the server serves (index status --json keys)
    assert len(pids.read_text(encoding="utf-8").split()) == 1, "the server was started again: it did not survive"
