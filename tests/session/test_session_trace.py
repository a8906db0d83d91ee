"""``session trace``: the finished session becomes searchable; failures are bounded and silent (docs/session.md §4)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from git_memhtml.cli.main import main
from tests.session.session_helpers import ROOMY, cli, run_hook
from tests.traces.trace_helpers import SID, claude_line, claude_root


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    root = tmp_path / "mem"
    assert main(["init", str(root)]) == 0
    claude, transcript = claude_root(tmp_path, claude_line(text="migrate the billing ledger to postgres")
                                     + claude_line("assistant", text="done"))
    return root, transcript, {"MEMHTML_TRACE_ROOT": str(claude), "MEMHTML_CODEX_ROOT": str(tmp_path / "no-codex")}


def _search(root: Path, env: dict[str, str]) -> list[str]:
    proc = cli("-C", str(root), "trace", "search", "billing ledger", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    return [s.get("sessionId") or s["session_id"] for s in json.loads(proc.stdout)["data"]["sessions"]]


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def test_trace_makes_the_finished_session_searchable(setup: tuple[Path, Path, dict[str, str]]) -> None:
    root, transcript, env = setup
    assert _search(root, env) == []
    head = _git(root, "rev-parse", "HEAD")
    event = json.dumps({"session_id": SID, "transcript_path": str(transcript), "hook_event_name": "Stop"}).encode()
    run = run_hook(root, "trace", "claude-code", event, *ROOMY, env=env)
    assert (run.code, run.out, run.err) == (0, b"", b"")
    assert _search(root, env) == [SID]
    assert _git(root, "rev-parse", "HEAD") == head  # no commit, no memory
    assert subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True,
                          text=True, check=True).stdout == ""


def test_trace_without_a_transcript_path_scans_the_roots(setup: tuple[Path, Path, dict[str, str]]) -> None:
    root, _, env = setup
    assert _search(root, env) == []  # the first command of a new memory builds its index
    event = b'{"conversation_id": "c", "status": "completed"}'
    assert run_hook(root, "trace", "cursor", event, *ROOMY, env=env).code == 0
    assert _search(root, env) == [SID]


def test_a_transcript_path_outside_the_roots_is_not_read(setup: tuple[Path, Path, dict[str, str]],
                                                         tmp_path: Path) -> None:
    root, transcript, env = setup
    stray = tmp_path / "elsewhere" / transcript.name
    stray.parent.mkdir()
    stray.write_bytes(transcript.read_bytes())
    run = run_hook(root, "trace", "claude-code", json.dumps({"transcript_path": str(stray)}).encode(), *ROOMY,
                   env=env)
    assert (run.code, run.out, run.err) == (0, b"", b"")
    assert _search(root, env) == []


@pytest.mark.parametrize("stdin", [b"\xff\xfe", b"{", b"[1]"], ids=["invalid UTF-8", "malformed JSON", "array"])
def test_a_bad_event_prints_nothing_and_indexes_nothing(setup: tuple[Path, Path, dict[str, str]],
                                                        stdin: bytes) -> None:
    root, _, env = setup
    run = run_hook(root, "trace", "codex", stdin, env=env)
    assert (run.code, run.out, run.err) == (0, b"", b"")
    assert _search(root, env) == []


def test_a_memory_never_indexed_gets_nothing_created(setup: tuple[Path, Path, dict[str, str]]) -> None:
    root, transcript, env = setup
    run = run_hook(root, "trace", "claude-code", json.dumps({"transcript_path": str(transcript)}).encode(), *ROOMY,
                   env=env)
    assert (run.code, run.out, run.err) == (0, b"", b"")
    assert not (root / ".git" / "memhtml" / "index.db").exists()
    assert not (root / ".git" / "memhtml" / "state.db").exists()


def test_a_missing_repository_prints_nothing(tmp_path: Path) -> None:
    run = run_hook(tmp_path / "gone", "trace", "claude-code", b"{}")
    assert (run.code, run.out, run.err) == (0, b"", b"")


def test_a_locked_state_plane_ends_by_the_bound(setup: tuple[Path, Path, dict[str, str]]) -> None:
    """``state.db`` locked for the whole run: the trace ends silent with exit 0 and has indexed nothing. (It gives up
    on the lock within seconds by itself, so this does not show the bound; ``test_session_recall.py`` does.)"""
    import sqlite3

    root, transcript, env = setup
    holder = sqlite3.connect(root / ".git" / "memhtml" / "state.db", timeout=0, isolation_level=None)
    try:
        holder.execute("PRAGMA locking_mode=EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("CREATE TABLE hold_the_lock (x)")
        run = run_hook(root, "trace", "claude-code", json.dumps({"transcript_path": str(transcript)}).encode(),
                       "--timeout", "2", env=env)
        assert (run.code, run.out, run.err) == (0, b"", b"")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert _search(root, env) == []
