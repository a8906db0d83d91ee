"""The SQLite connection of the index: the only module that imports apsw and sqlite_vec (docs/index.md §3.1).

``main`` is the per-worktree, rebuildable ``index.db``; ``state`` is the shared, non-rebuildable ``state.db``
attached to the same connection. Both run in WAL mode with ``synchronous=NORMAL``, foreign keys on and a 5 s busy
timeout. Migrations are the package's ``index/migrations/*.sql`` (ledger ``main.schema_migrations``) and
``index/state_migrations/*.sql`` (ledger ``state.schema_migrations``), each file applied with its ledger row in one
``BEGIN IMMEDIATE`` transaction, in filename order.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import apsw
import numpy as np
import sqlite_vec

from git_memhtml.domain.entities import entity_key
from git_memhtml.errors import StorageError

BUSY_TIMEOUT_MS = 5000
"""SQLite busy timeout (docs/index.md §3.1)."""
BUSY_RETRY_FIRST_S = 0.015
BUSY_RETRY_CAP_S = 20.0
"""Jittered exponential retry of ``BEGIN IMMEDIATE`` on SQLITE_BUSY, 15 ms doubling up to 20 s in total (docs/index.md
§3.1)."""
REBUILD_HINT = "delete {path} and run `git memhtml index rebuild`"

Params = Sequence[Any] | dict[str, Any] | None
"""Positional (``?``/``?N``) or named parameters."""


class _Repo(Protocol):
    git_dir: Path
    common_dir: Path


def library_versions() -> str:
    """Return ``sqlite X (apsw Y), sqlite-vec Z`` for crash reports."""
    return f"sqlite {apsw.sqlite_lib_version()} (apsw {apsw.apsw_version()}), sqlite-vec {sqlite_vec.__version__}"


def _wrap(exc: BaseException, what: str, *, hint: str | None = None) -> StorageError:
    return StorageError(
        f"{what}: {type(exc).__name__}: {exc}",
        hint=hint or "check the disk and permissions of the git dir, or run `git memhtml index rebuild`",
    )


def vector_distance_cos(a: object, b: object) -> float | None:
    """``1 − cosine(a, b)`` over float32-LE blobs, clamped to [0, 2] (docs/index.md §3.1).

    Returns ``None`` when either input is not a blob, the lengths differ or are not a multiple of 4, or the
    result is not finite. A zero-norm vector has cosine 0 (distance 1).
    """
    if not isinstance(a, bytes | bytearray | memoryview) or not isinstance(b, bytes | bytearray | memoryview):
        return None
    if len(a) != len(b) or len(a) == 0 or len(a) % 4:
        return None
    va = np.frombuffer(a, dtype="<f4").astype(np.float64)
    vb = np.frombuffer(b, dtype="<f4").astype(np.float64)
    na = float(np.linalg.norm(va))
    nb = float(np.linalg.norm(vb))
    if not (np.isfinite(na) and np.isfinite(nb)):
        return None
    cos = 0.0 if na == 0.0 or nb == 0.0 else float(va @ vb) / (na * nb)
    if not np.isfinite(cos):
        return None
    return min(2.0, max(0.0, 1.0 - cos))


def _migration_files(package: str) -> list[tuple[str, str]]:
    """Return ``(filename, sql)`` of every ``*.sql`` in ``git_memhtml.index.<package>``, filename order."""
    root = resources.files("git_memhtml.index").joinpath(package)
    files = [(p.name, p.read_text(encoding="utf-8")) for p in root.iterdir() if p.name.endswith(".sql")]
    return sorted(files)


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
            raise _wrap(exc, f"cannot create {index_path.parent}") from exc
        try:
            return _open_waiting(index_path, state_path)
        except StorageError as exc:
            if not recover or not index_path.exists():
                raise
            if not _damaged(index_path):
                return _open_read_only(index_path, state_path, reason=exc)
        try:
            quarantined = _quarantine(index_path)
        except OSError as exc:
            raise _wrap(exc, f"the index {index_path} is corrupt and cannot be moved aside",
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
            raise _wrap(exc, "index query failed") from exc

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
            raise _wrap(exc, "index write failed") from exc

    def executemany(self, sql: str, seq: Sequence[Params]) -> None:
        """Run one write statement per parameter row. Raises ``StorageError``."""
        if not seq:
            return
        try:
            self._conn.executemany(sql, seq).fetchall()  # type: ignore[arg-type]
        except apsw.Error as exc:
            raise _wrap(exc, "index write failed") from exc

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
            raise _wrap(exc, "cannot read the index's data version") from exc

    def set_busy_timeout(self, ms: int) -> None:
        """Wait up to ``ms`` milliseconds for a lock before SQLITE_BUSY (replaces :data:`BUSY_TIMEOUT_MS` for this
        connection). Raises ``StorageError``."""
        try:
            self._conn.setbusytimeout(ms)
        except apsw.Error as exc:
            raise _wrap(exc, "cannot set the index busy timeout") from exc

    # -- transactions -----------------------------------------------------------------------------------------

    def _begin_immediate(self) -> None:
        delay = BUSY_RETRY_FIRST_S
        waited = 0.0
        while True:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                return
            except apsw.BusyError as exc:
                if waited >= BUSY_RETRY_CAP_S:
                    raise _wrap(exc, "the index is locked by another writer",
                                hint="wait for the other git-memhtml command to finish and retry") from exc
                pause = delay * (0.5 + random.random())
                time.sleep(pause)
                waited += pause
                delay = min(delay * 2, 2.0)
            except apsw.Error as exc:
                raise _wrap(exc, "cannot begin an index transaction") from exc

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
            raise _wrap(exc, "cannot begin a read snapshot of the index") from exc
        try:
            yield
        finally:
            try:
                self._conn.execute("ROLLBACK")
            except apsw.Error:
                pass

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
                try:
                    self._conn.execute("ROLLBACK")
                except apsw.Error:
                    pass
                raise
            self._depth = 0
            try:
                self._conn.execute("COMMIT")
            except apsw.Error as exc:
                try:
                    self._conn.execute("ROLLBACK")
                except apsw.Error:
                    pass
                raise _wrap(exc, "index commit failed") from exc
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
            raise _wrap(exc, f"cannot copy the index to {path}") from exc

    def close(self) -> None:
        """Close the connection (idempotent)."""
        try:
            self._conn.close()
        except apsw.Error as exc:
            raise _wrap(exc, "cannot close the index") from exc

    def __enter__(self) -> IndexDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- migrations -------------------------------------------------------------------------------------------

    def _migrate(self, schema: str, package: str) -> None:
        self._conn.execute(
            f"CREATE TABLE IF NOT EXISTS {schema}.schema_migrations"
            "(version TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        for name, sql in _migration_files(package):
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


def _uri(path: Path, mode: str) -> str:
    """A SQLite URI for ``path`` opened ``mode`` (``"ro"``, or ``"immutable"``: no locks, no -shm, no WAL)."""
    query = "immutable=1" if mode == "immutable" else "mode=ro"
    return f"{path.resolve().as_uri()}?{query}"


def _damaged(index_path: Path) -> bool:
    """Whether ``index_path`` is damaged: not SQLite, or ``PRAGMA quick_check`` fails.

    Read through an ``immutable`` URI, which needs neither a write lock nor a ``-shm`` file, so an index that merely
    cannot be written (a read-only git dir, another user's files) is never mistaken for a corrupt one. Failing to
    open or read at all (permissions, busy, locked) is not damage either: only SQLite's corruption verdicts are.
    """
    try:
        conn = apsw.Connection(_uri(index_path, "immutable"), flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        try:
            rows = conn.execute("PRAGMA quick_check").fetchall()
        finally:
            conn.close()
    except (apsw.CorruptError, apsw.NotADBError):
        return True
    except apsw.Error:
        return False  # cannot open or read (busy, locked, permissions): not evidence of damage
    return rows != [("ok",)]


def _busy(exc: StorageError) -> bool:
    """The open failed only because another connection held a lock (not a permission or a damaged file)."""
    return isinstance(exc.__cause__, (apsw.BusyError, apsw.LockedError))


def _open_waiting(index_path: Path, state_path: Path) -> IndexDB:
    """:func:`open_index`, retried with the jittered backoff of ``BEGIN IMMEDIATE`` (:data:`BUSY_RETRY_CAP_S` in
    all) while it fails only because another connection holds a lock. Many writers starting at once on a new
    repository all migrate; one that gives up after :data:`BUSY_TIMEOUT_MS` must wait again, not be taken for a
    read-only index (whose last checkpointed file may predate the migrations, which are still in the WAL).

    Raises:
        StorageError: the open failed for another reason, or stayed busy past the cap.
    """
    delay, waited = BUSY_RETRY_FIRST_S, 0.0
    while True:
        try:
            return open_index(index_path, state_path)
        except StorageError as exc:
            if not _busy(exc) or waited >= BUSY_RETRY_CAP_S:
                raise
        pause = delay * (0.5 + random.random())
        time.sleep(pause)
        waited += pause
        delay = min(delay * 2, 2.0)


def _open_read_only(index_path: Path, state_path: Path, *, reason: StorageError) -> IndexDB:
    """Open a healthy index that cannot be written: ``mode=ro`` (sees the WAL), else ``immutable`` (the main file
    as last checkpointed), with ``state.db`` attached the same way. No migration runs; ``read_only`` holds the
    reason. Pending migrations are refused (an old schema cannot be served).

    Raises:
        StorageError: the original open failure, when even a read-only open fails or the schema is behind.
    """
    last: apsw.Error | None = None
    for mode in ("ro", "immutable"):
        try:
            conn = apsw.Connection(_uri(index_path, mode), flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        except apsw.Error as exc:
            last = exc
            continue
        try:
            conn.setbusytimeout(BUSY_TIMEOUT_MS)
            conn.execute("SELECT count(*) FROM main.sqlite_schema").fetchall()
            state_uri = _uri(state_path, mode) if state_path.exists() else "file::memory:"
            conn.execute("ATTACH DATABASE ? AS state", (state_uri,))
            conn.execute("SELECT count(*) FROM state.sqlite_schema").fetchall()
            conn.execute("PRAGMA foreign_keys=ON")
            conn.enable_load_extension(True)
            conn.load_extension(sqlite_vec.loadable_path())
            conn.enable_load_extension(False)
            conn.create_scalar_function(
                "vector_distance_cos", vector_distance_cos, 2, deterministic=True  # type: ignore[arg-type]
            )
        except apsw.Error as exc:
            last = exc
            conn.close()
            continue
        db = IndexDB(conn, str(index_path), str(state_path))
        if _pending(db, "main", "migrations") or _pending(db, "state", "state_migrations"):
            conn.close()
            raise StorageError(
                f"the index {index_path} cannot be written and its schema is older than this version",
                hint=f"make {index_path.parent} writable once so it can migrate, or run from a writable clone",
            ) from reason
        cause = reason.__cause__
        db.read_only = f"{type(cause).__name__}: {cause}" if cause is not None else reason.message
        return db
    raise reason from last


def _pending(db: IndexDB, schema: str, package: str) -> bool:
    """Whether a migration of ``package`` is missing from ``schema``'s ledger (or the ledger is missing)."""
    try:
        applied = {row[0] for row in db._conn.execute(f"SELECT version FROM {schema}.schema_migrations")}
    except apsw.Error:
        return True
    return any(name not in applied for name, _ in _migration_files(package))


def _quarantine(index_path: Path) -> Path:
    """Move ``index.db`` and its WAL/SHM files to ``index.db.corrupt[-wal|-shm]``; return the new main path."""
    target = Path(str(index_path) + ".corrupt")
    for suffix in ("", "-wal", "-shm"):
        part = Path(str(index_path) + suffix)
        if part.exists():
            os.replace(part, Path(str(target) + suffix))
    return target


def open_index(index_path: str | Path, state_path: str | Path) -> IndexDB:
    """Open (creating and migrating as needed) the index at ``index_path`` with ``state_path`` attached.

    ``":memory:"`` is accepted for either path (tests, the evaluation harness).

    Raises:
        StorageError: the file is unreadable or corrupt (hint: delete it and run ``git memhtml index rebuild``),
            sqlite-vec cannot load, or a migration fails.
    """
    index_s, state_s = str(index_path), str(state_path)
    try:
        conn = apsw.Connection(index_s)
    except apsw.Error as exc:
        raise _wrap(exc, f"cannot open the index {index_s}", hint=REBUILD_HINT.format(path=index_s)) from exc
    try:
        conn.setbusytimeout(BUSY_TIMEOUT_MS)
        try:
            conn.execute("PRAGMA main.journal_mode=WAL").fetchall()
            conn.execute("SELECT count(*) FROM main.sqlite_schema").fetchall()
        except apsw.Error as exc:
            raise _wrap(exc, f"the index {index_s} is unreadable or corrupt",
                        hint=REBUILD_HINT.format(path=index_s)) from exc
        try:
            conn.execute("ATTACH DATABASE ? AS state", (state_s,))
            conn.execute("PRAGMA state.journal_mode=WAL").fetchall()
            conn.execute("SELECT count(*) FROM state.sqlite_schema").fetchall()
        except apsw.Error as exc:
            raise _wrap(exc, f"the state database {state_s} is unreadable",
                        hint=f"restore {state_s} from a backup, or move it aside: the next command starts an empty "
                             "state plane (access counts and run rows are lost; git memhtml doctor lists stale runs)"
                        ) from exc
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        try:
            conn.enable_load_extension(True)
            conn.load_extension(sqlite_vec.loadable_path())
            conn.enable_load_extension(False)
        except apsw.Error as exc:
            raise _wrap(exc, "cannot load sqlite-vec",
                        hint="reinstall the sqlite-vec package: `pip install --force-reinstall sqlite-vec`") from exc
        conn.create_scalar_function(
            "vector_distance_cos", vector_distance_cos, 2, deterministic=True  # type: ignore[arg-type]
        )
        conn.create_scalar_function(  # migration 0010 backfills file_entities.entity_key through it
            "memhtml_entity_key", entity_key, 1, deterministic=True  # type: ignore[arg-type]
        )
        db = IndexDB(conn, index_s, state_s)
        try:
            db._migrate("main", "migrations")
            db._migrate("state", "state_migrations")
        except apsw.Error as exc:
            raise _wrap(exc, "index migration failed", hint=REBUILD_HINT.format(path=index_s)) from exc
    except BaseException:
        try:
            conn.close()
        except apsw.Error:
            pass
        raise
    return db
