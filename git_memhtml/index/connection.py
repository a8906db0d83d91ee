"""Opening the apsw connection under the index, in each of its modes (docs/index.md §3.1): with ``index/db.py``, the
only module that imports apsw and sqlite_vec.

:func:`connect` opens ``index.db`` writable (WAL, ``synchronous=NORMAL``, foreign keys, the busy timeout, sqlite-vec
and our SQL functions) with ``state.db`` attached as ``state``; :func:`connect_read_only` opens a healthy index that
cannot be written; :func:`damaged` and :func:`quarantine` tell a corrupt file from an unwritable one and move a
corrupt one aside. None of them runs a migration nor builds an ``IndexDB``: ``index/db.py`` does both.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import apsw
import numpy as np

from git_memhtml.domain.entities import entity_key
from git_memhtml.errors import StorageError

BUSY_TIMEOUT_MS = 5000
"""SQLite busy timeout (docs/index.md §3.1)."""
REBUILD_HINT = "delete {path} and run `git memhtml index rebuild`"
MIGRATION_PACKAGES = {"main": "migrations", "state": "state_migrations"}
"""Schema → the folder of ``git_memhtml.index`` holding its ``*.sql`` migrations (docs/index.md §3.1)."""


def library_versions() -> str:
    """Return ``sqlite X (apsw Y), sqlite-vec Z`` for crash reports."""
    import sqlite_vec  # noqa: PLC0415 - only a report needs its version

    return f"sqlite {apsw.sqlite_lib_version()} (apsw {apsw.apsw_version()}), sqlite-vec {sqlite_vec.__version__}"


def sqlite_vec_path() -> str:
    """The sqlite-vec loadable extension (``<sqlite_vec package>/vec0``, SQLite adds the suffix), found without
    importing the package: its ``__init__`` imports ``sqlite3`` and ``numpy.typing``, ~5 ms of every start, for a
    path (the same one as ``sqlite_vec.loadable_path()``, by test).

    Raises:
        StorageError: sqlite-vec is not installed.
    """
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or spec.origin is None:
        raise StorageError("sqlite-vec is not installed", hint="pip install sqlite-vec")
    return os.path.normpath(os.path.join(os.path.dirname(spec.origin), "vec0"))


def storage_error(exc: BaseException, what: str, *, hint: str | None = None) -> StorageError:
    """The :class:`StorageError` for ``exc`` (an apsw or OS error) while doing ``what``; the default hint names the
    git dir's disk and permissions, or a rebuild."""
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


def migration_names(schema: str) -> list[str]:
    """The file names of every ``*.sql`` migration of ``schema`` (:data:`MIGRATION_PACKAGES`), in order: one
    directory listing, no file read (every open checks the ledger against it). The folder is found beside this
    module: the package is always installed as files (a wheel or an editable install; a zip import is not
    supported), and ``importlib.resources`` would cost its own import on every start."""
    folder = Path(__file__).parent / MIGRATION_PACKAGES[schema]
    return sorted(name for name in os.listdir(folder) if name.endswith(".sql"))


def migration_files(schema: str) -> list[tuple[str, str]]:
    """Return ``(filename, sql)`` of every ``*.sql`` migration of ``schema`` (:data:`MIGRATION_PACKAGES`), filename
    order."""
    folder = Path(__file__).parent / MIGRATION_PACKAGES[schema]
    return [(name, (folder / name).read_text(encoding="utf-8")) for name in migration_names(schema)]


def pending(conn: apsw.Connection, schema: str) -> bool:
    """Whether a migration of ``schema`` is missing from its ledger on ``conn`` (or the ledger is missing)."""
    try:
        applied = {row[0] for row in conn.execute(f"SELECT version FROM {schema}.schema_migrations")}
    except apsw.Error:
        return True
    return any(name not in applied for name in migration_names(schema))


@contextmanager
def closed_on_error(conn: apsw.Connection) -> Iterator[None]:
    """Close ``conn`` when the block raises (anything, even ``KeyboardInterrupt``), then re-raise; a failing close
    is ignored so the original error stands."""
    try:
        yield
    except BaseException:
        with suppress(apsw.Error):
            conn.close()
        raise


def _uri(path: Path, mode: str) -> str:
    """A SQLite URI for ``path`` opened ``mode`` (``"ro"``, or ``"immutable"``: no locks, no -shm, no WAL)."""
    query = "immutable=1" if mode == "immutable" else "mode=ro"
    return f"{path.resolve().as_uri()}?{query}"


def _load_functions(conn: apsw.Connection) -> None:
    """Load sqlite-vec into ``conn`` and register ``vector_distance_cos``. Raises ``apsw.Error``."""
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec_path())
    conn.enable_load_extension(False)
    conn.create_scalar_function(
        "vector_distance_cos", vector_distance_cos, 2, deterministic=True  # type: ignore[arg-type]
    )


def damaged(index_path: Path) -> bool:
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


def busy(exc: StorageError) -> bool:
    """The open failed only because another connection held a lock (not a permission or a damaged file)."""
    return isinstance(exc.__cause__, (apsw.BusyError, apsw.LockedError))


def quarantine(index_path: Path) -> Path:
    """Move ``index.db`` and its WAL/SHM files to ``index.db.corrupt[-wal|-shm]``; return the new main path.
    Raises ``OSError``."""
    target = Path(str(index_path) + ".corrupt")
    for suffix in ("", "-wal", "-shm"):
        part = Path(str(index_path) + suffix)
        if part.exists():
            os.replace(part, Path(str(target) + suffix))
    return target


def connect_read_only(index_path: Path, state_path: Path) -> apsw.Connection:
    """Open ``index_path`` read-only: ``mode=ro`` (sees the WAL), else ``immutable`` (the main file as last
    checkpointed), with ``state.db`` attached the same way (an empty in-memory ``state`` when it is missing),
    sqlite-vec and ``vector_distance_cos`` loaded.

    Raises:
        apsw.Error: neither mode opens (the ``immutable`` attempt's error, the ``ro`` one's as its context).
    """
    try:
        return _connect_in(index_path, state_path, "ro")
    except apsw.Error:
        return _connect_in(index_path, state_path, "immutable")


def _connect_in(index_path: Path, state_path: Path, mode: str) -> apsw.Connection:
    """One read-only open of :func:`connect_read_only` in ``mode``. Raises ``apsw.Error``."""
    conn = apsw.Connection(_uri(index_path, mode), flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    with closed_on_error(conn):
        conn.setbusytimeout(BUSY_TIMEOUT_MS)
        conn.execute("SELECT count(*) FROM main.sqlite_schema").fetchall()
        state_uri = _uri(state_path, mode) if state_path.exists() else "file::memory:"
        conn.execute("ATTACH DATABASE ? AS state", (state_uri,))
        conn.execute("SELECT count(*) FROM state.sqlite_schema").fetchall()
        conn.execute("PRAGMA foreign_keys=ON")
        _load_functions(conn)
    return conn


def _stub_flag(title: str, body_text: str, joined: str | None) -> int:
    """``memhtml_stub``: :func:`git_memhtml.index.project.stub_flag_sql`, imported on the first call (only migration
    0015 calls it, so an ordinary open never loads the projection)."""
    from git_memhtml.index.project import stub_flag_sql  # noqa: PLC0415 - migration-only

    return stub_flag_sql(title, body_text, joined)


def connect(index_s: str, state_s: str) -> apsw.Connection:
    """Open ``index_s`` writable with ``state_s`` attached as ``state`` (``":memory:"`` for either is accepted):
    both in WAL mode, ``synchronous=NORMAL``, foreign keys on, :data:`BUSY_TIMEOUT_MS`, sqlite-vec,
    ``vector_distance_cos``, ``memhtml_entity_key`` (migration 0010 backfills ``file_entities.entity_key``
    through it) and ``memhtml_stub`` (migration 0015 backfills ``files.stub``). No migration runs.

    Raises:
        StorageError: the file is unreadable or corrupt (hint: delete it and run ``git memhtml index rebuild``),
            the state database is unreadable, or sqlite-vec cannot load.
    """
    try:
        conn = apsw.Connection(index_s)
    except apsw.Error as exc:
        raise storage_error(exc, f"cannot open the index {index_s}", hint=REBUILD_HINT.format(path=index_s)) from exc
    with closed_on_error(conn):
        conn.setbusytimeout(BUSY_TIMEOUT_MS)
        try:
            conn.execute("PRAGMA main.journal_mode=WAL").fetchall()
            conn.execute("SELECT count(*) FROM main.sqlite_schema").fetchall()
        except apsw.Error as exc:
            raise storage_error(exc, f"the index {index_s} is unreadable or corrupt",
                                hint=REBUILD_HINT.format(path=index_s)) from exc
        try:
            conn.execute("ATTACH DATABASE ? AS state", (state_s,))
            conn.execute("PRAGMA state.journal_mode=WAL").fetchall()
            conn.execute("SELECT count(*) FROM state.sqlite_schema").fetchall()
        except apsw.Error as exc:
            raise storage_error(
                exc, f"the state database {state_s} is unreadable",
                hint=f"restore {state_s} from a backup, or move it aside: the next command starts an empty state "
                     "plane (access counts and run rows are lost; git memhtml doctor lists stale runs)") from exc
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        try:
            _load_functions(conn)
        except apsw.Error as exc:
            raise storage_error(exc, "cannot load sqlite-vec",
                                hint="reinstall the sqlite-vec package: `pip install --force-reinstall sqlite-vec`"
                                ) from exc
        conn.create_scalar_function(  # migration 0010 backfills file_entities.entity_key through it
            "memhtml_entity_key", entity_key, 1, deterministic=True  # type: ignore[arg-type]
        )
        conn.create_scalar_function(  # migration 0015 backfills files.stub through it
            "memhtml_stub", _stub_flag, 3, deterministic=True  # type: ignore[arg-type]
        )
    return conn
