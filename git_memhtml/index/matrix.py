"""Keeping the persistent vector matrix (index/matrix_file.py) in step with the index (docs/index.md §3.12).

An incremental :func:`sync` marks the header dirty, rewrites the changed rows in place, then writes the new ``seq``
and clean; a kill -9 in between leaves it dirty (rebuilt next time). A full build writes a new file beside it and
renames it over the old one. One syncer at a time holds ``vectors.lock``; a reader checks the header before and after
its scan (index/matrix_read.py), so a sync that runs meanwhile makes it fall back to SQL, never mix two states.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from git_memhtml.index.db import IndexDB
from git_memhtml.index.matrix_file import (
    CLEAN,
    DIRTY,
    EXTRA,
    HEADER_BYTES,
    Header,
    encode_rows,
    index_stamp,
    matrix_path,
    open_nofollow,
    read_header,
    row_bytes,
    space_dim,
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
        stamp, found = index_stamp(db), _space(db)
        if stamp is None or found is None:
            return SyncReport("none")
        token, seq = stamp
        space, dim = found
        header, size = read_header(path)
        if trusted(header, size, token, space, dim) and header is not None and header.seq <= seq:
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
    fd = open_nofollow(path, os.O_RDWR)
    try:
        os.pwrite(fd, Header(DIRTY, header.dim, header.capacity, header.seq, header.token, header.space).pack(), 0)
        rows = encode_rows([r[1] for r in changed], header.dim)
        width = row_bytes(header.dim)
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
        matrix[slots] = encode_rows([r[1] for r in every], header.dim)
    done = Header(CLEAN, header.dim, capacity, header.seq, header.token, header.space).pack()
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = open_nofollow(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        _pwrite_all(fd, done.ljust(HEADER_BYTES, b"\0"), 0)
        _pwrite_all(fd, matrix.data.cast("B"), HEADER_BYTES)
    except BaseException:
        os.close(fd)
        tmp.unlink()
        raise
    os.close(fd)
    os.replace(tmp, path)
