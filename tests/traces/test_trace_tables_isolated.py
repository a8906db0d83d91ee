"""The trace plane stays apart: no SQL but ``index/traces.py`` names its tables (so retrieval never reads
transcripts), ``index rebuild`` leaves it whole, and memories that name a session are linked to it."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.main import main
from tests.traces.trace_helpers import SID, claude_line, claude_root

PACKAGE = Path(__file__).resolve().parents[2] / "git_memhtml"
TRACE_TABLES = ("traces", "traces_fts", "trace_prompts", "trace_watermarks", "memory_session_links")
OWNER = "index/traces.py"
_NAMES = re.compile(r"\b(?:state\.)?(" + "|".join(TRACE_TABLES) + r")\b")
_SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|FROM|JOIN|MATCH|CREATE|DROP)\b")


def offences(sources: dict[str, str]) -> list[str]:
    """``path:line table`` for each string literal holding SQL that names a trace table outside :data:`OWNER`."""
    found = []
    for path, text in sources.items():
        if path == OWNER:
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _SQL.search(node.value):
                match = _NAMES.search(node.value)
                if match:
                    found.append(f"{path}:{node.lineno} {match.group(1)}")
    return sorted(found)


def package_sources() -> dict[str, str]:
    return {p.relative_to(PACKAGE).as_posix(): p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py")}


def test_only_the_trace_module_names_trace_tables_in_sql() -> None:
    sources = package_sources()
    assert OWNER in sources and offences({OWNER: sources[OWNER]}) == []
    assert offences(sources) == []
    for path in ("git_memhtml/index/retrieval_sql.py", "git_memhtml/index/retrieval.py",
                 "git_memhtml/index/recall.py"):
        assert Path(PACKAGE.parent / path).is_file()  # the retrieval modules the rule covers exist


@pytest.mark.parametrize("planted", [
    'sql = "SELECT path FROM files JOIN traces t ON t.session_id = files.session_id"',
    'sql = "SELECT head FROM state.trace_prompts WHERE session_id = ?"',
    'sql = "SELECT rowid FROM traces_fts WHERE traces_fts MATCH ?"',
    'q = f"DELETE FROM memory_session_links WHERE path = {x}"',
])
def test_the_rule_catches_a_planted_retrieval_query(planted: str) -> None:
    assert offences({"index/retrieval_sql.py": planted}) != []


def test_prose_that_mentions_traces_is_no_offence() -> None:
    assert offences({"index/retrieval.py": '"""Retrieval never reads traces."""'}) == []


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)["data"]
    return data


def test_rebuild_keeps_the_trace_plane_and_links_follow_the_session_meta(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = claude_root(tmp_path, claude_line("user", "remember the cart rule"))
    monkeypatch.setenv("MEMHTML_TRACE_ROOT", str(root))
    monkeypatch.setenv("MEMHTML_CODEX_ROOT", str(tmp_path / "no-codex"))
    repo = tmp_path / "mem"
    assert main(["init", str(repo)]) == 0
    assert main(["-C", str(repo), "write", "--type", "semantic", "--title", "Cart rule", "--claim",
                 "The cart total includes tax.", "--path", "areas/inbox/cart.html", "--session-id", SID]) == 0
    assert main(["-C", str(repo), "write", "--type", "semantic", "--title", "Other", "--claim",
                 "Unrelated fact.", "--path", "areas/inbox/other.html"]) == 0
    report = _json(capsys, ["-C", str(repo), "trace", "index"])
    assert report["sessions"] == 1 and report["links"] == 1
    links = _json(capsys, ["-C", str(repo), "trace", "links", "--session-id", SID])["links"]
    assert links == [{"path": "areas/inbox/cart.html", "session_id": SID, "prompt_id": None, "turn_uuid": None,
                      "link_kind": "wrote", "at": links[0]["at"]}]
    by_path = _json(capsys, ["-C", str(repo), "trace", "links", "--path", "areas/inbox/cart.html"])["links"]
    assert by_path == links
    assert _json(capsys, ["-C", str(repo), "trace", "links", "--path", "areas/inbox/other.html"])["links"] == []

    assert main(["-C", str(repo), "index", "rebuild"]) == 0
    sessions = _json(capsys, ["-C", str(repo), "trace", "search", "cart rule"])["sessions"]
    assert [s["session_id"] for s in sessions] == [SID]
    again = _json(capsys, ["-C", str(repo), "trace", "index"])
    assert again["bytes_read"] == 0 and again["files_unchanged"] == 1  # the watermarks survived the rebuild too
    assert _json(capsys, ["-C", str(repo), "trace", "links", "--session-id", SID])["links"] == links

    assert main(["-C", str(repo), "archive", "areas/inbox/cart.html", "--reason", "moved on"]) == 0
    moved = _json(capsys, ["-C", str(repo), "trace", "links", "--session-id", SID])["links"]
    archived = _archived(repo)
    assert len(archived) == 1 and [k["path"] for k in moved] == archived


def _archived(repo: Path) -> list[str]:
    return sorted(p.relative_to(repo).as_posix() for p in (repo / "archive").rglob("cart*.html"))
