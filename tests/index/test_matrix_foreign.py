"""Something other than a regular file at ``vectors.f32`` (docs/index.md §3.12; found by a fresh-user attack):
a FIFO never blocks a reader, a directory never leaves a copy of the matrix behind, and ``index verify`` and
``doctor`` name what is there. A temporary left by a killed build is swept by the next build. Real files, real
SQLite, real FIFOs; each reader call runs under a timeout so a hang fails the test instead of the suite."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from git_memhtml.doctor import fix
from git_memhtml.index.db import IndexDB
from git_memhtml.index.matrix import sync
from git_memhtml.index.matrix_file import matrix_path, read_header
from git_memhtml.index.matrix_read import damage
from git_memhtml.index.retrieval import search
from git_memhtml.index.verify import verify
from tests.index.index_helpers import NOW
from tests.index.test_matrix import QUERIES, _world

Place = Callable[[Path], None]


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _directory(path: Path) -> None:
    path.mkdir()
    (path / "keep.txt").write_text("a user's file\n")


def _socket(path: Path) -> None:
    import socket

    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))


FOREIGN: dict[str, Place] = {"fifo": _fifo, "directory": _directory, "socket": _socket}
"""What may be put where the matrix lives."""


HANG_GUARD_S = 60.0
"""How long a call may take before the test calls it blocked: a hang guard (the calls take milliseconds; an open
blocked on a fifo never returns), never a measure."""


def _within(call: Callable[[], object]) -> object:
    """``call()``'s result, failing the test when it never returns (a blocked open) within :data:`HANG_GUARD_S`."""
    box: list[object] = []
    worker = threading.Thread(target=lambda: box.append(call()), daemon=True)
    worker.start()
    worker.join(HANG_GUARD_S)
    if worker.is_alive():
        pytest.fail(f"the call never returned: it blocked ({HANG_GUARD_S:g} s hang guard)")
    return box[0]


def _leftovers(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name + ".") and
                  p.name.endswith(".tmp"))


@pytest.mark.parametrize("kind", list(FOREIGN))
def test_a_foreign_entry_never_blocks_never_leaks_and_is_named(tmp_path: Path, kind: str) -> None:
    repo, db, embedder = _world(tmp_path)
    path = matrix_path(db)
    assert path is not None
    want = {q: search(db, q, embedder=embedder, now=NOW, use_matrix=False) for q in QUERIES}
    path.unlink()
    FOREIGN[kind](path)
    assert read_header(path) == (None, -1)
    found = _within(lambda: damage(db))
    assert isinstance(found, str) and str(path) in found and "fix:" in found, found
    assert verify(repo.git, db, now=NOW).matrix_damage == found
    for _ in range(2):  # every search: same answer, no hang, no copy of the matrix left beside it
        got = _within(lambda: {q: search(db, q, embedder=embedder, now=NOW) for q in QUERIES})
        assert got == want
        assert _leftovers(path) == []
    if kind == "directory":  # os.replace cannot replace it: the build fails, is reported, and leaves nothing
        assert sync(db, full=True).result == "failed"
        assert _leftovers(path) == [] and (path / "keep.txt").read_text() == "a user's file\n"
        report = fix(repo.git, db, embedder, now=NOW)
        assert report.index.matrix_damage is not None and not any("matrix" in a for a in report.fixed)
        assert (path / "keep.txt").is_file()  # never removed: a person moves it away
    else:  # the next build replaces it with a checked file
        assert sync(db, full=True).result == "built"
        assert damage(db) is None and read_header(path)[0] is not None
    db.close()


def test_a_killed_builds_temporary_is_swept_by_the_next_build(tmp_path: Path) -> None:
    _, db, _ = _world(tmp_path)
    path = matrix_path(db)
    assert path is not None
    stale = path.with_name(f"{path.name}.999999.tmp")
    stale.write_bytes(path.read_bytes())  # what a build killed before its rename leaves
    kept = path.with_name(f"{path.name}.notes.tmp")  # not ours (not <name>.<pid>.tmp): kept
    kept.write_text("x")
    assert sync(db, full=True).result == "built"
    assert not stale.exists() and kept.read_text() == "x"
    db.close()


def test_a_fifo_at_the_matrix_does_not_hang_a_new_index_handle(tmp_path: Path) -> None:
    repo, db, embedder = _world(tmp_path)
    path = matrix_path(db)
    assert path is not None
    db.close()
    path.unlink()
    os.mkfifo(path)
    fresh = IndexDB.for_repo(repo.git)
    got = _within(lambda: search(fresh, "alpha beta", embedder=embedder, now=NOW))
    assert got == search(fresh, "alpha beta", embedder=embedder, now=NOW, use_matrix=False)
    fresh.close()
