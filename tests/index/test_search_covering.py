"""The search read path reads index pages, not the wide rows, and answers the same (migration 0013, docs/retrieval.md
§4.14).

A cold search reads three query-independent relations over every admitted file: the matrix's slot map (files ⋈
chunks ⋈ vector_slots, index/matrix_read.py), the recency arm and the salience arm. The plans must use the covering
indexes (the recency arm stopping at its LIMIT even when every file shares one instant), and ``search --json`` must
print the same bytes with the indexes as without them, over queries × scopes on a corpus with tied and distinct
instants, events, tasks, archived files, workspaces, tags, entities and access rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from git_memhtml.cli.common import init_memory
from git_memhtml.cli.main import main
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index import indexer
from git_memhtml.index.access import reinforce
from git_memhtml.index.db import IndexDB
from git_memhtml.index.retrieval_sql import Scope, arm_ranks_sql, scope_sql
from tests.index.index_helpers import NOW, memory_html

TIED = "2026-01-05T00:00:00Z"
WORDS = ("alpha", "beta", "gamma", "delta", "cache", "deploy", "ledger", "queue", "retry", "shard")
OLD_INDEXES = ("CREATE INDEX files_recency ON files(archived, coalesce(event_at, updated_at))",
               "CREATE INDEX chunks_path ON chunks(path, ordinal)")
"""The definitions migration 0013 replaced (migrations 0001 and 0003), for the answers without it."""

SEARCHES: tuple[tuple[str, ...], ...] = (
    ("alpha beta",), ("cache deploy ledger",), ("queue",), ("memory 7",), ("zzz nothing",), ("the",),
    ("alpha", "--tag", "t1"), ("gamma", "--entity", "service:svc2"), ("deploy", "--type", "semantic"),
    ("retry", "--type", "task"), ("ledger", "--include-archived"), ("shard", "--workspace", "web"),
    ("alpha", "--as-of", "2026-01-04T00:00:00Z"), ("beta gamma", "--limit", "50"),
)
"""``search`` arguments: plain queries, one without any known token, a stop word alone, and every scope flag."""


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Path]:
    """A memory store of 48 files: most share one ``updated`` instant (an import), some are newer, some carry an
    event instant; tasks, archived files, two workspaces, tags, entities; four paths have access rows."""
    root = tmp_path / "mem"
    init_memory(root)
    repo = GitRepo.discover(root)
    paths = []
    for i in range(48):
        folder = ("areas/inbox", "projects/web", "projects/api", "archive/areas/inbox")[i % 4]
        kind = "task" if i % 11 == 5 else ("episodic" if i % 3 else "semantic")
        updated = TIED if i % 5 else f"2026-01-{10 + i % 9:02d}T00:00:00Z"
        event = f'<p><time datetime="2026-01-0{1 + i % 8}T00:00:00Z">then</time></p>' if i % 7 == 3 else ""
        claim = " ".join(WORDS[(i * k) % len(WORDS)] for k in (1, 3, 7)).capitalize() + f" memory {i}."
        path = f"{folder}/m{i:02d}.html"
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(memory_html(f"Memory {i}", claim, memory_type=kind, updated=updated, article_extra=event,
                                      tags=(f"t{i % 3}",), entities=(f"service:svc{i % 4}",)), encoding="utf-8")
        paths.append(path)
    repo.stage(paths)
    repo.commit("seed")
    db = IndexDB.for_repo(repo)
    indexer.rebuild(repo, db, FakeEmbedder(), now=NOW)  # the CLI's embedder under the conftest (MEMHTML_EMBED=fake)
    reinforce(db, ["areas/inbox/m00.html", "projects/web/m01.html"], signal="positive", now=NOW)
    reinforce(db, ["projects/api/m02.html", "areas/inbox/m04.html"], signal="neutral", now=NOW)
    db.close()
    yield root


def _plans(db: IndexDB, sql: str, params: dict[str, object]) -> list[str]:
    return [str(row[3]) for row in db.query("EXPLAIN QUERY PLAN " + sql, params)]


def _slot_map_sql(scope: Scope) -> tuple[str, dict[str, object]]:
    """The slot map's join of index/matrix_read.py ``_eligible`` (same tables, join and order)."""
    scope_filter, params = scope_sql(scope)
    return ("SELECT f.path, s.slot FROM files f JOIN chunks c ON c.path = f.path "
            "JOIN vector_slots s ON s.chunk_id = c.chunk_id "
            f"WHERE s.model = :space AND {scope_filter} ORDER BY f.path, c.ordinal",
            {**params, "space": FakeEmbedder().space})


def test_the_query_independent_reads_use_covering_indexes(store: Path) -> None:
    """Default scope: the recency arm walks ``files_recency`` in its ORDER BY (no sort: the LIMIT stops it), the
    salience arm and the slot map read ``files_scope``, ``chunks_path`` and ``vector_slots_chunk`` without touching a
    table row."""
    db = IndexDB.for_repo(GitRepo.discover(store))
    try:
        recency = _plans(db, *arm_ranks_sql("recency", Scope(), now=NOW))
        assert any("COVERING INDEX files_recency" in p for p in recency), recency
        assert not any("TEMP B-TREE FOR LAST TERM" in p for p in recency), recency
        salience = _plans(db, *arm_ranks_sql("salience", Scope(), now=NOW))
        assert any("COVERING INDEX files_scope" in p for p in salience), salience
        slots = _plans(db, *_slot_map_sql(Scope()))
        assert any("COVERING INDEX files_scope" in p for p in slots), slots
        assert any("COVERING INDEX chunks_path" in p for p in slots), slots
        assert any("COVERING INDEX vector_slots_chunk" in p for p in slots), slots
    finally:
        db.close()


def _search_bytes(root: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    out = []
    for args in SEARCHES:
        capsys.readouterr()
        code = main(["-C", str(root), "search", "--json", *args])
        captured = capsys.readouterr()
        assert code == 0, captured.err
        out.append(captured.out)
    return out


def test_search_prints_the_same_bytes_without_the_covering_indexes(store: Path, capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """``search --json`` over queries × scopes with migration 0013's indexes, then with them dropped and the old
    definitions back: byte for byte the same output (and the answers are not all empty)."""
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    with_indexes = _search_bytes(store, capsys)
    assert sum('"path"' in text for text in with_indexes) >= len(SEARCHES) - 2
    db = IndexDB.for_repo(GitRepo.discover(store))
    try:
        for name in ("files_recency", "files_scope", "chunks_path", "vector_slots_chunk"):
            db.execute(f"DROP INDEX {name}")
        for sql in OLD_INDEXES:
            db.execute(sql)
        assert not any("COVERING INDEX files_scope" in p for p in _plans(db, *_slot_map_sql(Scope())))
    finally:
        db.close()
    assert _search_bytes(store, capsys) == with_indexes
