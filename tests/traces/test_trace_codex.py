"""A Codex CLI rollout written from the documented line shapes parses into the same session model (issue 13)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.index.db import IndexDB, open_index
from tests.traces.trace_helpers import bump_mtime, scan_roots, stored

CODEX_ID = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"


def rollout_lines() -> list[dict[str, Any]]:
    """One short session: meta, context, two prompts, an answer, a tool call and its output, and a reasoning item."""
    ts = "2025-10-29T00:59:38.317Z"
    return [
        {"timestamp": ts, "type": "session_meta", "payload": {
            "id": CODEX_ID, "timestamp": ts, "cwd": "/home/u/shop", "originator": "codex_cli_rs",
            "cli_version": "0.46.0", "instructions": None, "git": {"commit_hash": "abc", "branch": "feature/cart"}}},
        {"timestamp": ts, "type": "response_item", "payload": {
            "type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "<environment_context>cwd</environment_context>"}]}},
        {"timestamp": ts, "type": "event_msg", "payload": {"type": "user_message", "message": "Fix the cart total",
                                                           "kind": "plain"}},
        {"timestamp": ts, "type": "turn_context", "payload": {"cwd": "/home/u/shop", "approval_policy": "never",
                                                              "model": "gpt-5-codex", "effort": "high"}},
        {"timestamp": "2025-10-29T00:59:40.000+02:00", "type": "response_item", "payload": {
            "type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": "c1"}},
        {"timestamp": "2025-10-29T00:59:41.000Z", "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "c1", "output": "cart.py"}},
        {"timestamp": "2025-10-29T00:59:42.000Z", "type": "response_item", "payload": {
            "type": "reasoning", "summary": [], "encrypted_content": "x"}},
        {"timestamp": "2025-10-29T00:59:43.000Z", "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Fixed."}]}},
        {"timestamp": "2025-10-29T01:05:00.000Z", "type": "event_msg", "payload": {
            "type": "user_message", "message": "Now add a test", "kind": "plain"}},
        {"timestamp": "2025-10-29T01:05:01.000Z", "type": "event_msg", "payload": {"type": "token_count"}},
        {"timestamp": "2025-10-29T01:05:02.000Z", "type": "something_new", "payload": {}},
    ]


@pytest.fixture
def db() -> Iterator[IndexDB]:
    handle = open_index(":memory:", ":memory:")
    yield handle
    handle.close()


def write_rollout(tmp_path: Path, lines: list[dict[str, Any]]) -> Path:
    folder = tmp_path / "codex" / "sessions" / "2025" / "10" / "29"
    folder.mkdir(parents=True)
    path = folder / f"rollout-2025-10-29T00-59-38-{CODEX_ID}.jsonl"
    path.write_bytes(b"".join((json.dumps(o) + "\n").encode() for o in lines))
    return path


def test_codex_rollout_parses_into_the_session_model(db: IndexDB, tmp_path: Path) -> None:
    path = write_rollout(tmp_path, rollout_lines())
    report = scan_roots(db, tmp_path / "no-claude", tmp_path / "codex")
    assert report.sessions_new == 1 and report.prompts == 2 and report.unknown_types == 1
    session = stored(db, CODEX_ID)
    assert session is not None
    assert session.source == "codex" and session.cwd == "/home/u/shop" and session.slug == "-home-u-shop"
    assert session.git_branch == "feature/cart" and session.model == "gpt-5-codex"
    assert session.started_at == "2025-10-28T22:59:40.000Z"  # the +02:00 instant is the earliest in UTC
    assert session.ended_at == "2025-10-29T01:05:01.000Z"  # the unknown line's instant does not count
    assert session.counts.user_prompts == 2 and session.counts.assistant_turns == 1
    assert session.counts.tool_calls == 1 and session.counts.sub_agents == 0
    assert session.first_prompt == "Fix the cart total"  # the injected environment context is no prompt
    assert [p.head for p in session.prompts] == ["Fix the cart total", "Now add a test"]
    assert session.file is not None and session.file.path == str(path)


def test_codex_tail_appends_a_prompt(db: IndexDB, tmp_path: Path) -> None:
    path = write_rollout(tmp_path, rollout_lines())
    scan_roots(db, tmp_path / "no-claude", tmp_path / "codex")
    extra = (json.dumps({"timestamp": "2025-10-29T02:00:00.000Z", "type": "event_msg",
                         "payload": {"type": "user_message", "message": "Ship it"}}) + "\n").encode()
    with path.open("ab") as fh:
        fh.write(extra)
    bump_mtime(path)
    report = scan_roots(db, tmp_path / "no-claude", tmp_path / "codex")
    assert report.bytes_read == len(extra) and report.sessions_updated == 1
    session = stored(db, CODEX_ID)
    assert session is not None and [p.head for p in session.prompts][-1] == "Ship it"
    assert [p.ordinal for p in session.prompts] == [0, 1, 2] and session.first_prompt == "Fix the cart total"
