"""Same-size damage to the vector matrix's body is never trusted (issue 12 F2; docs/index.md §3.12).

Each row of :data:`DAMAGE` changes bytes of ``<git-dir>/memhtml/vectors.f32`` without changing its length or its
header's fields: a vector row, the ``1/‖v‖`` column, the ``Σv²`` column, the CRC table, the unused tail, another
repository's body under this file's header, a torn sync (a block written, its CRC not). For every row the reader
refuses the file, ``search`` equals a search of a freshly rebuilt index, ``index verify`` names the file, and
``doctor --fix`` (or the next search) repairs it. Real git repositories, real SQLite, real files.
"""

from __future__ import annotations

import os
import struct
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from git_memhtml.doctor import fix
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB, open_index
from git_memhtml.index.matrix_file import (
    CRC_BLOCK_ROWS,
    HEADER_BYTES,
    block_count,
    crc_of_table,
    encode_rows,
    file_size,
    matrix_path,
    read_header,
    row_bytes,
    table_offset,
)
from git_memhtml.index.matrix_read import damage, mapped_file, vector_ranks
from git_memhtml.index.retrieval import search
from git_memhtml.index.retrieval_sql import Scope
from git_memhtml.index.verify import verify
from tests.index.index_helpers import NOW, Repo, memory_html
from tests.index.test_matrix import QUERIES, _assert_matches_sql, _qvec, _sql_arm, _world

Damage = Callable[[Path, IndexDB, Path], None]


def _slot_of(db: IndexDB, path: str) -> int:
    row = db.query_one("SELECT s.slot FROM vector_slots s JOIN chunks c ON c.chunk_id = s.chunk_id "
                       "WHERE c.path = ? AND c.ordinal = 0", (path,))
    assert row is not None
    return int(row[0])


def _poke(path: Path, offset: int, data: bytes) -> None:
    """Overwrite bytes in place (``dd conv=notrunc``): the length never changes."""
    size = path.stat().st_size
    with path.open("r+b") as fh:
        fh.seek(offset)
        fh.write(data)
    assert path.stat().st_size == size


def _flip(path: Path, offset: int) -> None:
    with path.open("rb") as fh:
        fh.seek(offset)
        byte = fh.read(1)
    _poke(path, offset, bytes([byte[0] ^ 0x40]))


def _geometry(path: Path) -> tuple[int, int]:
    header, size = read_header(path)
    assert header is not None and size == file_size(header.capacity, header.dim)
    return header.dim, header.capacity


def _vector_row(path: Path, db: IndexDB, _other: Path) -> None:
    """The worst match of "alpha beta" gets the query's own vector: on trust it would rank first."""
    dim, _ = _geometry(path)
    qvec = _qvec(FakeEmbedder(dim=dim), "alpha beta")
    worst = _sql_arm(db, qvec, f"fake:hash@{dim}", Scope())[-1]
    _poke(path, HEADER_BYTES + _slot_of(db, worst) * row_bytes(dim), qvec)


def _norm_column(path: Path, db: IndexDB, _other: Path) -> None:
    dim, _ = _geometry(path)
    _flip(path, HEADER_BYTES + _slot_of(db, "areas/inbox/m04.html") * row_bytes(dim) + 4 * dim + 3)


def _squares_column(path: Path, db: IndexDB, _other: Path) -> None:
    dim, _ = _geometry(path)
    _flip(path, HEADER_BYTES + _slot_of(db, "areas/inbox/m04.html") * row_bytes(dim) + 4 * (dim + 1) + 3)


def _crc_table(path: Path, db: IndexDB, _other: Path) -> None:
    dim, capacity = _geometry(path)
    _flip(path, table_offset(capacity, dim))


def _unused_tail(path: Path, db: IndexDB, _other: Path) -> None:
    """A row no slot uses (capacity exceeds the rows in use by ``SLACK_ROWS``): bytes the reader maps and scans."""
    dim, capacity = _geometry(path)
    _poke(path, HEADER_BYTES + (capacity - 1) * row_bytes(dim), struct.pack("<4f", 1e30, -1e30, 7.0, 1e-3))


def _random_bytes(path: Path, db: IndexDB, _other: Path) -> None:
    """The fresh user's attack: 64 random bytes into the body (``dd bs=1 seek=… count=64 conv=notrunc``)."""
    dim, _ = _geometry(path)
    _poke(path, HEADER_BYTES + 3 * row_bytes(dim) + 8, os.urandom(64))


def _swapped(path: Path, db: IndexDB, other: Path) -> None:
    """Another repository's matrix of the same length (same capacity and dim) under this file's header and table:
    only its rows are foreign."""
    mine, theirs = path.read_bytes(), other.read_bytes()
    assert len(mine) == len(theirs)
    dim, capacity = _geometry(path)
    cut = table_offset(capacity, dim)
    assert mine[HEADER_BYTES:cut] != theirs[HEADER_BYTES:cut]
    _poke(path, HEADER_BYTES, theirs[HEADER_BYTES:cut])


def _torn_sync(path: Path, db: IndexDB, _other: Path) -> None:
    """A sync whose header (clean, the new ``seq``) landed but whose block did not finish and whose CRC was not
    written: one vector changes in SQL; half its new row is in the file."""
    header, _ = read_header(path)
    assert header is not None
    slot = _slot_of(db, "projects/web/m05.html")
    new_vec = np.frombuffer(_qvec(FakeEmbedder(dim=header.dim), "queue ledger"), dtype="<f4")
    with db.atomic():
        db.execute("UPDATE embeddings SET vec = ? WHERE chunk_id = (SELECT chunk_id FROM vector_slots WHERE slot = ?)",
                   (new_vec.tobytes(), slot))
    seq = db.query_one("SELECT seq FROM vector_state WHERE id = 1")
    assert seq is not None and int(seq[0]) > header.seq
    row = encode_rows([new_vec.tobytes()], header.dim)[0].tobytes()
    _poke(path, HEADER_BYTES + slot * row_bytes(header.dim), row[: len(row) // 2])
    _poke(path, 0, replace(header, seq=int(seq[0])).pack())


DAMAGE: dict[str, Damage] = {
    "vector-row": _vector_row, "norm-column": _norm_column, "squares-column": _squares_column,
    "crc-table": _crc_table, "unused-tail": _unused_tail, "random-bytes": _random_bytes,
    "another-repository": _swapped, "torn-sync": _torn_sync,
}
"""One row per way a body can be damaged at the same length; a new kind joins by adding a row."""
CHANGES_THE_INDEX = frozenset({"torn-sync"})
"""Rows that also change a vector in SQL (a sync was under way): a rebuild from the tree is not their reference,
the SQL arm of the same index is."""


def _other_matrix(tmp_path: Path) -> Path:
    """The matrix of another repository of 40 one-chunk memories (same capacity and dim as :func:`_world`'s)."""
    repo = Repo(tmp_path / "other")
    paths = [f"areas/inbox/o{i:02d}.html" for i in range(40)]
    for i, p in enumerate(paths):
        repo.write(p, memory_html(f"Other {i}", f"Unrelated words number {i} queue."))
    repo.commit("seed", *paths)
    db = IndexDB.for_repo(repo.git)
    indexer.rebuild(repo.git, db, FakeEmbedder(dim=16), now=NOW)
    path = matrix_path(db)
    db.close()
    assert path is not None
    return path


def _fresh_search(repo: Repo, embedder: FakeEmbedder, tmp_path: Path) -> dict[str, object]:
    fresh = open_index(tmp_path / "fresh.db", tmp_path / "fresh-state.db")  # not index.db: no matrix, the SQL arm
    indexer.rebuild(repo.git, fresh, embedder, now=NOW)
    try:
        return {q: search(fresh, q, embedder=embedder, now=NOW) for q in QUERIES}
    finally:
        fresh.close()


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_damage_is_refused_searched_like_a_rebuild_and_reported(tmp_path: Path, kind: str) -> None:
    repo, db, embedder = _world(tmp_path)
    path = matrix_path(db)
    assert path is not None and damage(db) is None
    DAMAGE[kind](path, db, _other_matrix(tmp_path) if kind == "another-repository" else path)
    found = damage(db)
    assert found is not None and str(path) in found, found
    drift = verify(repo.git, db, now=NOW)
    assert not drift.clean and drift.matrix_damage == found
    for q in QUERIES:
        assert vector_ranks(db, _qvec(embedder, q), embedder.space, Scope(), sync_stale=False) is None, q
    want = {q: search(db, q, embedder=embedder, now=NOW, use_matrix=False) for q in QUERIES}
    if kind not in CHANGES_THE_INDEX:
        assert want == _fresh_search(repo, embedder, tmp_path)
    got = {q: search(db, q, embedder=embedder, now=NOW) for q in QUERIES}  # the first search rebuilds the file
    assert got == want
    assert damage(db) is None and verify(repo.git, db, now=NOW).clean
    _assert_matches_sql(db, embedder)
    db.close()


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_doctor_fix_repairs_the_damage(tmp_path: Path, kind: str) -> None:
    repo, db, embedder = _world(tmp_path)
    path = matrix_path(db)
    assert path is not None
    DAMAGE[kind](path, db, _other_matrix(tmp_path) if kind == "another-repository" else path)
    report = fix(repo.git, db, embedder, now=NOW)
    assert report.index.clean, report  # (the helper repository has no .gitattributes: doctor's other findings)
    assert report.fixed == ("index: rebuilt the vector matrix that failed its checks",)
    assert damage(db) is None
    _assert_matches_sql(db, embedder)
    db.close()


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_a_read_only_reader_falls_back_and_the_next_writer_rebuilds(tmp_path: Path, kind: str) -> None:
    """A reader that may not write (a read-only index) serves the SQL arm for every query; ``index rebuild`` then
    writes a new file that every block checks out."""
    repo, db, embedder = _world(tmp_path)
    path = matrix_path(db)
    assert path is not None
    DAMAGE[kind](path, db, _other_matrix(tmp_path) if kind == "another-repository" else path)
    db.read_only = "test: opened read-only"  # as test_matrix.py's read-only case: no sync may write
    try:
        for q in QUERIES:
            qvec = _qvec(embedder, q)
            assert vector_ranks(db, qvec, embedder.space, Scope()) is None, q
            assert search(db, q, embedder=embedder, now=NOW) == search(db, q, embedder=embedder, now=NOW,
                                                                     use_matrix=False)
        assert damage(db) is not None  # still there: nothing wrote
    finally:
        db.read_only = None
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    assert damage(db) is None
    _assert_matches_sql(db, embedder)
    db.close()


def test_an_in_place_sync_never_re_stamps_a_damaged_block(tmp_path: Path) -> None:
    """A damaged block that a one-file update touches is not given a new CRC over its damaged bytes: the sync
    rebuilds the file instead (a new inode), and every block checks out."""
    repo, db, embedder = _world(tmp_path)
    path = matrix_path(db)
    assert path is not None
    _norm_column(path, db, path)
    inode = path.stat().st_ino
    repo.write("areas/inbox/m00.html", memory_html("Memory 0", "Ledger queue rewritten entirely."))
    repo.commit("edit", "areas/inbox/m00.html")
    indexer.update(repo.git, db, embedder, now=NOW)
    assert path.stat().st_ino != inode and damage(db) is None
    _assert_matches_sql(db, embedder)
    db.close()


def test_an_in_place_sync_rewrites_only_the_crcs_of_its_blocks(tmp_path: Path) -> None:
    """A one-row sync keeps the inode, changes one CRC of the table, and the file verifies."""
    repo, db, embedder = _world(tmp_path)
    path = matrix_path(db)
    assert path is not None
    header, _ = read_header(path)
    assert header is not None and block_count(header.capacity) >= 2 and header.capacity > CRC_BLOCK_ROWS
    start = table_offset(header.capacity, header.dim)
    before = path.read_bytes()[start:]
    repo.write("areas/inbox/m00.html", memory_html("Memory 0", "Ledger queue rewritten entirely."))
    repo.commit("edit", "areas/inbox/m00.html")
    inode = path.stat().st_ino
    indexer.update(repo.git, db, embedder, now=NOW)
    after = path.read_bytes()[start:]
    changed = [i // 4 for i in range(0, len(before), 4) if before[i:i + 4] != after[i:i + 4]]
    assert path.stat().st_ino == inode  # synced in place, not rebuilt
    assert changed == [_slot_of(db, "areas/inbox/m00.html") // CRC_BLOCK_ROWS]  # the new vector's block only
    assert damage(db) is None
    _assert_matches_sql(db, embedder)
    db.close()


def _memhtml(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git-memhtml", *args], cwd=root, capture_output=True, text=True, check=False)


def test_the_cli_reports_the_damage_and_doctor_fix_repairs_it(tmp_path: Path) -> None:
    """The fresh user's attack end to end through the installed command: 64 bytes overwritten in the body; search
    equals a rebuilt index's; ``index verify`` and ``doctor`` exit 1 naming the file with a hint; ``doctor --fix``
    exits 0 and ``index verify`` is clean again."""
    root = tmp_path / "mem"
    assert _memhtml(tmp_path, "init", str(root)).returncode == 0
    paths = []
    for i in range(8):
        p = root / f"areas/inbox/m{i}.html"
        p.write_text(memory_html(f"Memory {i}", f"Alpha beta cache number {i} deploys."), encoding="utf-8")
        paths.append(str(p.relative_to(root)))
    subprocess.run(["git", "-C", str(root), "add", *paths], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "seed"], check=True)
    assert _memhtml(root, "index", "rebuild").returncode == 0
    matrix = root / ".git" / "memhtml" / "vectors.f32"
    want = _memhtml(root, "search", "alpha cache", "--json").stdout
    _poke(matrix, 20000, struct.pack("<16f", *([1e3, -1e3] * 8)))
    verified = _memhtml(root, "index", "verify")
    assert verified.returncode == 1 and str(matrix) in verified.stdout + verified.stderr, verified
    assert "git memhtml doctor --fix" in verified.stdout + verified.stderr
    doctor = _memhtml(root, "doctor", "--json")
    assert doctor.returncode == 1 and str(matrix) in doctor.stdout, doctor
    assert _memhtml(root, "search", "alpha cache", "--json").stdout == want
    _poke(matrix, 20000, struct.pack("<16f", *([1e3, -1e3] * 8)))  # the search rebuilt it: damage it again
    fixed = _memhtml(root, "doctor", "--fix")
    assert fixed.returncode == 0, fixed
    assert _memhtml(root, "index", "verify").returncode == 0
    assert _memhtml(root, "search", "alpha cache", "--json").stdout == want


def test_a_long_lived_reader_rechecks_the_blocks_whose_crc_changed(tmp_path: Path) -> None:
    """One process keeps its mapping across in-place syncs: a real sync is re-checked and trusted (same mapping,
    new header); a forged one whose table names a new CRC for block 0 that its bytes do not have is refused, even
    though the header's own CRC and the table's CRC hold."""
    repo, db, embedder = _world(tmp_path)
    path = matrix_path(db)
    assert path is not None
    qvec = _qvec(embedder, "alpha beta")
    assert vector_ranks(db, qvec, embedder.space, Scope(), sync_stale=False) == _sql_arm(db, qvec, embedder.space,
                                                                                          Scope())
    mapped = mapped_file(path, embedder.dim)
    assert mapped is not None and mapped.verified is not None
    repo.write("areas/inbox/m00.html", memory_html("Memory 0", "Ledger queue rewritten entirely."))
    repo.commit("edit", "areas/inbox/m00.html")
    indexer.update(repo.git, db, embedder, now=NOW)
    _assert_matches_sql(db, embedder)
    assert mapped_file(path, embedder.dim) is mapped and mapped.verified == read_header(path)[0]
    header, _ = read_header(path)
    assert header is not None
    start = table_offset(header.capacity, header.dim)
    table = bytearray(path.read_bytes()[start : start + 4 * block_count(header.capacity)])
    table[0:4] = struct.pack("<I", (struct.unpack("<I", table[0:4])[0] + 1) & 0xFFFFFFFF)
    _poke(path, start, bytes(table))
    seq = db.query_one("SELECT seq FROM vector_state WHERE id = 1")
    assert seq is not None
    with db.atomic():
        db.execute("UPDATE vector_state SET seq = seq + 1 WHERE id = 1")
    _poke(path, 0, replace(header, seq=int(seq[0]) + 1, table_crc=crc_of_table(bytes(table))).pack())
    assert mapped_file(path, embedder.dim) is mapped  # same file: only the changed block is re-checked
    assert vector_ranks(db, qvec, embedder.space, Scope(), sync_stale=False) is None
    assert damage(db) is not None
    db.close()
