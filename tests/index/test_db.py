"""Connection, migrations (two ledgers), vector_distance_cos, atomic(), corrupt-file handling."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from git_memhtml.errors import StorageError
from git_memhtml.index.connection import vector_distance_cos
from git_memhtml.index.db import IndexDB, open_index

INDEX_TABLES = {
    "files", "file_tags", "file_entities", "file_facets", "file_citations", "chunks", "embeddings", "edges",
    "files_fts", "index_state", "worktree_paths", "schema_migrations",
}
STATE_TABLES = {
    "access", "edge_corroboration", "entity_corroboration", "applied_ledgers", "sleep_runs", "sleep_phases",
    "trace_consolidations", "schema_migrations",
}


def _tables(db: IndexDB, schema: str) -> set[str]:
    return {r[0] for r in db.query(f"SELECT name FROM {schema}.sqlite_schema WHERE type = 'table'")}


def test_migrations_create_both_planes_with_separate_ledgers(tmp_path: Path) -> None:
    db = open_index(tmp_path / "index.db", tmp_path / "state.db")
    assert _tables(db, "main") >= INDEX_TABLES
    assert _tables(db, "state") >= STATE_TABLES
    assert "access" not in _tables(db, "main")
    main_ledger = db.applied_migrations("main")
    state_ledger = db.applied_migrations("state")
    assert main_ledger[0] == "0001_files.sql" and main_ledger == sorted(main_ledger)
    assert state_ledger[0] == "0001_access.sql"
    assert db.query("PRAGMA journal_mode") == [("wal",)]
    assert db.query("PRAGMA foreign_keys") == [(1,)]
    assert db.query("SELECT vec_version()")[0][0].startswith("v")
    db.close()
    again = open_index(tmp_path / "index.db", tmp_path / "state.db")  # re-open applies nothing twice
    assert again.applied_migrations("main") == main_ledger
    again.close()


def test_for_repo_places_index_in_git_dir_and_state_in_common_dir(tmp_path: Path) -> None:
    class FakeRepo:
        git_dir = tmp_path / "wt" / ".git"
        common_dir = tmp_path / "common"

    db = IndexDB.for_repo(FakeRepo())
    db.close()
    assert (tmp_path / "wt" / ".git" / "memhtml" / "index.db").is_file()
    assert (tmp_path / "common" / "memhtml" / "state.db").is_file()


def test_vector_distance_cos() -> None:
    a = np.array([1, 0, 0], "<f4").tobytes()
    b = np.array([0, 1, 0], "<f4").tobytes()
    z = np.zeros(3, "<f4").tobytes()
    assert vector_distance_cos(a, a) == pytest.approx(0.0)
    assert vector_distance_cos(a, b) == pytest.approx(1.0)
    assert vector_distance_cos(a, np.array([-1, 0, 0], "<f4").tobytes()) == pytest.approx(2.0)
    assert vector_distance_cos(a, z) == pytest.approx(1.0)  # zero norm → cosine 0
    assert vector_distance_cos(a, a[:8]) is None
    assert vector_distance_cos(a, "text") is None
    assert vector_distance_cos(b"abc", b"abc") is None


def test_vector_distance_cos_is_registered(db: IndexDB) -> None:
    a = np.array([1, 1], "<f4").tobytes()
    assert db.query("SELECT vector_distance_cos(?, ?)", (a, a))[0][0] == pytest.approx(0.0)
    assert db.query("SELECT vector_distance_cos(?, 3)", (a,))[0][0] is None


def test_atomic_nests_and_rolls_back_inner_only(db: IndexDB) -> None:
    with db.atomic():
        db.execute("INSERT INTO state.applied_ledgers(run_id, applied_at) VALUES ('a', 'x')")
        with pytest.raises(RuntimeError), db.atomic():
            db.execute("INSERT INTO state.applied_ledgers(run_id, applied_at) VALUES ('b', 'x')")
            raise RuntimeError("boom")
    assert db.query("SELECT run_id FROM state.applied_ledgers") == [("a",)]
    with pytest.raises(RuntimeError), db.atomic():
        db.execute("INSERT INTO state.applied_ledgers(run_id, applied_at) VALUES ('c', 'x')")
        raise RuntimeError("boom")
    assert db.query("SELECT run_id FROM state.applied_ledgers") == [("a",)]


def test_sql_errors_become_storage_errors(db: IndexDB) -> None:
    with pytest.raises(StorageError) as err:
        db.query("SELECT * FROM no_such_table")
    assert err.value.hint


def test_corrupt_index_names_the_fix(tmp_path: Path) -> None:
    bad = tmp_path / "index.db"
    bad.write_bytes(b"not a database" * 400)
    with pytest.raises(StorageError) as err:
        open_index(bad, tmp_path / "state.db")
    assert "git memhtml index rebuild" in (err.value.hint or "")
    assert str(bad) in (err.value.hint or "")


def test_busy_timeout_is_set_per_connection(db: IndexDB) -> None:
    assert db.query("PRAGMA busy_timeout") == [(5000,)]
    db.set_busy_timeout(250)
    assert db.query("PRAGMA busy_timeout") == [(250,)]


def test_a_read_snapshot_hides_other_connections_commits(tmp_path: Path) -> None:
    """``read_snapshot``: a reader sees one state of the index for the whole block, whatever another connection
    commits meanwhile (the run gate reads main's index while a hook may update it; issue 10)."""
    from git_memhtml.index.db import open_index

    index, state = tmp_path / "index.db", tmp_path / "state.db"
    reader, writer = open_index(index, state), open_index(index, state)
    try:
        writer.execute("INSERT INTO index_state (id, head_sha) VALUES (1, 'aaa') "
                       "ON CONFLICT(id) DO UPDATE SET head_sha = 'aaa'")
        with reader.read_snapshot():
            assert reader.query_one("SELECT head_sha FROM index_state")[0] == "aaa"  # type: ignore[index]
            writer.execute("UPDATE index_state SET head_sha = 'bbb'")
            assert reader.query_one("SELECT head_sha FROM index_state")[0] == "aaa"  # type: ignore[index]
            with reader.read_snapshot():  # nested: still the same snapshot
                assert reader.query_one("SELECT head_sha FROM index_state")[0] == "aaa"  # type: ignore[index]
        assert reader.query_one("SELECT head_sha FROM index_state")[0] == "bbb"  # type: ignore[index]
    finally:
        reader.close()
        writer.close()


def test_an_open_that_is_only_busy_waits_instead_of_serving_read_only(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Another connection holding the write lock past the busy timeout: the open retries with backoff and gets a
    writable index, never the read-only fallback (whose checkpointed file may predate migrations still in the WAL;
    seen as "schema is older than this version" with eight writers and a sleep run starting at once).

    The holder keeps its lock in ``locking_mode=EXCLUSIVE`` with a write pending, so the open itself is refused
    busy (a plain ``BEGIN EXCLUSIVE`` under WAL still lets it read); the holder lets go during the open's first
    backoff pause. So the open was refused once, waited once, and got a writable index on its retry."""
    from types import SimpleNamespace

    from git_memhtml.index import connection
    from git_memhtml.index import db as dbmod

    repo = SimpleNamespace(git_dir=tmp_path / "git", common_dir=tmp_path / "git")
    first = dbmod.IndexDB.for_repo(repo)
    first.close()
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_MS", 50)
    holder = dbmod.open_index(tmp_path / "git" / "memhtml" / "index.db", tmp_path / "git" / "memhtml" / "state.db")
    holder._conn.execute("PRAGMA main.locking_mode=EXCLUSIVE")
    holder._conn.execute("BEGIN EXCLUSIVE")
    holder._conn.execute("INSERT INTO index_state (id, head_sha) VALUES (1, 'held') "
                         "ON CONFLICT(id) DO UPDATE SET head_sha = 'held'")
    pauses: list[float] = []
    backoff_wait = dbmod._Backoff.wait

    def let_go_then_wait(backoff: dbmod._Backoff) -> bool:
        if not pauses:
            holder.close()  # the other writer finishes while the open waits
        pauses.append(backoff.waited)
        return backoff_wait(backoff)

    monkeypatch.setattr(dbmod._Backoff, "wait", let_go_then_wait)
    try:
        opened = dbmod.IndexDB.for_repo(repo, recover=True)
    finally:
        holder.close()
    try:
        assert opened.read_only is None and pauses == [0.0]  # refused busy once, waited once, then writable
        opened.execute("INSERT INTO index_state (id, head_sha) VALUES (1, 'w') "
                       "ON CONFLICT(id) DO UPDATE SET head_sha = 'w'")
    finally:
        opened.close()


def test_the_extension_path_is_the_one_sqlite_vec_names_without_importing_it() -> None:
    import subprocess
    import sys

    import sqlite_vec

    from git_memhtml.index.connection import sqlite_vec_path

    assert sqlite_vec_path() == sqlite_vec.loadable_path()
    code = ("import sys; import git_memhtml.index.db as d, tempfile, pathlib; t = pathlib.Path(tempfile.mkdtemp()); "
            "d.open_index(t / 'i.db', t / 's.db').close(); "
            "print('sqlite_vec' in sys.modules, 'sqlite3' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["False", "False"]  # an open (migrations, sqlite-vec loaded) imports neither


def test_the_ledger_check_lists_the_migrations_it_applies() -> None:
    from git_memhtml.index.connection import migration_files, migration_names

    for schema in ("main", "state"):
        names = migration_names(schema)
        assert names and names == sorted(names) and all(n.endswith(".sql") for n in names)
        assert [name for name, _ in migration_files(schema)] == names
