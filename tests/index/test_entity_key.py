"""``file_entities.entity_key``: one key (``domain.entities.entity_key``) written by the projection, backfilled by
migration 0010 on an older index, and compared by every ``--entity`` filter (issue 8 item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memhtml.domain.entities import entity_key
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB, open_index
from git_memhtml.index.retrieval import ArmWeights, Scope, search
from git_memhtml.store.reads import list_memories
from tests.index.index_helpers import NOW, Repo, memory_html

FILES = {
    "areas/inbox/a.html": memory_html("A", "The audit office signed.", entities=("org:DGIA",)),
    "areas/inbox/b.html": memory_html("B", "The audit office met.", entities=("org:dgia",)),
    "areas/inbox/c.html": memory_html("C", "Caf\u00e9 owners met.", entities=("place:Cafe\u0301 Nord",)),
    "areas/inbox/d.html": memory_html("D", "The audit office of another land.", entities=("org:DGIB",)),
}
QUERIES = [
    ("org:DGIA", {"areas/inbox/a.html", "areas/inbox/b.html"}),
    ("org:dgia", {"areas/inbox/a.html", "areas/inbox/b.html"}),
    ("ORG:  Dgia ", {"areas/inbox/a.html", "areas/inbox/b.html"}),
    ("place:CAF\u00c9 NORD", {"areas/inbox/c.html"}),  # composed query, decomposed file
    ("place:cafe\u0301 nord", {"areas/inbox/c.html"}),
    ("org:DGIB", {"areas/inbox/d.html"}),
    ("org:dgi", set()),
]


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Repo, IndexDB]:
    repo = Repo(tmp_path / "mem")
    for path, html in FILES.items():
        repo.write(path, html)
    repo.commit("seed", *FILES)
    db = IndexDB.for_repo(repo.git)
    indexer.rebuild(repo.git, db, None, now=NOW)
    return repo, db


def test_projection_writes_the_key_and_keeps_the_name(indexed: tuple[Repo, IndexDB]) -> None:
    _, db = indexed
    rows = dict(db.query("SELECT entity_name, entity_key FROM file_entities WHERE entity_type = 'org'"))
    assert rows == {"DGIA": "org:dgia", "dgia": "org:dgia", "DGIB": "org:dgib"}


@pytest.mark.parametrize(("query", "expected"), QUERIES)
def test_every_entity_filter_matches_by_key(indexed: tuple[Repo, IndexDB], query: str, expected: set[str]) -> None:
    _, db = indexed
    listed, _ = list_memories(db, entity=query)
    assert {r["path"] for r in listed} == expected
    hits = search(db, "audit office owners met", scope=Scope(entity=query), now=NOW, weights=ArmWeights(1, 0, 1, 1))
    assert {h.path for h in hits.hits} == expected


def test_migration_backfills_an_older_index(tmp_path: Path, indexed: tuple[Repo, IndexDB]) -> None:
    _repo, db = indexed
    index_path, state_path = db.index_path, db.state_path
    db.execute("DROP INDEX file_entities_match")
    db.execute("ALTER TABLE file_entities DROP COLUMN entity_key")
    db.execute("DELETE FROM schema_migrations WHERE version = '0010_entity_key.sql'")
    db.close()
    again = open_index(index_path, state_path)
    try:
        rows = again.query("SELECT entity_type, entity_name, entity_key FROM file_entities ORDER BY path")
        assert rows and all(key == entity_key(f"{t}:{n}") for t, n, key in rows)
        listed, _ = list_memories(again, entity="org:DGIA")
        assert len(listed) == 2
    finally:
        again.close()
