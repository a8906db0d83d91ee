"""``trace search``: FTS syntax in a query is only words, filters apply, a late sidecar joins its session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from git_memhtml.index.db import IndexDB, open_index
from git_memhtml.index.traces import TraceTables
from tests.traces.trace_helpers import SID, claude_line, claude_root, scan_roots, stored

OTHER = "66666666-6666-6666-6666-666666666666"


@pytest.fixture
def db(tmp_path: Path) -> Iterator[IndexDB]:
    handle = open_index(":memory:", ":memory:")
    root, path = claude_root(tmp_path, claude_line("user", "Fix the cart total rounding"))
    (path.parent / f"{OTHER}.jsonl").write_bytes(
        claude_line("user", "Write the release notes", session_id=OTHER, timestamp="2026-03-01T08:00:00+01:00",
                    cwd="/home/u/docs"))
    scan_roots(handle, root, tmp_path / "no-codex")
    yield handle
    handle.close()


QUERIES: list[tuple[str, str, list[str]]] = [
    ("plain words", "cart rounding", [SID]),
    ("FTS operators are words", 'cart OR NOT "release', [SID, OTHER]),
    ("a lone quote", '"', [OTHER, SID]),
    ("a star", "*", [OTHER, SID]),
    ("NEAR syntax", "NEAR(cart total)", [SID]),
    ("a column filter", "search_text:release", [OTHER]),
    ("a caret and parentheses", "^(notes)", [OTHER]),
    ("nothing matches", "kubernetes", []),
]


@pytest.mark.parametrize(("label", "query", "want"), QUERIES, ids=[r[0] for r in QUERIES])
def test_query_text_is_only_words(db: IndexDB, label: str, query: str, want: list[str]) -> None:
    found = [s.session_id for s in TraceTables(db).search_sessions(query)]
    assert sorted(found) == sorted(want), label
    if len(want) == 2 and not query.strip('"*'):
        assert found == [OTHER, SID]  # no word: newest first


def test_filters_on_cwd_and_since(db: IndexDB) -> None:
    tables = TraceTables(db)
    assert [s.session_id for s in tables.search_sessions("", cwd="/home/u/docs")] == [OTHER]
    assert [s.session_id for s in tables.search_sessions("", since="2026-03-01T07:00:00.000Z")] == [OTHER]
    assert [s.session_id for s in tables.search_sessions("", since="2026-03-01T07:00:00.001Z")] == []
    assert len(tables.search_sessions("", limit=1)) == 1


def test_a_sidecar_that_appears_later_joins_its_session(db: IndexDB, tmp_path: Path) -> None:
    sub = tmp_path / "claude" / "projects" / "-home-u-p" / SID / "subagents"
    sub.mkdir(parents=True)
    (sub / "agent-late.jsonl").write_bytes(claude_line("assistant", "late work"))
    report = scan_roots(db, tmp_path / "claude", tmp_path / "no-codex")
    assert report.sub_agents == 1 and report.sessions_updated == 1 and report.files_unchanged == 2
    session = stored(db)
    assert session is not None and session.counts.sub_agents == 1 and session.counts.tool_calls == 1
    assert session.first_prompt == "Fix the cart total rounding"
    assert session.file is not None and session.file.path.endswith(f"{SID}.jsonl")  # still the main file
