"""Reading the persistent vector matrix (index/matrix_file.py): the vector arm ranked from the mapped file, exactly
like the SQL arm (docs/retrieval.md §4.12).

The file is mapped read-only once per path and re-mapped when the path names another file. Before a mapping's
first use under a header, every CRC block is checked against the CRC table (one ``zlib.crc32`` pass over the file,
once per file identity and header in a process); a long-lived reader whose file was synced in place re-checks only
the blocks whose CRC changed since it last verified them. A block or table failing its CRC makes the reader rebuild
the file (as a stale one) or, when it cannot, answer ``None``. A reader checks the header before and after its
check and its scan (a sequence lock): a sync that runs meanwhile (index/matrix.py) makes it answer ``None``, so the
caller runs the SQL arm, never a mix of two states.
"""

from __future__ import annotations

import mmap
import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from git_memhtml.index.cosine import (
    F32,
    F64,
    distance_error_bound,
    query_parts,
    rank_paths,
    sqlite_vec_cosine,
    squared_norms_f32,
)
from git_memhtml.index.db import IndexDB
from git_memhtml.index.matrix import sync
from git_memhtml.index.matrix_file import (
    CLEAN,
    CRC_BLOCK_ROWS,
    EXTRA,
    HEADER_BYTES,
    HEADER_MAX,
    Header,
    block_count,
    damaged_blocks,
    file_size,
    foreign_entry,
    index_stamp,
    matrix_path,
    open_nofollow,
    read_header,
    space_dim,
    table_offset,
    trusted,
    unpack_header,
)
from git_memhtml.index.resident import cached
from git_memhtml.index.retrieval_sql import ARM_LIMIT, Scope, scope_sql


class _Mapped:
    """One mapped file: its identity (device, inode, size), the ``(capacity, dim + 2)`` float32 view, and what was
    verified of it: the header whose body last passed every CRC, the CRC of each block as last verified, the header
    whose body last failed."""

    def __init__(self, fd: int, ident: tuple[int, int, int], dim: int, capacity: int) -> None:
        self.ident = ident
        self.map = mmap.mmap(fd, ident[2], access=mmap.ACCESS_READ)
        self.rows: F32 = np.frombuffer(self.map, dtype="<f4", offset=HEADER_BYTES,
                                       count=capacity * (dim + EXTRA)).reshape(capacity, dim + EXTRA)
        self.verified: Header | None = None
        self.known: dict[int, int] = {}
        self.damaged: Header | None = None

    def header(self) -> Header | None:
        return unpack_header(self.map[:HEADER_MAX])

    def intact(self, header: Header) -> bool | None:
        """Whether the body under ``header`` (the mapping's header, already checked) passes its CRCs: ``True``,
        ``False`` (the table or a block fails), or ``None`` when the header moved during the check (a sync wrote).
        O(1) when this header was judged before; otherwise one ``zlib.crc32`` over each block whose CRC differs
        from the one verified last."""
        if header == self.verified:
            return True
        if header == self.damaged:
            return False
        bad = damaged_blocks(self.map, header, skip=lambda block, crc: self.known.get(block) == crc)
        if self.header() != header:
            return None
        if bad is None or bad:
            self.damaged = header
            return False
        count = block_count(header.capacity)
        start = table_offset(header.capacity, header.dim)
        self.known = dict(enumerate(struct.unpack_from(f"<{count}I", self.map, start)))
        self.verified = header
        return True


_MAPS: dict[str, _Mapped] = {}
"""Per matrix path, the file mapped last (re-mapped when the path names another file or size)."""


def mapped_file(path: Path, dim: int) -> _Mapped | None:
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
        fd = open_nofollow(path, os.O_RDONLY)
    except OSError:
        _MAPS.pop(str(path), None)
        return None
    try:
        st = os.fstat(fd)
        ident = (st.st_dev, st.st_ino, st.st_size)
        header = unpack_header(os.pread(fd, HEADER_BYTES, 0))
        if header is None or header.dim != dim or st.st_size != file_size(header.capacity, dim):
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
    high: int
    """One past the highest slot admitted (0 for none): the rows a query's product must cover."""


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
        return _Eligible(paths, slots, owner, starts, int(slots.max()) + 1 if slots.size else 0)

    return cached(db, ("matrix-eligible", scope, space), read)


def vector_ranks(db: IndexDB, qvec: bytes, space: str, scope: Scope, *, limit: int = ARM_LIMIT,
                 path: Path | None = None, sync_stale: bool = True) -> list[str] | None:
    """The vector arm's paths for ``qvec`` under ``scope`` from the persistent matrix — exactly the rows of
    ``vector_arm_sql`` — or ``None`` when the matrix cannot stand in for it (no file, stale, torn, another index or
    space, a block failing its CRC, a sync ran during the check or the scan): the caller then runs the SQL arm. With
    ``sync_stale`` a stale matrix is synced first, and a damaged one rebuilt (without waiting for another syncer;
    never on a read-only index).

    The shortlist is float32 ``M @ q̂`` times the stored ``1/‖v‖``; its error and sqlite-vec's are each below
    ``cosine.distance_error_bound(dim)`` for regular rows, so every path within ``4 ×`` that bound of the
    ``limit``-th best is re-scored the sqlite-vec way (``cosine.rank_paths``, with :func:`_exact`), with the rows of
    irregular vectors always; an irregular query re-scores every eligible row.

    Raises:
        StorageError: SQLite failed.
    """
    path = path or matrix_path(db)
    state = _state(db)
    if path is None or state is None or state[2] != space or len(qvec) != 4 * state[3] or limit < 1:
        return None
    token, seq, _, dim = state
    mapped, header = _current(path, dim, token, seq, space)
    intact = False if mapped is None or header is None else mapped.intact(header)
    if intact is None:
        return None  # a sync wrote during the check
    if mapped is None or header is None or not intact:
        damaged = mapped is not None and header is not None  # a current header over a body failing its CRCs
        if not sync_stale or db.read_only is not None or sync(db, path=path, wait=False, full=damaged).result \
                not in ("synced", "built", "fresh"):
            return None
        state = _state(db)
        if state is None:
            return None
        token, seq = state[0], state[1]
        mapped, header = _current(path, dim, token, seq, space)
        if mapped is None or header is None or not mapped.intact(header):
            return None
    eligible = _eligible(db, scope, space)
    if index_stamp(db) != (token, seq):
        return None  # the index moved while the mapping was read
    out = _rank(mapped.rows, dim, eligible, qvec, limit)
    return out if mapped.header() == header else None  # a sync wrote meanwhile: the scan may mix two states


def damage(db: IndexDB, *, path: Path | None = None) -> str | None:
    """What is wrong with the body of ``db``'s matrix at ``path`` (default :func:`matrix_path`), for ``index
    verify`` and ``doctor``: ``None`` when there is no file, its header is stale or torn (the next sync rebuilds it
    by itself), or every CRC holds; otherwise a line naming the file and the first failing block. Reads the whole
    file once (its own read, not the per-process cache).

    Raises:
        StorageError: SQLite failed.
    """
    path = path or matrix_path(db)
    state = _state(db)
    if path is None or state is None:
        return None
    token, _, space, dim = state
    kind = foreign_entry(path)
    if kind is not None:
        return (f"{path}: {kind} is there, not the vector matrix, so no matrix can be written (searches use the "
                "slower SQL arm) — fix: move it away, then git memhtml index rebuild")
    header, size = read_header(path)
    if header is None or not trusted(header, size, token, space, dim):
        return None
    try:
        fd = open_nofollow(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        if os.fstat(fd).st_size != size:
            return None  # replaced meanwhile: judged by the next check
        with mmap.mmap(fd, size, access=mmap.ACCESS_READ) as data:
            bad = damaged_blocks(data, header)
    finally:
        os.close(fd)
    if bad is None:
        return f"{path}: its CRC table does not match its header"
    if bad:
        first = bad[0] * CRC_BLOCK_ROWS
        return (f"{path}: {len(bad)} of {block_count(header.capacity)} CRC block(s) fail their CRC (first: rows "
                f"{first}-{min(first + CRC_BLOCK_ROWS, header.capacity) - 1})")
    return None


def _state(db: IndexDB) -> tuple[str, int, str, int] | None:
    """``(token, seq, space, dim)`` of the index in one read, ``None`` without a vector space."""
    row = db.query_one("SELECT v.token, v.seq, i.embed_model FROM vector_state v LEFT JOIN index_state i "
                       "ON i.id = 1 WHERE v.id = 1")
    dim = None if row is None else space_dim(row[2])
    return None if row is None or dim is None else (str(row[0]), int(row[1]), str(row[2]), dim)


def _current(path: Path, dim: int, token: str, seq: int, space: str) -> tuple[_Mapped | None, Header | None]:
    """The mapped file at ``path`` and its header when the header is clean and describes exactly this index at
    ``seq`` with the mapping's shape; ``(mapped or None, None)`` otherwise."""
    mapped = mapped_file(path, dim)
    if mapped is None:
        return None, None
    header = mapped.header()
    if (header is None or header.state != CLEAN or header.token != token or header.seq != seq
            or header.space != space or header.dim != dim or header.capacity != mapped.rows.shape[0]
            or header.block_rows != CRC_BLOCK_ROWS):
        return mapped, None
    return mapped, header


def _exact(rows: F32, dim: int, slots: npt.NDArray[np.intp], query: F32, query_mag: np.float32) -> F64:
    """sqlite-vec's distance of each of ``slots`` to ``query``, bit for bit (``cosine.sqlite_vec_cosine`` with the
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
    query, query_mag, unit = query_parts(qvec)
    approx = None
    path_irregular = np.zeros(len(el.paths), dtype=bool)
    if unit is not None:
        with np.errstate(all="ignore"):
            # one BLAS matrix-vector product over the rows up to the highest admitted slot (a file keeps free
            # capacity after its used rows: 26% of the rows at 10k). BLAS, not einsum's loop (0.29 against 0.40 ms
            # at 13.5k rows): the CLI runs BLAS on one thread (cli/blas.py), so no worker thread has to be woken on
            # a busy machine, which cost up to 16 ms per product with OpenBLAS's default threads (bench/README.md)
            dots = rows[: el.high, :dim] @ unit.astype(np.float32)
            approx = (1.0 - dots[el.slots] * rows[el.slots, dim]).astype(np.float64)
        irregular = np.isnan(approx)  # the stored 1/‖v‖ is NaN for an irregular row
        approx[irregular] = np.inf
        path_irregular[el.owner[irregular]] = True
    found = rank_paths(approx, el.owner, el.starts, path_irregular, limit=limit, margin=4.0 * distance_error_bound(dim),
                       exact=lambda picked: _exact(rows, dim, el.slots[picked], query, query_mag))
    return [el.paths[i] for i in found.tolist()]
