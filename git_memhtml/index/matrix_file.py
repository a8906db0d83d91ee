"""The file of the persistent vector matrix: every chunk vector of the index's space in one memory-mapped float32
file, ``<git-dir>/memhtml/vectors.f32`` (docs/index.md §3.12): its layout, its header and its rows. Written by
index/matrix.py (:func:`~git_memhtml.index.matrix.sync`), read by index/matrix_read.py.

Layout (little-endian): a :data:`HEADER_BYTES` header, then ``capacity`` rows of ``dim + 2`` float32 — the stored
vector, then ``1/‖v‖`` (NaN for a row ``cosine.regular_rows`` calls irregular: zero, non-finite, extreme), then
sqlite-vec's float32 ``Σ v_i²`` (``cosine.squared_norms_f32``, what the exact re-scoring needs) — then the CRC table:
one little-endian uint32 CRC-32 per block of :data:`CRC_BLOCK_ROWS` rows (the last block may be shorter). Row ``i``
is slot ``i`` of ``vector_slots`` (migration 0011); a slot with no live vector of the space is never read, since the
slot → path mapping comes from SQL at query time under the scope filter (a mask over the rows).

The header names the index (``vector_state.token``), the generation it reflects (``vector_state.seq``), the space,
``dim``, ``capacity``, a state (clean / dirty), the block size, the CRC-32 of the CRC table, and a CRC-32 of those
fields: the header binds the table and the table binds every byte of the body (rows in use, the two extra columns,
the unused tail). The header is trusted only when the magic, the CRC, the state, the token, the space, the dim, the
block size and the file length all check out and its ``seq`` equals the index's: anything else is stale or torn and
is rebuilt, never read. A trusted header's body is trusted only once its table and blocks pass their CRCs
(:func:`damaged_blocks`). The path is opened with ``O_NOFOLLOW``: a symlink there is never read nor written through
(a full build replaces it).
"""

from __future__ import annotations

import mmap
import os
import stat
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from git_memhtml.index.cosine import F32, LOAD_BLOCK_ROWS, regular_rows, squared_norms_f32
from git_memhtml.index.db import IndexDB

MATRIX_NAME = "vectors.f32"
"""The file name beside ``index.db`` (our decision, docs/index.md §3.12)."""
MAGIC = b"MHVEC\x00\x02\x00"
"""Format 2 (per-block CRCs); a format-1 file fails the magic, so it is stale and rebuilt, never read."""
HEADER_BYTES = 4096
"""Header size: one page, so the rows start page-aligned."""
_FIELDS = struct.Struct("<8sIIQQ32sIIH")
"""magic, state, dim, capacity, seq, token (32 ASCII hex), block rows, CRC of the CRC table, space length; the space
follows, then the CRC of all of it."""
CRC_BLOCK_ROWS = 1024
"""Rows per CRC block (our decision, docs/index.md §3.12): at 256 dims a block is ~1 MB, so a sync that changes one
row reads, checks and rewrites ~1 MB, and the table is 4 bytes per 1024 rows."""
SPACE_MAX = 1024
"""Longest space name stored (bytes of UTF-8)."""
HEADER_MAX = _FIELDS.size + SPACE_MAX + 4
"""The most bytes a valid header takes (fields, the longest space, the CRC)."""
CLEAN, DIRTY = 1, 2
EXTRA = 2
"""Float32 columns after the vector: ``1/‖v‖`` and ``Σ v_i²``."""


@dataclass(frozen=True)
class Header:
    """A parsed header (see the module docstring)."""

    state: int
    dim: int
    capacity: int
    seq: int
    token: str
    space: str
    table_crc: int = 0
    """CRC-32 of the file's CRC table (:func:`crc_of_table`)."""
    block_rows: int = CRC_BLOCK_ROWS

    def pack(self) -> bytes:
        space = self.space.encode("utf-8")
        body = _FIELDS.pack(MAGIC, self.state, self.dim, self.capacity, self.seq, self.token.encode("ascii"),
                            self.block_rows, self.table_crc, len(space)) + space
        return body + struct.pack("<I", zlib.crc32(body))


def unpack_header(raw: bytes) -> Header | None:
    """The header in ``raw`` (the file's first bytes), or ``None`` when the magic, a length or the CRC is wrong."""
    if len(raw) < _FIELDS.size + 4:
        return None
    magic, state, dim, capacity, seq, token, block_rows, table_sum, length = _FIELDS.unpack_from(raw)
    end = _FIELDS.size + length
    if magic != MAGIC or length > SPACE_MAX or end + 4 > len(raw) or end + 4 > HEADER_BYTES:
        return None
    (crc,) = struct.unpack_from("<I", raw, end)
    if crc != zlib.crc32(raw[:end]):
        return None
    try:
        return Header(int(state), int(dim), int(capacity), int(seq), token.decode("ascii"),
                      raw[_FIELDS.size:end].decode("utf-8"), int(table_sum), int(block_rows))
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


def index_stamp(db: IndexDB) -> tuple[str, int] | None:
    """``(token, seq)`` of the index (``vector_state``), ``None`` before migration 0011 ran."""
    row = db.query_one("SELECT token, seq FROM vector_state WHERE id = 1")
    return None if row is None else (str(row[0]), int(row[1]))


def space_dim(model: object) -> int | None:
    """The dim of the space ``model`` (``index_state.embed_model``, ``<provider>:<model>@<dim>``), ``None`` without
    a space or a positive dim."""
    if model is None:
        return None
    tail = str(model).rpartition("@")[2]
    return int(tail) if tail.isdigit() and int(tail) > 0 else None


def row_bytes(dim: int) -> int:
    """Bytes of one row of ``dim`` components (the vector and the :data:`EXTRA` columns, float32)."""
    return 4 * (dim + EXTRA)


def block_count(capacity: int) -> int:
    """CRC blocks of a file of ``capacity`` rows (:data:`CRC_BLOCK_ROWS` each, the last one shorter)."""
    return -(-capacity // CRC_BLOCK_ROWS)


def table_offset(capacity: int, dim: int) -> int:
    """Byte offset of the CRC table: right after the rows."""
    return HEADER_BYTES + capacity * row_bytes(dim)


def file_size(capacity: int, dim: int) -> int:
    """Bytes of a well-formed file: header, ``capacity`` rows, 4 bytes of CRC per block."""
    return table_offset(capacity, dim) + 4 * block_count(capacity)


def block_span(block: int, capacity: int, dim: int) -> tuple[int, int]:
    """``(byte offset, byte length)`` of CRC block ``block`` in the file."""
    first = block * CRC_BLOCK_ROWS
    rows = min(CRC_BLOCK_ROWS, capacity - first)
    return HEADER_BYTES + first * row_bytes(dim), rows * row_bytes(dim)


def body_crcs(body: bytes | memoryview, capacity: int, dim: int) -> bytes:
    """The CRC table of ``body`` (the ``capacity × row_bytes(dim)`` bytes after the header): one little-endian
    uint32 CRC-32 per block (``zlib.crc32``, ~6 GB/s)."""
    view = memoryview(body).cast("B")
    width = CRC_BLOCK_ROWS * row_bytes(dim)
    crcs = [zlib.crc32(view[start : start + width]) for start in range(0, capacity * row_bytes(dim), width)]
    return struct.pack(f"<{len(crcs)}I", *crcs)


def crc_of_table(table: bytes | memoryview) -> int:
    """The CRC-32 the header keeps of the CRC table."""
    return zlib.crc32(table)


def damaged_blocks(data: bytes | memoryview | mmap.mmap, header: Header, *,
                   skip: Callable[[int, int], bool] | None = None) -> list[int] | None:
    """Check the body of a file whose whole bytes are ``data`` (a mapping) against its CRC table, which must match
    ``header.table_crc``. ``skip(block, crc)`` says a block whose table CRC is ``crc`` was verified before (a
    long-lived reader re-checks only blocks whose CRC changed).

    Returns:
        ``None`` when the table itself fails (its length or its CRC: every block is suspect), else the blocks
        whose bytes fail their CRC (``[]``: the body is intact). Cost: one ``zlib.crc32`` over every block not
        skipped.
    """
    view = memoryview(data).cast("B")
    count = block_count(header.capacity)
    start = table_offset(header.capacity, header.dim)
    table = bytes(view[start : start + 4 * count])
    if len(table) != 4 * count or crc_of_table(table) != header.table_crc:
        return None
    bad: list[int] = []
    for block, (crc,) in enumerate(struct.iter_unpack("<I", table)):
        if skip is not None and skip(block, crc):
            continue
        offset, length = block_span(block, header.capacity, header.dim)
        if zlib.crc32(view[offset : offset + length]) != crc:
            bad.append(block)
    return bad


def open_nofollow(path: Path, flags: int) -> int:
    """``os.open`` that refuses a symlink (``ELOOP``) or anything but a regular file. Raises ``OSError``.

    ``O_NONBLOCK`` is set so that opening a FIFO (or a device) placed at ``path`` returns at once and is then refused,
    instead of blocking until a writer appears; it changes nothing for a regular file."""
    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_header(path: Path) -> tuple[Header | None, int]:
    """``(header or None, file size)``; ``(None, -1)`` when the path is missing, a symlink or not a file."""
    try:
        fd = open_nofollow(path, os.O_RDONLY)
    except OSError:
        return None, -1
    try:
        return unpack_header(os.pread(fd, HEADER_BYTES, 0)), os.fstat(fd).st_size
    finally:
        os.close(fd)


def trusted(header: Header | None, size: int, token: str, space: str, dim: int) -> bool:
    """Whether ``header`` may describe this index's matrix: clean, same token/space/dim, this block size, and the
    file exactly :func:`file_size` long (the body's CRCs are checked separately: :func:`damaged_blocks`)."""
    return (header is not None and header.state == CLEAN and header.token == token and header.space == space
            and header.dim == dim and header.block_rows == CRC_BLOCK_ROWS and size == file_size(header.capacity, dim))


def encode_rows(vecs: list[bytes], dim: int) -> F32:
    """``(k, dim + 2)`` float32 rows: the vectors, ``1/‖v‖`` (float64, rounded) or NaN when irregular, and the
    float32 squared norm; computed in blocks of ``cosine.LOAD_BLOCK_ROWS`` (bounded temporaries)."""
    raw = np.frombuffer(b"".join(vecs), dtype="<f4").reshape(len(vecs), dim) if vecs else np.zeros((0, dim), "<f4")
    out = np.empty((raw.shape[0], dim + EXTRA), dtype="<f4")
    for start in range(0, raw.shape[0], LOAD_BLOCK_ROWS):
        block = raw[start : start + LOAD_BLOCK_ROWS]
        target = out[start : start + LOAD_BLOCK_ROWS]
        target[:, :dim] = block
        mags = squared_norms_f32(block)
        regular = regular_rows(block, mags)
        inv = np.full(block.shape[0], np.nan, dtype=np.float64)
        if regular.any():
            good = block[regular].astype(np.float64)
            inv[regular] = 1.0 / np.sqrt(np.einsum("ij,ij->i", good, good))
        target[:, dim] = inv
        target[:, dim + 1] = mags
    return out


def foreign_entry(path: Path) -> str | None:
    """What is at ``path`` when it is neither absent, a regular file nor a symlink (all three the next build
    replaces): ``"a directory"``, ``"a FIFO"``, ``"a socket"`` or ``"a device"``; else ``None``. A directory there
    makes every build fail (``os.replace`` cannot replace it); the others are replaced by the next build."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISLNK(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    return "a socket" if stat.S_ISSOCK(mode) else "a device"
