"""The observation start (issue 8 item 4): the instant this store began recording reads, kept in
``state.observation`` by the access plane, and migration ``0006_observation`` upgrading an older state.db."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import apsw

from git_memhtml.index.access import fold_access, observation_start, record_read, reinforce, rename_access
from git_memhtml.index.db import IndexDB, open_index

T0 = "2026-01-01T00:00:00Z"


def test_no_read_no_observation_start(db: IndexDB) -> None:
    assert observation_start(db) is None


def test_the_first_applied_bump_starts_observation_and_later_ones_keep_it(db: IndexDB) -> None:
    assert record_read(db, "a.html", now=T0)
    assert observation_start(db) == T0
    assert reinforce(db, ["b.html"], signal="positive", now="2026-02-01T00:00:00Z") == ("b.html",)
    assert record_read(db, "a.html", now="2026-03-01T00:00:00Z")
    assert observation_start(db) == T0


def test_reinforce_alone_starts_observation(db: IndexDB) -> None:
    assert reinforce(db, ["a.html"], signal="negative", now=T0) == ("a.html",)
    assert observation_start(db) == T0


def test_a_cooled_down_bump_changes_nothing(db: IndexDB) -> None:
    assert record_read(db, "a.html", now="2026-01-01T00:10:00Z")
    assert not record_read(db, "a.html", now="2026-01-01T00:20:00Z")  # inside the 900 s cooldown
    assert observation_start(db) == "2026-01-01T00:10:00Z"


def test_an_earlier_read_moves_the_start_back(db: IndexDB) -> None:
    record_read(db, "a.html", now="2026-02-01T00:00:00Z")
    record_read(db, "b.html", now=T0)  # a skewed clock: the earlier instant was observed too
    assert observation_start(db) == T0


def test_renames_and_folds_do_not_move_it(db: IndexDB) -> None:
    record_read(db, "a.html", now=T0)
    record_read(db, "b.html", now="2026-02-01T00:00:00Z")
    assert rename_access(db, "a.html", "archive/2026/a.html")
    assert fold_access(db, "b.html", "archive/2026/a.html")
    assert observation_start(db) == T0


def _old_state_db(path: Path, rows: list[tuple[str, int, str | None]]) -> None:
    """A state.db as the version before ``0006_observation`` left it: migrations 0001-0005 and their ledger,
    plus ``rows`` of ``(path, access_count, last_accessed_at)`` written by that version."""
    root = resources.files("git_memhtml.index").joinpath("state_migrations")
    names = sorted(p.name for p in root.iterdir() if p.name.endswith(".sql"))
    assert "0006_observation.sql" in names
    conn = apsw.Connection(":memory:")
    conn.execute(f"ATTACH DATABASE '{path}' AS state")
    conn.execute("CREATE TABLE state.schema_migrations(version TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    for name in names:
        if name >= "0006":
            break
        conn.execute(root.joinpath(name).read_text(encoding="utf-8"))
        conn.execute("INSERT INTO state.schema_migrations VALUES (?, ?)", (name, T0))
    for rel, count, last in rows:
        conn.execute("INSERT INTO state.access (path, access_count, last_accessed_at, updated_at) VALUES (?, ?, ?, ?)",
                     (rel, count, last, last or T0))
    conn.close()


def test_migration_backfills_from_the_earliest_recorded_read(tmp_path: Path) -> None:
    state = tmp_path / "state.db"
    _old_state_db(state, [("b.html", 3, "2026-02-10T08:00:00Z"), ("a.html", 1, "2026-01-20T09:30:00Z"),
                          ("c.html", 0, None), ("d.html", 2, "not a time")])
    db = open_index(tmp_path / "index.db", state)
    try:
        assert "0006_observation.sql" in db.applied_migrations("state")
        assert observation_start(db) == "2026-01-20T09:30:00Z"
        assert db.query_one("SELECT access_count FROM state.access WHERE path = 'b.html'") == (3,)  # rows kept
        record_read(db, "e.html", now="2026-03-01T00:00:00Z")
        assert observation_start(db) == "2026-01-20T09:30:00Z"
    finally:
        db.close()
    again = open_index(tmp_path / "index.db", state)  # reopening applies nothing twice
    try:
        assert again.applied_migrations("state").count("0006_observation.sql") == 1
        assert observation_start(again) == "2026-01-20T09:30:00Z"
    finally:
        again.close()


def test_migration_of_a_store_that_never_recorded_a_read(tmp_path: Path) -> None:
    state = tmp_path / "state.db"
    _old_state_db(state, [("c.html", 0, None)])
    db = open_index(tmp_path / "index.db", state)
    try:
        assert observation_start(db) is None
    finally:
        db.close()


def test_an_unreadable_start_is_replaced_by_the_next_read(db: IndexDB) -> None:
    record_read(db, "a.html", now=T0)
    db.execute("UPDATE state.observation SET started_at = 'yesterday-ish' WHERE id = 1")  # a hand-edited state.db
    assert observation_start(db) == "yesterday-ish"  # read back as is; scoring reads it as no window at all
    assert record_read(db, "b.html", now="2026-02-01T00:00:00Z")
    assert observation_start(db) == "2026-02-01T00:00:00Z"
