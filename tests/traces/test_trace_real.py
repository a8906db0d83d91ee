"""Acceptance of ``git memhtml trace index`` on the three real Claude Code sessions (issue 13, Acceptance 1).

The expected numbers come from a plain ``json`` pass over the files written here, not from the parser: sessions are
the main files, prompts the ``user`` lines a person typed (not ``isMeta``, not a sidechain, no ``tool_result``
block, some text), sub-agents the ``agent-*.jsonl`` sidecars. The shared data is read in place and must be left
byte- and mtime-identical by every command.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.main import main
from tests.conftest import SHARED_DATA

TRANSCRIPTS = SHARED_DATA / "transcripts" / "claude-code"



@pytest.fixture(autouse=True)
def _shared_data() -> None:
    if not TRANSCRIPTS.is_dir():
        pytest.fail(f"the shared transcripts are missing at {TRANSCRIPTS} (../shared/data beside the project)")


def _is_prompt(obj: dict[str, Any]) -> bool:
    if obj.get("type") != "user" or obj.get("isMeta") or obj.get("isSidechain"):
        return False
    content = obj["message"]["content"]
    if isinstance(content, str):
        return bool(content.strip())
    if any(b.get("type") == "tool_result" for b in content):
        return False
    return any(b.get("type") == "text" and b.get("text", "").strip() for b in content)


def expected(root: Path) -> dict[str, Any]:
    """Sessions, prompts per session and sub-agents per session, by a plain json pass."""
    prompts: dict[str, int] = {}
    agents: dict[str, int] = {}
    for path in sorted((root / "projects").glob("*/*.jsonl")):
        with path.open("rb") as fh:
            prompts[path.stem] = sum(1 for line in fh if _is_prompt(json.loads(line)))
        agents[path.stem] = len(list((path.parent / path.stem / "subagents").glob("agent-*.jsonl")))
    return {"prompts": prompts, "agents": agents}


def snapshot(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every file under ``root``: (size, mtime ns, sha of the bytes)."""
    import hashlib

    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            st = path.stat()
            out[str(path)] = (st.st_size, st.st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
    return out


def run(capsys: pytest.CaptureFixture[str], repo: Path, *args: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["-C", str(repo), *args, "--json"]) == 0
    envelope: dict[str, Any] = json.loads(capsys.readouterr().out)
    return envelope


@pytest.fixture
def repo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    root = tmp_path / "mem"
    assert main(["init", str(root)]) == 0
    capsys.readouterr()
    return root


def test_real_sessions_prompts_and_sub_agents_then_nothing_new(repo: Path, capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    monkeypatch.setenv("MEMHTML_TRACE_ROOT", str(TRANSCRIPTS))
    monkeypatch.setenv("MEMHTML_CODEX_ROOT", str(tmp_path / "no-codex"))
    want = expected(TRANSCRIPTS)
    before = snapshot(TRANSCRIPTS)
    first = run(capsys, repo, "trace", "index")
    assert first["type"] == "trace.report"
    report = first["data"]
    assert report["sessions_new"] == len(want["prompts"]) == 3
    assert report["sessions"] == 3
    assert report["prompts"] == sum(want["prompts"].values())
    assert report["sub_agents"] == sum(want["agents"].values()) == 5
    assert report["files_found"] == report["files_scanned"] == 3 + 5
    assert report["bytes_read"] == sum(p.stat().st_size for p in TRANSCRIPTS.rglob("*.jsonl"))
    assert report["torn_lines"] == report["invalid_lines"] == 0

    listed = run(capsys, repo, "trace", "search", "", "--limit", "10")
    assert listed["type"] == "trace.sessions"
    by_id = {s["session_id"]: s for s in listed["data"]["sessions"]}
    assert {sid: s["counts"]["user_prompts"] for sid, s in by_id.items()} == want["prompts"]
    assert {sid: s["counts"]["sub_agents"] for sid, s in by_id.items()} == want["agents"]
    for session in by_id.values():
        assert session["source"] == "claude-code" and session["model"].startswith("claude-")
        assert session["started_at"].endswith("Z") and len(session["started_at"]) == 24
        assert session["started_at"] <= session["ended_at"]
        assert len(session["first_prompt"]) <= 500

    second = run(capsys, repo, "trace", "index")["data"]
    assert second["bytes_read"] == 0 and second["lines_read"] == 0 and second["files_scanned"] == 0
    assert second["files_unchanged"] == 8 and second["sessions"] == 3

    found = run(capsys, repo, "trace", "search", "curry poem")["data"]["sessions"]
    assert found and found[0]["session_id"] == "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68"
    run(capsys, repo, "trace", "links", "--session-id", found[0]["session_id"])
    assert snapshot(TRANSCRIPTS) == before  # bytes and mtimes of the real transcripts untouched


def test_appending_one_line_to_a_copy_reads_only_that_line(repo: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    copy = tmp_path / "claude"
    shutil.copytree(TRANSCRIPTS, copy)
    monkeypatch.setenv("MEMHTML_TRACE_ROOT", str(copy))
    monkeypatch.setenv("MEMHTML_CODEX_ROOT", str(tmp_path / "no-codex"))
    run(capsys, repo, "trace", "index")
    target = next(copy.glob("projects/*/4b2030ed-*.jsonl"))
    line = json.dumps({"type": "user", "sessionId": target.stem, "uuid": "u-appended",
                       "timestamp": "2026-01-21T21:00:00.000Z", "message": {"role": "user",
                                                                             "content": "one more appended prompt"}})
    data = (line + "\n").encode()
    stamp = target.stat().st_mtime_ns
    with target.open("ab") as fh:
        fh.write(data)
    os.utime(target, ns=(stamp + 5_000_000_000, stamp + 5_000_000_000))
    report = run(capsys, repo, "trace", "index")["data"]
    assert report["bytes_read"] == len(data) and report["lines_read"] == 1
    assert report["files_scanned"] == 1 and report["sessions_updated"] == 1 and report["prompts"] == 1
    sessions = run(capsys, repo, "trace", "search", "")["data"]["sessions"]
    session = next(s for s in sessions if s["session_id"] == target.stem)
    assert session["counts"]["user_prompts"] == 2
    assert session["ended_at"] == "2026-01-21T21:00:00.000Z"
