"""``files.stub``: written by the projection, backfilled by migration 0015 on an older index, checked by ``index
verify`` (issue 27; docs/retrieval.md §4.1). A store written before (by the original or an older version of ours)
keeps working: its minted person files become stubs, its facts filed under ``resources/people/`` stay facts."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB, open_index
from git_memhtml.index.retrieval import ArmWeights, search
from git_memhtml.index.verify import verify
from git_memhtml.sleep.phases.person_links import render_person
from tests.index.index_helpers import NOW, Repo, memory_html

FILES = {
    "resources/people/caroline.html": render_person("Caroline", "2026-01-01T00:00:00Z"),
    "resources/people/melanie.html": memory_html("Melanie", "Melanie appears in this agent's memory.",
                                                 entities=("Person:Melanie",)),
    "resources/people/priya-raman.html": memory_html("Priya Raman", "Priya Raman leads site reliability.",
                                                     entities=("person:Priya Raman",)),
    "resources/people/caroline-went-to-a-support-group.html": memory_html(
        "Caroline went to a support group", "Caroline went to a support group.", entities=("person:Caroline",)),
    "areas/inbox/services.html": memory_html("Services", "Services appears in this agent's memory."),
}
STUBS = {"resources/people/caroline.html", "resources/people/melanie.html"}


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Repo, IndexDB]:
    repo = Repo(tmp_path / "mem")
    for path, html in FILES.items():
        repo.write(path, html)
    repo.commit("seed", *FILES)
    db = IndexDB.for_repo(repo.git)
    indexer.rebuild(repo.git, db, None, now=NOW)
    return repo, db


def _stubs(db: IndexDB) -> set[str]:
    return {str(p) for (p,) in db.query("SELECT path FROM files WHERE stub = 1")}


def _lexical(db: IndexDB, word: str) -> set[str]:
    """The paths whose FTS5 row holds ``word``."""
    rows = db.query("SELECT f.path FROM files_fts JOIN files f ON f.id = files_fts.rowid WHERE files_fts MATCH ?",
                    (word,))
    return {str(p) for (p,) in rows}


def test_the_projection_marks_stubs_only(indexed: tuple[Repo, IndexDB]) -> None:
    _, db = indexed
    assert _stubs(db) == STUBS


def test_a_stub_is_no_lexical_document(indexed: tuple[Repo, IndexDB]) -> None:
    """A stub's text counts in no bm25 statistic and takes no place in the lexical arm's first cut: on LoCoMo
    conv-43 two indexed stubs pushed one question's evidence out of the top 10 (bench/curation.py)."""
    _, db = indexed
    assert _lexical(db, "appears") == {"areas/inbox/services.html"}
    assert _lexical(db, "caroline") == {"resources/people/caroline-went-to-a-support-group.html"}


def test_migration_backfills_an_older_index_and_verify_sees_no_drift(indexed: tuple[Repo, IndexDB]) -> None:
    repo, db = indexed
    index_path, state_path = db.index_path, db.state_path
    db.execute("DROP INDEX files_recency")
    db.execute("CREATE INDEX files_recency ON files(archived, coalesce(event_at, updated_at) DESC, path, memory_type)")
    db.execute("DROP INDEX files_scope")
    db.execute("CREATE INDEX files_scope ON files(archived, path, memory_type, workspace, updated_at)")
    db.execute("ALTER TABLE files DROP COLUMN stub")
    db.execute("UPDATE files SET fts_text = title || char(10) || gist || char(10) || body_text")  # as it was indexed
    assert _lexical(db, "appears") >= STUBS
    db.execute("DELETE FROM schema_migrations WHERE version = '0015_person_stubs.sql'")
    db.close()
    again = open_index(index_path, state_path)
    try:
        assert _stubs(again) == STUBS
        assert not _lexical(again, "appears") & STUBS
        drift = verify(repo.git, again, now=NOW)
        assert drift.clean, drift
        hits = {h.path for h in search(again, "Caroline Melanie appears memory", now=NOW,
                                       weights=ArmWeights(1, 0, 1, 1)).hits}
        assert hits and not hits & STUBS
        assert "resources/people/caroline-went-to-a-support-group.html" in hits
    finally:
        again.close()


def test_verify_reports_a_stub_flag_that_drifted(indexed: tuple[Repo, IndexDB]) -> None:
    repo, db = indexed
    db.execute("UPDATE files SET stub = 0 WHERE path = 'resources/people/caroline.html'")
    drift = verify(repo.git, db, now=NOW)
    assert [path for path, _ in drift.differing] == ["resources/people/caroline.html"]


def test_the_run_gate_samples_no_stub(indexed: tuple[Repo, IndexDB]) -> None:
    """A stub is no search result, so no claim probe looks for one (docs/gate.md §9.1)."""
    from git_memhtml.index.probe_rows import claim_candidates

    _, db = indexed
    sampled = {c.path for c in claim_candidates(db)}
    assert sampled == set(FILES) - STUBS
