"""The persistent vector matrix: every chunk vector of the index's space in one memory-mapped float32 file,
``<git-dir>/memhtml/vectors.f32``, ranked exactly like the SQL arm (docs/index.md §3.12, docs/retrieval.md §4.12).

Layout (little-endian): a :data:`HEADER_BYTES` header, then ``capacity`` rows of ``dim + 2`` float32 — the stored
vector, then ``1/‖v‖`` (NaN for a row :func:`resident._regular` calls irregular: zero, non-finite, extreme), then
sqlite-vec's float32 ``Σ v_i²`` (:func:`resident.squared_norms_f32`, what the exact re-scoring needs). Row
``i`` is slot ``i`` of ``vector_slots`` (migration 0011); a slot with no live vector of the space is never read, since
the slot → path mapping comes from SQL at query time under the scope filter (a mask over the rows).

The header names the index (``vector_state.token``), the generation it reflects (``vector_state.seq``), the space,
``dim``, ``capacity``, a state (clean / dirty) and a CRC-32 of those fields. It is trusted only when the magic, the
CRC, the state, the token, the space, the dim and the file length all check out and its ``seq`` equals the index's:
anything else is stale or torn and is rebuilt, never read. An incremental sync marks the header dirty, rewrites the
changed rows in place, then writes the new ``seq`` and clean; a kill -9 in between leaves it dirty (rebuilt next
time). A full build writes a new file beside it and renames it over the old one. A reader checks the header before
and after its scan (a sequence lock), so a sync that runs meanwhile makes it fall back to SQL, never mix two states.
The path is opened with ``O_NOFOLLOW``: a symlink there is never read nor written through (a full build replaces it).
"""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import os
import stat
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from git_memhtml.index.db import IndexDB
from git_memhtml.index.resident import (
    LOAD_BLOCK_ROWS,
    _cached,
    _regular,
    distance_error_bound,
    sqlite_vec_cosine,
    squared_norms_f32,
)
from git_memhtml.index.retrieval_sql import ARM_LIMIT, Scope, scope_sql

MATRIX_NAME = "vectors.f32"
LOCK_NAME = "vectors.lock"
"""File names beside ``index.db`` (our decision, docs/index.md §3.12)."""
MAGIC = b"MHVEC\x00\x01\x00"
HEADER_BYTES = 4096
"""Header size: one page, so the rows start page-aligned."""
_FIELDS = struct.Struct("<8sIIQQ32sH")
"""magic, state, dim, capacity, seq, token (32 ASCII hex), space length; the space follows, then the CRC."""
SPACE_MAX = 1024
"""Longest space name stored (bytes of UTF-8)."""
CLEAN, DIRTY = 1, 2
HEADROOM = 1.25
SLACK_ROWS = 1024
"""A full build sizes the file at ``HEADROOM × (highest slot + 1) + SLACK_ROWS`` rows, so new slots land in place
until the index grows by a quarter (our decision)."""
FULL_FRACTION = 0.25
"""An incremental sync that would rewrite more than this fraction of the rows rebuilds the file instead (one
sequential write beats scattered ones; our decision)."""
EXTRA = 2
"""Float32 columns after the vector: ``1/‖v‖`` and ``Σ v_i²``."""
F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Header:
    """A parsed header (see the module docstring)."""

    state: int
    dim: int
    capacity: int
    seq: int
    token: str
    space: str

    def pack(self) -> bytes:
        space = self.space.encode("utf-8")
        body = _FIELDS.pack(MAGIC, self.state, self.dim, self.capacity, self.seq, self.token.encode("ascii"),
                            len(space)) + space
        return body + struct.pack("<I", zlib.crc32(body))


def _unpack(raw: bytes) -> Header | None:
    """The header in ``raw`` (the file's first bytes), or ``None`` when the magic, a length or the CRC is wrong."""
    if len(raw) < _FIELDS.size + 4:
        return None
    magic, state, dim, capacity, seq, token, length = _FIELDS.unpack_from(raw)
    end = _FIELDS.size + length
    if magic != MAGIC or length > SPACE_MAX or end + 4 > len(raw) or end + 4 > HEADER_BYTES:
        return None
    (crc,) = struct.unpack_from("<I", raw, end)
    if crc != zlib.crc32(raw[:end]):
        return None
    try:
        return Header(int(state), int(dim), int(capacity), int(seq), token.decode("ascii"),
                      raw[_FIELDS.size:end].decode("utf-8"))
    except UnicodeDecodeError:
        return None


def matrix_path(db: IndexDB) -> Path | None:
    """``<dir of index.db>/vectors.f32`` for an index file named ``index.db`` (a checkout's, a worktree's, a commit
    index's folder); ``None`` for an in-memory index or any other file name (a run's kept ``runs/<name>.index.db``
    shares its folder with other runs' and is dropped by name, so it gets no matrix: the SQL arm serves it)."""
    if db.index_path in ("", ":memory:") or db.index_path.startswith("file:"):
        return None
    index = Path(db.index_path)
    return index.parent / MATRIX_NAME if index.name == "index.db" else None


def _stamp(db: IndexDB) -> tuple[str, int] | None:
    """``(token, seq)`` of the index (``vector_state``), ``None`` before migration 0011 ran."""
    row = db.query_one("SELECT token, seq FROM vector_state WHERE id = 1")
    return None if row is None else (str(row[0]), int(row[1]))


def _space(db: IndexDB) -> tuple[str, int] | None:
    """The index's vector space and dim (``index_state``), ``None`` without one."""
    row = db.query_one("SELECT embed_model FROM index_state WHERE id = 1")
    if row is None or row[0] is None:
        return None
    tail = str(row[0]).rpartition("@")[2]
    return (str(row[0]), int(tail)) if tail.isdigit() and int(tail) > 0 else None


def _row_bytes(dim: int) -> int:
    return 4 * (dim + EXTRA)


def _open_nofollow(path: Path, flags: int) -> int:
    """``os.open`` that refuses a symlink (``ELOOP``) or anything but a regular file. Raises ``OSError``."""
    fd = os.open(path, flags | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_header(path: Path) -> tuple[Header | None, int]:
    """``(header or None, file size)``; ``(None, -1)`` when the path is missing, a symlink or not a file."""
    try:
        fd = _open_nofollow(path, os.O_RDONLY)
    except OSError:
        return None, -1
    try:
        return _unpack(os.pread(fd, HEADER_BYTES, 0)), os.fstat(fd).st_size
    finally:
        os.close(fd)


def _trusted(header: Header | None, size: int, token: str, space: str, dim: int) -> bool:
    """Whether ``header`` may describe this index's matrix: clean, same token/space/dim, file long enough."""
    return (header is not None and header.state == CLEAN and header.token == token and header.space == space
            and header.dim == dim and size == HEADER_BYTES + header.capacity * _row_bytes(dim))


def _rows(vecs: list[bytes], dim: int) -> F32:
    """``(k, dim + 2)`` float32 rows: the vectors, ``1/‖v‖`` (float64, rounded) or NaN when irregular, and the
    float32 squared norm; computed in blocks of ``resident.LOAD_BLOCK_ROWS`` (bounded temporaries)."""
    raw = np.frombuffer(b"".join(vecs), dtype="<f4").reshape(len(vecs), dim) if vecs else np.zeros((0, dim), "<f4")
    out = np.empty((raw.shape[0], dim + EXTRA), dtype="<f4")
    for start in range(0, raw.shape[0], LOAD_BLOCK_ROWS):
        block = raw[start : start + LOAD_BLOCK_ROWS]
        target = out[start : start + LOAD_BLOCK_ROWS]
        target[:, :dim] = block
        mags = squared_norms_f32(block)
        regular = _regular(block, mags)
        inv = np.full(block.shape[0], np.nan, dtype=np.float64)
        if regular.any():
            good = block[regular].astype(np.float64)
            inv[regular] = 1.0 / np.sqrt(np.einsum("ij,ij->i", good, good))
        target[:, dim] = inv
        target[:, dim + 1] = mags
    return out


@contextlib.contextmanager
def _locked(path: Path, *, wait: bool) -> Iterator[bool]:
    """Hold ``vectors.lock`` beside ``path`` exclusively; yields ``False`` (not held) when ``wait`` is off and
    another process holds it, or the lock file cannot be opened (a symlink, a read-only folder)."""
    try:
        fd = _open_nofollow(path.parent / LOCK_NAME, os.O_RDWR | os.O_CREAT)
    except OSError:
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


class _Unusable(Exception):
    """The index holds a vector the matrix cannot represent (its length is not the space's)."""


SyncResult = Literal["fresh", "synced", "built", "none", "busy", "failed"]


@dataclass(frozen=True)
class SyncReport:
    """What :func:`sync` did: ``fresh`` (nothing to do), ``synced`` (``rows`` rewritten in place), ``built`` (a new
    file of ``rows`` vectors), ``none`` (no matrix: in-memory index or no space), ``busy`` (another process syncs),
    ``failed`` (``error``: the file could not be written; readers fall back to SQL)."""

    result: SyncResult
    rows: int = 0
    error: str | None = None


def sync(db: IndexDB, *, path: Path | None = None, wait: bool = True) -> SyncReport:
    """Bring the matrix at ``path`` (default :func:`matrix_path`) to the index's current vector generation:
    rewrite the slots stamped after the header's ``seq`` (O(changed rows)), or build a new file when the header is
    missing, torn, dirty, of another index/space/dim, ahead of the index, or the changes overflow it. ``wait``:
    block on another syncer (the indexer) or give up with ``busy`` (a search). Never raises for the file (a
    failure is ``failed``: the stale file is then never trusted).

    Raises:
        StorageError: SQLite failed.
    """
    path = path or matrix_path(db)
    if path is None:
        return SyncReport("none")
    with _locked(path, wait=wait) as held:
        if not held:
            return SyncReport("busy")
        try:
            return _sync_locked(db, path)
        except (OSError, _Unusable) as exc:
            return SyncReport("failed", error=f"{path}: {exc}")


def _compact(db: IndexDB) -> None:
    """Renumber the slots densely (in slot order, dropping slots whose vector is gone) when the highest slot
    exceeds ``2 × live + SLACK_ROWS``: deleted vectors leave holes and new ones take the next slot, so churn would
    otherwise grow the file without bound. Bumps ``vector_state.seq``, so every older matrix is stale. Skipped on a
    read-only index."""
    if db.read_only is not None:
        return
    row = db.query_one("SELECT count(*), coalesce(max(slot), -1) FROM vector_slots")
    if row is None or int(row[1]) + 1 <= 2 * int(row[0]) + SLACK_ROWS:
        return
    with db.atomic():
        db.execute("DELETE FROM vector_slots WHERE chunk_id NOT IN (SELECT chunk_id FROM embeddings)")
        db.execute("UPDATE vector_state SET seq = seq + 1 WHERE id = 1")
        db.execute("UPDATE vector_slots SET slot = -1 - slot")  # out of the way: the new numbers never collide
        db.execute(
            "UPDATE vector_slots SET slot = r.n, seq = (SELECT seq FROM vector_state WHERE id = 1) FROM "
            "(SELECT chunk_id, row_number() OVER (ORDER BY slot DESC) - 1 AS n FROM vector_slots) AS r "
            "WHERE r.chunk_id = vector_slots.chunk_id"
        )


def _sync_locked(db: IndexDB, path: Path) -> SyncReport:
    _compact(db)
    with db.read_snapshot():
        stamp, found = _stamp(db), _space(db)
        if stamp is None or found is None:
            return SyncReport("none")
        token, seq = stamp
        space, dim = found
        header, size = _read_header(path)
        if _trusted(header, size, token, space, dim) and header is not None and header.seq <= seq:
            if header.seq == seq:
                return SyncReport("fresh")
            changed = _slot_rows(db, "s.seq > ? AND ", (header.seq, space), 4 * dim)
            if all(int(r[0]) < header.capacity for r in changed) and len(changed) <= FULL_FRACTION * header.capacity:
                _write_rows(path, header, seq, changed)
                return SyncReport("synced", rows=len(changed))
        every = _slot_rows(db, "", (space,), 4 * dim)
    _build(path, Header(CLEAN, dim, 0, seq, token, space), every)
    return SyncReport("built", rows=len(every))


def _slot_rows(db: IndexDB, where: str, params: tuple[object, ...], width: int) -> list[tuple[int, bytes]]:
    """``(slot, vec)`` of the slots whose vector is of the space (``where`` narrows, e.g. to the slots stamped
    after a ``seq``), by slot.

    Raises:
        _Unusable: a vector of the space is not ``width`` bytes (the SQL arm fails on it, so no matrix answers).
    """
    rows = db.query(  # CROSS JOIN: slots first, so a seq bound uses vector_slots_seq (not a scan of a model)
        "SELECT s.slot, e.vec FROM vector_slots s CROSS JOIN embeddings e ON e.chunk_id = s.chunk_id "
        f"WHERE {where}e.model = ? ORDER BY s.slot",
        params,
    )
    bad = next((int(slot) for slot, vec in rows if not isinstance(vec, bytes) or len(vec) != width), None)
    if bad is not None:  # the SQL arm fails on such a vector: no matrix may answer for it
        raise _Unusable(f"the vector of slot {bad} is not {width} bytes (hint: git memhtml index rebuild)")
    return [(int(slot), bytes(vec)) for slot, vec in rows]


def _pwrite_all(fd: int, data: bytes | memoryview, offset: int) -> None:
    """``os.pwrite`` until every byte is written (a regular file may take a large write in parts)."""
    view = memoryview(data).cast("B")
    while view:
        done = os.pwrite(fd, view, offset)
        view, offset = view[done:], offset + done


def _write_rows(path: Path, header: Header, seq: int, changed: list[tuple[int, bytes]]) -> None:
    """Mark ``header`` dirty, write ``changed`` ``(slot, vec)`` rows in place, then the clean header at ``seq``."""
    fd = _open_nofollow(path, os.O_RDWR)
    try:
        os.pwrite(fd, Header(DIRTY, header.dim, header.capacity, header.seq, header.token, header.space).pack(), 0)
        rows = _rows([r[1] for r in changed], header.dim)
        width = _row_bytes(header.dim)
        for (slot, _), row in zip(changed, rows, strict=True):
            os.pwrite(fd, row.tobytes(), HEADER_BYTES + slot * width)
        os.pwrite(fd, Header(CLEAN, header.dim, header.capacity, seq, header.token, header.space).pack(), 0)
    finally:
        os.close(fd)


def _build(path: Path, header: Header, every: list[tuple[int, bytes]]) -> None:
    """Write a new file for ``every`` ``(slot, vec)`` row beside ``path`` and rename it over ``path`` (which
    replaces a symlink there, never writing through it)."""
    top = max((r[0] for r in every), default=-1)
    capacity = int((top + 1) * HEADROOM) + SLACK_ROWS
    matrix = np.zeros((capacity, header.dim + EXTRA), dtype="<f4")
    if every:
        slots = np.fromiter((r[0] for r in every), dtype=np.intp, count=len(every))
        matrix[slots] = _rows([r[1] for r in every], header.dim)
    done = Header(CLEAN, header.dim, capacity, header.seq, header.token, header.space).pack()
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = _open_nofollow(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        _pwrite_all(fd, done.ljust(HEADER_BYTES, b"\0"), 0)
        _pwrite_all(fd, matrix.data.cast("B"), HEADER_BYTES)
    except BaseException:
        os.close(fd)
        tmp.unlink()
        raise
    os.close(fd)
    os.replace(tmp, path)


# -- reading --------------------------------------------------------------------------------------------------


class _Mapped:
    """One mapped file: its identity (device, inode, size) and the ``(capacity, dim + 2)`` float32 view."""

    def __init__(self, fd: int, ident: tuple[int, int, int], dim: int, capacity: int) -> None:
        self.ident = ident
        self.map = mmap.mmap(fd, ident[2], access=mmap.ACCESS_READ)
        self.rows: F32 = np.frombuffer(self.map, dtype="<f4", offset=HEADER_BYTES,
                                       count=capacity * (dim + EXTRA)).reshape(capacity, dim + EXTRA)

    def header(self) -> Header | None:
        return _unpack(self.map[: _FIELDS.size + SPACE_MAX + 4])


_MAPS: dict[str, _Mapped] = {}
"""Per matrix path, the file mapped last (re-mapped when the path names another file or size)."""


def _mapped(path: Path, dim: int) -> _Mapped | None:
    """The current file at ``path`` mapped read-only (``None``: missing, a symlink, not a file, no valid header)."""
    known = _MAPS.get(str(path))
    try:
        st = os.stat(path, follow_symlinks=False)  # one syscall when the file is the one mapped already
    except OSError:
        _MAPS.pop(str(path), None)
        return None
    if known is not None and stat.S_ISREG(st.st_mode) and known.ident == (st.st_dev, st.st_ino, st.st_size):
        return known
    try:
        fd = _open_nofollow(path, os.O_RDONLY)
    except OSError:
        _MAPS.pop(str(path), None)
        return None
    try:
        st = os.fstat(fd)
        ident = (st.st_dev, st.st_ino, st.st_size)
        header = _unpack(os.pread(fd, HEADER_BYTES, 0))
        if header is None or header.dim != dim or st.st_size != HEADER_BYTES + header.capacity * _row_bytes(dim):
            return None
        found = _Mapped(fd, ident, dim, header.capacity)
        _MAPS[str(path)] = found
        return found
    finally:
        os.close(fd)


@dataclass(frozen=True)
class _Eligible:
    """The slots the scope admits, grouped by path (paths ascending): ``slots[starts[i]:starts[i+1]]`` are path
    ``paths[i]``'s."""

    paths: tuple[str, ...]
    slots: npt.NDArray[np.intp]
    owner: npt.NDArray[np.intp]
    starts: npt.NDArray[np.intp]


def _eligible(db: IndexDB, scope: Scope, space: str) -> _Eligible:
    """Slots and paths of every vector of ``space`` whose file ``scope`` admits (the SQL arm's join and filter),
    cached per open index until it changes."""

    def read() -> _Eligible:
        scope_filter, params = scope_sql(scope)
        rows = db.query(  # vector_slots.model is embeddings.model (migration 0011): no vector blob is read
            "SELECT f.path, s.slot FROM files f JOIN chunks c ON c.path = f.path "
            "JOIN vector_slots s ON s.chunk_id = c.chunk_id "
            f"WHERE s.model = :space AND {scope_filter} ORDER BY f.path, c.ordinal",
            {**params, "space": space},
        )
        names = [str(r[0]) for r in rows]
        slots = np.fromiter((int(r[1]) for r in rows), dtype=np.intp, count=len(rows))
        first = np.r_[True, np.array(names[1:]) != np.array(names[:-1])] if names else np.zeros(0, dtype=bool)
        starts = np.flatnonzero(first).astype(np.intp)
        owner = (np.cumsum(first) - 1).astype(np.intp)
        paths = tuple(names[i] for i in starts.tolist())
        return _Eligible(paths, slots, owner, starts)

    return _cached(db, ("matrix-eligible", scope, space), read)


def vector_ranks(db: IndexDB, qvec: bytes, space: str, scope: Scope, *, limit: int = ARM_LIMIT,
                 path: Path | None = None, sync_stale: bool = True) -> list[str] | None:
    """The vector arm's paths for ``qvec`` under ``scope`` from the persistent matrix — exactly the rows of
    ``vector_arm_sql`` — or ``None`` when the matrix cannot stand in for it (no file, stale, torn, another index or
    space, a sync ran during the scan): the caller then runs the SQL arm. With ``sync_stale`` a stale matrix is
    synced first (without waiting for another syncer; never on a read-only index).

    The shortlist is float32 ``M @ q̂`` times the stored ``1/‖v‖``; its error and sqlite-vec's are each below
    ``resident.distance_error_bound(dim)`` for regular rows, so every path within ``4 ×`` that bound of the
    ``limit``-th best is re-scored the sqlite-vec way (``resident.sqlite_vec_cosine``), with the rows of irregular
    vectors always; an irregular query re-scores every eligible row.

    Raises:
        StorageError: SQLite failed.
    """
    path = path or matrix_path(db)
    state = _state(db)
    if path is None or state is None or state[2] != space or len(qvec) != 4 * state[3] or limit < 1:
        return None
    token, seq, _, dim = state
    mapped, header = _current(path, dim, token, seq, space)
    if mapped is None or header is None:
        if not sync_stale or db.read_only is not None or sync(db, path=path, wait=False).result not in (
                "synced", "built", "fresh"):
            return None
        state = _state(db)
        if state is None:
            return None
        token, seq = state[0], state[1]
        mapped, header = _current(path, dim, token, seq, space)
        if mapped is None or header is None:
            return None
    eligible = _eligible(db, scope, space)
    if _stamp(db) != (token, seq):
        return None  # the index moved while the mapping was read
    out = _rank(mapped.rows, dim, eligible, qvec, limit)
    return out if mapped.header() == header else None  # a sync wrote meanwhile: the scan may mix two states


def _state(db: IndexDB) -> tuple[str, int, str, int] | None:
    """``(token, seq, space, dim)`` of the index in one read, ``None`` without a vector space."""
    row = db.query_one("SELECT v.token, v.seq, i.embed_model FROM vector_state v LEFT JOIN index_state i "
                       "ON i.id = 1 WHERE v.id = 1")
    if row is None or row[2] is None:
        return None
    tail = str(row[2]).rpartition("@")[2]
    if not tail.isdigit() or int(tail) < 1:
        return None
    return str(row[0]), int(row[1]), str(row[2]), int(tail)


def _current(path: Path, dim: int, token: str, seq: int, space: str) -> tuple[_Mapped | None, Header | None]:
    """The mapped file at ``path`` and its header when the header is clean and describes exactly this index at
    ``seq`` with the mapping's shape; ``(mapped or None, None)`` otherwise."""
    mapped = _mapped(path, dim)
    if mapped is None:
        return None, None
    header = mapped.header()
    if (header is None or header.state != CLEAN or header.token != token or header.seq != seq
            or header.space != space or header.dim != dim or header.capacity != mapped.rows.shape[0]):
        return mapped, None
    return mapped, header


def _exact(rows: F32, dim: int, slots: npt.NDArray[np.intp], query: F32, query_mag: np.float32) -> F64:
    """sqlite-vec's distance of each of ``slots`` to ``query``, bit for bit (``resident.sqlite_vec_cosine`` with the
    stored squared norms). For a row whose ``1/‖v‖`` is finite (every component finite) only the query's non-zero
    components are summed: a zero component's product is ±0, and adding ±0 to sqlite-vec's running float32 sum
    leaves it unchanged (up to the sign of a zero sum, which gives the same distance), so the sum over the support,
    in the same order, is the same float32 value. Rows with a non-finite component are summed over every column."""
    out = np.empty(slots.size, dtype=np.float64)
    finite = ~np.isnan(rows[slots, dim])
    support = np.flatnonzero(query != 0)
    if support.size == 0:
        support = np.zeros(1, dtype=np.intp)  # a zero query: one ±0 product, the same (NULL) distance
    if finite.any():
        picked = slots[finite]
        part = np.ascontiguousarray(rows[np.ix_(picked, support)], dtype=np.float32)
        out[finite] = sqlite_vec_cosine(part, np.ascontiguousarray(rows[picked, dim + 1], dtype=np.float32),
                                        np.ascontiguousarray(query[support]), query_mag)
    if (~finite).any():
        picked = slots[~finite]
        raw = np.ascontiguousarray(rows[picked, :dim], dtype=np.float32)
        out[~finite] = sqlite_vec_cosine(raw, squared_norms_f32(raw), query, query_mag)
    return out


def _rank(rows: F32, dim: int, el: _Eligible, qvec: bytes, limit: int) -> list[str]:
    """Rank ``el``'s paths against ``qvec`` over ``rows`` (see :func:`vector_ranks`)."""
    if el.slots.size == 0:
        return []
    query = np.frombuffer(qvec, dtype="<f4").astype(np.float32)
    query_mag = squared_norms_f32(query[None, :])[0]
    candidate_rows: npt.NDArray[np.intp] = np.arange(el.slots.size, dtype=np.intp)
    if bool(_regular(query[None, :], np.array([query_mag], dtype=np.float32))[0]):
        q64 = query.astype(np.float64)
        unit = (q64 / np.sqrt(q64 @ q64)).astype(np.float32)
        with np.errstate(all="ignore"):
            # one pass over the whole mapped matrix; einsum's own single-threaded loop, not BLAS: on a loaded
            # 2-core machine OpenBLAS's threads cost 16 ms at 13.5k rows where einsum takes 0.3 ms (bench/README.md)
            dots = np.einsum("ij,j->i", rows[:, :dim], unit)
            approx = (1.0 - dots[el.slots] * rows[el.slots, dim]).astype(np.float64)
        irregular = np.isnan(approx)
        approx[irregular] = np.inf
        best = np.minimum.reduceat(approx, el.starts)
        finite = best[np.isfinite(best)]
        if finite.size > limit:
            threshold = float(np.partition(finite, limit - 1)[limit - 1])
            margin = 4.0 * distance_error_bound(dim)
            path_irregular = np.zeros(len(el.paths), dtype=bool)
            path_irregular[el.owner[irregular]] = True
            keep = (best <= threshold + margin) | path_irregular
            candidate_rows = np.flatnonzero(keep[el.owner]).astype(np.intp)
    if candidate_rows.size == 0:
        return []
    dist = _exact(rows, dim, el.slots[candidate_rows], query, query_mag)
    owner = el.owner[candidate_rows]
    firsts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    per_path = np.fmin.reduceat(dist, firsts)  # fmin skips NaN (SQL min skips NULL)
    who = owner[firsts]
    ranked = ~np.isnan(per_path)
    order = np.lexsort((who[ranked], per_path[ranked]))[:limit]
    return [el.paths[i] for i in who[ranked][order]]
