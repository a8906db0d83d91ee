"""The SQLite connection of the index (docs/index.md §3.1): statements, transactions, migrations. With
``index/connection.py``, which opens the apsw connection under it, the only module that imports apsw.

``main`` is the per-worktree, rebuildable ``index.db``; ``state`` is the shared, non-rebuildable ``state.db``
attached to the same connection. Both run in WAL mode with ``synchronous=NORMAL``, foreign keys on and a 5 s busy
timeout. Migrations are the package's ``index/migrations/*.sql`` (ledger ``main.schema_migrations``) and
``index/state_migrations/*.sql`` (ledger ``state.schema_migrations``), each file applied with its ledger row in one
``BEGIN IMMEDIATE`` transaction, in filename order.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Protocol

import apsw

from git_memhtml.errors import StorageError
from git_memhtml.index.connection import (
    REBUILD_HINT,
    busy,
    closed_on_error,
    connect,
    connect_read_only,
    damaged,
    migration_files,
    pending,
    quarantine,
    storage_error,
)

BUSY_RETRY_FIRST_S = 0.015
BUSY_RETRY_CAP_S = 20.0
"""Jittered exponential retry of ``BEGIN IMMEDIATE`` on SQLITE_BUSY, 15 ms doubling up to 20 s in total (docs/index.md
§3.1)."""

Params = Sequence[Any] | dict[str, Any] | None
"""Positional (``?``/``?N``) or named parameters."""


class _Backoff:
    """The jittered exponential wait between tries on SQLITE_BUSY: :data:`BUSY_RETRY_FIRST_S` × [0.5, 1.5),
    doubling up to 2 s a pause, until :data:`BUSY_RETRY_CAP_S` were waited in all."""

    def __init__(self) -> None:
        self.delay = BUSY_RETRY_FIRST_S
        self.waited = 0.0

    def wait(self) -> bool:
        """Sleep the next pause and return ``True``, or return ``False`` (without sleeping) once the cap is
        reached."""
        if self.waited >= BUSY_RETRY_CAP_S:
            return False
        pause = self.delay * (0.5 + random.random())
        time.sleep(pause)
        self.waited += pause
        self.delay = min(self.delay * 2, 2.0)
        return True


class _Repo(Protocol):
    git_dir: Path
    common_dir: Path


class IndexDB:
    """One apsw connection over ``index.db`` (``main``) with ``state.db`` attached as ``state``.

    Construct with :func:`open_index` or :meth:`for_repo`. Not thread-safe; one per process/command.
    """

    def __init__(self, conn: apsw.Connection, index_path: str, state_path: str) -> None:
        self._conn = conn
        self.index_path = index_path
        self.state_path = state_path
        self._depth = 0
        self._sp = 0
        self.recovered_from: Path | None = None
        self.read_only: str | None = None
        """Why the index was opened read-only (it cannot be written: a read-only git dir), else ``None``."""

    @classmethod
    def for_repo(cls, repo: _Repo, *, recover: bool = False) -> IndexDB:
        """Open the index of ``repo``: ``<git_dir>/memhtml/index.db`` + ``<common_dir>/memhtml/state.db``.

        With ``recover``, an ``index.db`` that fails to open and fails SQLite's ``quick_check`` (or is not SQLite
        at all) is moved aside to ``index.db.corrupt`` and a fresh, empty index is opened in its place — it is a
        rebuildable cache (docs/design.md §3.2); the next update re-projects the tree. ``recovered_from`` then names the
        quarantined file. ``state.db`` is never moved: it is not rebuildable.

        Raises:
            StorageError: the folders cannot be created or the databases cannot be opened/migrated.
        """
        index_path = Path(repo.git_dir) / "memhtml" / "index.db"
        state_path = Path(repo.common_dir) / "memhtml" / "state.db"
        try:
            index_path.parent.mkdir(parents=True, exist_ok=True)
            state_path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise storage_error(exc, f"cannot create {index_path.parent}") from exc
        try:
            return _open_waiting(index_path, state_path)
        except StorageError as exc:
            if not recover or not index_path.exists():
                raise
            if not damaged(index_path):
                return _open_read_only(index_path, state_path, reason=exc)
        try:
            quarantined = quarantine(index_path)
        except OSError as exc:
            raise storage_error(exc, f"the index {index_path} is corrupt and cannot be moved aside",
                        hint=f"make {index_path.parent} writable, then run `git memhtml index rebuild`") from exc
        db = open_index(index_path, state_path)
        db.recovered_from = quarantined
        return db

    # -- statements -------------------------------------------------------------------------------------------

    def query(self, sql: str, params: Params = None) -> list[tuple[Any, ...]]:
        """Run one read statement → every row as a tuple. Raises ``StorageError``."""
        try:
            return [tuple(row) for row in self._conn.execute(sql, params)]
        except apsw.Error as exc:
            raise storage_error(exc, "index query failed") from exc

    def query_one(self, sql: str, params: Params = None) -> tuple[Any, ...] | None:
        """Run one read statement → its first row, or ``None``. Raises ``StorageError``."""
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def execute(self, sql: str, params: Params = None) -> int:
        """Run one write statement (or a parameterless script) → rows changed. Raises ``StorageError``."""
        try:
            self._conn.execute(sql, params).fetchall()
            return int(self._conn.changes())
        except apsw.Error as exc:
            raise storage_error(exc, "index write failed") from exc

    def executemany(self, sql: str, seq: Sequence[Params]) -> None:
        """Run one write statement per parameter row. Raises ``StorageError``."""
        if not seq:
            return
        try:
            self._conn.executemany(sql, seq).fetchall()  # type: ignore[arg-type]
        except apsw.Error as exc:
            raise storage_error(exc, "index write failed") from exc

    def change_stamp(self) -> tuple[int, int, int]:
        """``(PRAGMA main.data_version, PRAGMA state.data_version, total changes of this connection)``: differs
        after any commit to ``index.db`` or ``state.db`` by another connection, or any row this connection changed,
        since an earlier call. Cheap (no table is read); a copy held in memory compares it to know it is still
        current. Raises ``StorageError``."""
        try:
            main = self._conn.execute("PRAGMA main.data_version").fetchall()[0][0]
            state = self._conn.execute("PRAGMA state.data_version").fetchall()[0][0]
            return int(str(main)), int(str(state)), int(self._conn.total_changes())
        except apsw.Error as exc:
            raise storage_error(exc, "cannot read the index's data version") from exc

    def set_busy_timeout(self, ms: int) -> None:
        """Wait up to ``ms`` milliseconds for a lock before SQLITE_BUSY (replaces ``connection.BUSY_TIMEOUT_MS``
        for this connection). Raises ``StorageError``."""
        try:
            self._conn.setbusytimeout(ms)
        except apsw.Error as exc:
            raise storage_error(exc, "cannot set the index busy timeout") from exc

    # -- transactions -----------------------------------------------------------------------------------------

    def _begin_immediate(self) -> None:
        backoff = _Backoff()
        while True:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                return
            except apsw.BusyError as exc:
                if not backoff.wait():
                    raise storage_error(exc, "the index is locked by another writer",
                                        hint="wait for the other git-memhtml command to finish and retry") from exc
            except apsw.Error as exc:
                raise storage_error(exc, "cannot begin an index transaction") from exc

    def _rollback_quietly(self) -> None:
        """``ROLLBACK``, ignoring a failure (no transaction left open, or the connection broke): the error being
        handled is the one to report."""
        with suppress(apsw.Error):
            self._conn.execute("ROLLBACK")

    @contextmanager
    def read_snapshot(self) -> Iterator[None]:
        """Every read inside sees one snapshot of both planes: a deferred transaction, whose first read pins the WAL
        snapshot, so commits by other connections (a hook's index update) stay invisible until the block ends. Read
        only: nothing may be written inside. Inside a transaction already, it adds nothing. Raises ``StorageError``.
        """
        if self._depth > 0 or not self._conn.getautocommit():
            yield
            return
        try:
            self._conn.execute("BEGIN DEFERRED")
        except apsw.Error as exc:
            raise storage_error(exc, "cannot begin a read snapshot of the index") from exc
        try:
            yield
        finally:
            self._rollback_quietly()

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """All-or-nothing block. The outermost level is ``BEGIN IMMEDIATE … COMMIT``; nested levels are savepoints
        (an exception rolls back only the inner level, then propagates). Raises ``StorageError``."""
        if self._depth == 0:
            self._begin_immediate()
            self._depth = 1
            try:
                yield
            except BaseException:
                self._depth = 0
                self._rollback_quietly()
                raise
            self._depth = 0
            try:
                self._conn.execute("COMMIT")
            except apsw.Error as exc:
                self._rollback_quietly()
                raise storage_error(exc, "index commit failed") from exc
            return
        self._sp += 1
        name = f"sp_{self._sp}"
        self._conn.execute(f"SAVEPOINT {name}")
        self._depth += 1
        try:
            yield
        except BaseException:
            self._conn.execute(f"ROLLBACK TO {name}")
            self._conn.execute(f"RELEASE {name}")
            raise
        finally:
            self._depth -= 1
        self._conn.execute(f"RELEASE {name}")

    def copy_index_to(self, path: Path) -> None:
        """Write a consistent copy of the index plane (``main``, not ``state``) to a new database file ``path``.

        Uses SQLite's online backup, so a WAL-mode source is copied whole. Raises ``StorageError``.
        """
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            target = apsw.Connection(str(path))
            try:
                with target.backup("main", self._conn, "main") as backup:
                    backup.step()
                # a copy is another index: its own token, so no vector matrix of the source is trusted for it
                target.execute("UPDATE vector_state SET token = lower(hex(randomblob(16)))")
            finally:
                target.close()
        except (apsw.Error, OSError) as exc:
            raise storage_error(exc, f"cannot copy the index to {path}") from exc

    def close(self) -> None:
        """Close the connection (idempotent)."""
        try:
            self._conn.close()
        except apsw.Error as exc:
            raise storage_error(exc, "cannot close the index") from exc

    def __enter__(self) -> IndexDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- migrations -------------------------------------------------------------------------------------------

    def _migrate(self, schema: str) -> None:
        self._conn.execute(
            f"CREATE TABLE IF NOT EXISTS {schema}.schema_migrations"
            "(version TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        for name, sql in migration_files(schema):
            if self._conn.execute(f"SELECT 1 FROM {schema}.schema_migrations WHERE version = ?", (name,)).fetchall():
                continue
            with self.atomic():
                # Re-check inside the write lock: another process may have applied it meanwhile.
                if self._conn.execute(
                    f"SELECT 1 FROM {schema}.schema_migrations WHERE version = ?", (name,)
                ).fetchall():
                    continue
                self._conn.execute(sql)
                self._conn.execute(
                    f"INSERT INTO {schema}.schema_migrations(version, applied_at) "
                    "VALUES (?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                    (name,),
                )

    def applied_migrations(self, schema: str = "main") -> list[str]:
        """Return the ledger of ``schema`` (``main`` or ``state``) in filename order."""
        return [r[0] for r in self.query(f"SELECT version FROM {schema}.schema_migrations ORDER BY version")]


def _open_waiting(index_path: Path, state_path: Path) -> IndexDB:
    """:func:`open_index`, retried with the jittered backoff of ``BEGIN IMMEDIATE`` (:data:`BUSY_RETRY_CAP_S` in
    all) while it fails only because another connection holds a lock. Many writers starting at once on a new
    repository all migrate; one that gives up after ``connection.BUSY_TIMEOUT_MS`` must wait again, not be taken
    for a read-only index (whose last checkpointed file may predate the migrations, which are still in the WAL).

    Raises:
        StorageError: the open failed for another reason, or stayed busy past the cap.
    """
    backoff = _Backoff()
    while True:
        try:
            return open_index(index_path, state_path)
        except StorageError as exc:
            if not busy(exc) or not backoff.wait():
                raise


def _open_read_only(index_path: Path, state_path: Path, *, reason: StorageError) -> IndexDB:
    """Open a healthy index that cannot be written (``connection.connect_read_only``). No migration runs;
    ``read_only`` holds the reason. Pending migrations are refused (an old schema cannot be served).

    Raises:
        StorageError: the original open failure, when even a read-only open fails or the schema is behind.
    """
    try:
        conn = connect_read_only(index_path, state_path)
    except apsw.Error as last:
        raise reason from last
    if pending(conn, "main") or pending(conn, "state"):
        conn.close()
        raise StorageError(
            f"the index {index_path} cannot be written and its schema is older than this version",
            hint=f"make {index_path.parent} writable once so it can migrate, or run from a writable clone",
        ) from reason
    db = IndexDB(conn, str(index_path), str(state_path))
    cause = reason.__cause__
    db.read_only = f"{type(cause).__name__}: {cause}" if cause is not None else reason.message
    return db


def open_index(index_path: str | Path, state_path: str | Path) -> IndexDB:
    """Open (creating and migrating as needed) the index at ``index_path`` with ``state_path`` attached
    (``connection.connect``).

    ``":memory:"`` is accepted for either path (tests, the evaluation harness).

    Raises:
        StorageError: the file is unreadable or corrupt (hint: delete it and run ``git memhtml index rebuild``),
            sqlite-vec cannot load, or a migration fails.
    """
    index_s, state_s = str(index_path), str(state_path)
    conn = connect(index_s, state_s)
    with closed_on_error(conn):
        db = IndexDB(conn, index_s, state_s)
        try:
            db._migrate("main")
            db._migrate("state")
        except apsw.Error as exc:
            raise storage_error(exc, "index migration failed", hint=REBUILD_HINT.format(path=index_s)) from exc
    return db
