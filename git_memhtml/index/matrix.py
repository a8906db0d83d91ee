"""Keeping the persistent vector matrix (index/matrix_file.py) in step with the index (docs/index.md §3.12).

An incremental :func:`sync` checks the CRC table and each CRC block it will touch (a damaged one makes it rebuild:
a sync never re-stamps bytes it did not verify), marks the header dirty, rewrites the touched blocks in place with
their new CRCs, then writes the table and the header clean with the new ``seq`` and the table's CRC; a kill -9 in
between leaves it dirty (rebuilt next time). A full build writes a new file beside it and
renames it over the old one. One syncer at a time holds ``vectors.lock``; a reader checks the header before and after
its scan (index/matrix_read.py), so a sync that runs meanwhile makes it fall back to SQL, never mix two states.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import os
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import numpy as np

from git_memhtml.index.db import IndexDB
from git_memhtml.index.matrix_file import (
    CLEAN,
    CRC_BLOCK_ROWS,
    DIRTY,
    EXTRA,
    HEADER_BYTES,
    Header,
    block_count,
    block_span,
    body_crcs,
    crc_of_table,
    encode_rows,
    index_stamp,
    matrix_path,
    open_nofollow,
    read_header,
    row_bytes,
    space_dim,
    table_offset,
    trusted,
)

LOCK_NAME = "vectors.lock"
"""The lock file beside ``index.db`` (our decision, docs/index.md §3.12)."""
HEADROOM = 1.25
SLACK_ROWS = 1024
"""A full build sizes the file at ``HEADROOM × (highest slot + 1) + SLACK_ROWS`` rows, so new slots land in place
until the index grows by a quarter (our decision)."""
FULL_FRACTION = 0.25
"""An incremental sync that would rewrite more than this fraction of the rows rebuilds the file instead (one
sequential write beats scattered ones; our decision)."""


def _space(db: IndexDB) -> tuple[str, int] | None:
    """The index's vector space and dim (``index_state``), ``None`` without one."""
    row = db.query_one("SELECT embed_model FROM index_state WHERE id = 1")
    dim = None if row is None else space_dim(row[0])
    return None if row is None or dim is None else (str(row[0]), dim)


@contextlib.contextmanager
def _locked(path: Path, *, wait: bool) -> Iterator[bool]:
    """Hold ``vectors.lock`` beside ``path`` exclusively; yields ``False`` (not held) when ``wait`` is off and
    another process holds it, or the lock file cannot be opened (a symlink, a read-only folder)."""
    try:
        fd = open_nofollow(path.parent / LOCK_NAME, os.O_RDWR | os.O_CREAT)
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


class _Damaged(Exception):
    """The CRC table or a block an in-place sync would touch fails its CRC: the file is rebuilt instead."""


SyncResult = Literal["fresh", "synced", "built", "none", "busy", "failed"]


@dataclass(frozen=True)
class SyncReport:
    """What :func:`sync` did: ``fresh`` (nothing to do), ``synced`` (``rows`` rewritten in place), ``built`` (a new
    file of ``rows`` vectors), ``none`` (no matrix: in-memory index or no space), ``busy`` (another process syncs),
    ``failed`` (``error``: the file could not be written; readers fall back to SQL)."""

    result: SyncResult
    rows: int = 0
    error: str | None = None


def sync(db: IndexDB, *, path: Path | None = None, wait: bool = True, full: bool = False) -> SyncReport:
    """Bring the matrix at ``path`` (default :func:`matrix_path`) to the index's current vector generation:
    rewrite the slots stamped after the header's ``seq`` (O(changed rows)), or build a new file when the header is
    missing, torn, dirty, of another index/space/dim, ahead of the index, or the changes overflow it. ``wait``:
    block on another syncer (the indexer) or give up with ``busy`` (a search). ``full``: build a new file whatever
    the header says (``index rebuild``, a reader or ``doctor --fix`` that found a block failing its CRC). Never
    raises for the file (a failure is ``failed``: the stale file is then never trusted).

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
            return _sync_locked(db, path, full=full)
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


def _sync_locked(db: IndexDB, path: Path, *, full: bool) -> SyncReport:
    _compact(db)
    with db.read_snapshot():
        stamp, found = index_stamp(db), _space(db)
        if stamp is None or found is None:
            return SyncReport("none")
        token, seq = stamp
        space, dim = found
        header, size = read_header(path)
        if not full and trusted(header, size, token, space, dim) and header is not None and header.seq <= seq:
            if header.seq == seq:
                return SyncReport("fresh")
            changed = _slot_rows(db, "s.seq > ? AND ", (header.seq, space), 4 * dim)
            if all(int(r[0]) < header.capacity for r in changed) and len(changed) <= FULL_FRACTION * header.capacity:
                try:
                    _write_rows(path, header, seq, changed)
                    return SyncReport("synced", rows=len(changed))
                except _Damaged:
                    pass  # the header is dirty now: the full build below replaces the file
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


def _pwrite_all(fd: int, data: bytes | bytearray | memoryview, offset: int) -> None:
    """``os.pwrite`` until every byte is written (a regular file may take a large write in parts)."""
    view = memoryview(data).cast("B")
    while view:
        done = os.pwrite(fd, view, offset)
        view, offset = view[done:], offset + done


def _write_rows(path: Path, header: Header, seq: int, changed: list[tuple[int, bytes]]) -> None:
    """Rewrite the CRC blocks holding ``changed`` ``(slot, vec)`` rows in place: check the CRC table against the
    header, mark the header dirty, then per touched block read it, check its CRC, patch and write its changed rows
    and re-compute its CRC; finally write the table and the clean header at ``seq`` (which binds the table by its CRC).
    Cost: O(touched blocks × :data:`~git_memhtml.index.matrix_file.CRC_BLOCK_ROWS` rows).

    Raises:
        _Damaged: the table or a touched block fails its CRC (the header may be left dirty). OSError.
    """
    dim, capacity = header.dim, header.capacity
    width = row_bytes(dim)
    fd = open_nofollow(path, os.O_RDWR)
    try:
        start = table_offset(capacity, dim)
        count = block_count(capacity)
        table = os.pread(fd, 4 * count, start)
        if len(table) != 4 * count or crc_of_table(table) != header.table_crc:
            raise _Damaged(f"{path}: the CRC table fails its CRC")
        crcs = list(struct.unpack(f"<{count}I", table))
        rows = encode_rows([r[1] for r in changed], dim)
        by_block: dict[int, list[int]] = {}
        for i, (slot, _) in enumerate(changed):
            by_block.setdefault(slot // CRC_BLOCK_ROWS, []).append(i)
        os.pwrite(fd, replace(header, state=DIRTY).pack(), 0)
        for block, members in sorted(by_block.items()):
            offset, length = block_span(block, capacity, dim)
            data = bytearray(length)
            if os.preadv(fd, [data], offset) != length or zlib.crc32(data) != crcs[block]:
                raise _Damaged(f"{path}: CRC block {block} fails its CRC")
            for i in members:
                at = (changed[i][0] - block * CRC_BLOCK_ROWS) * width
                data[at : at + width] = rows[i].tobytes()
                os.pwrite(fd, memoryview(data)[at : at + width], offset + at)  # only the changed rows are written
            crcs[block] = zlib.crc32(data)
        table = struct.pack(f"<{count}I", *crcs)
        _pwrite_all(fd, table, start)
        os.pwrite(fd, replace(header, state=CLEAN, seq=seq, table_crc=crc_of_table(table)).pack(), 0)
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
        matrix[slots] = encode_rows([r[1] for r in every], header.dim)
    body = matrix.data.cast("B")
    table = body_crcs(body, capacity, header.dim)
    done = Header(CLEAN, header.dim, capacity, header.seq, header.token, header.space, crc_of_table(table)).pack()
    _sweep_temporaries(path)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = open_nofollow(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        try:
            _pwrite_all(fd, done.ljust(HEADER_BYTES, b"\0"), 0)
            _pwrite_all(fd, body, HEADER_BYTES)
            _pwrite_all(fd, table, table_offset(capacity, header.dim))
        finally:
            os.close(fd)
        os.replace(tmp, path)  # fails on a directory at ``path``: the temporary goes, the failure is reported
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def _sweep_temporaries(path: Path) -> None:
    """Remove every ``<name>.<pid>.tmp`` beside ``path``: builds run under ``vectors.lock``, so any such file is
    left by a build that was killed or failed, and would otherwise stay for good (a full copy of the matrix)."""
    for stale in path.parent.glob(f"{glob.escape(path.name)}.*.tmp"):
        if stale.name[len(path.name) + 1 : -4].isdigit() and not stale.is_symlink() and stale.is_file():
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()
