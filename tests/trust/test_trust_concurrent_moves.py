"""Trust rule: no command exits 3 because another process moved a memory while it ran (docs/store.md "Path
arguments"). ``read`` and ``correct`` resolve their path outside the write lock; an ``archive`` (or ``correct``,
or a ``sleep merge``) in another process may move the file before it is read. That is a refusal naming the
archived copy (exit 1, ``ERR_PATH_NOT_FOUND``), never an internal error with a crash report.

The first test takes the interleaving apart (the path resolved, a real ``archive`` process, then the read); the
second races real ``read`` processes against real ``archive`` processes of the same paths.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from git_memhtml.cli.app import App
from git_memhtml.errors import PathNotFound
from git_memhtml.service.memories import read, target_type
from tests.trust.test_trust_acknowledged import data_of, head_tree, mem, op_line, run, status

__all__ = ["mem"]  # the fixture this module uses

PAIRS = 16


def _seed(root: Path, count: int) -> list[str]:
    stream = "\n".join(op_line(f"moved {k}", f"Moved fact {k} says the shard holds {k} keys.") for k in range(count))
    proc = run(root, "apply", "--json", stdin=stream)
    assert proc.returncode == 0, proc.stderr
    return [r["path"] for r in data_of(proc)["results"]]


def test_a_memory_archived_after_it_was_resolved_is_not_found_naming_its_archived_copy(mem: Path) -> None:
    path = _seed(mem, 1)[0]
    app = App(repo_path=mem)
    resolved = app.memory_path(path, "read")  # what `read` and `correct` do at the CLI edge, without the lock
    moved = run(mem, "archive", path, "--reason", "another process", "--json")  # then another process moves it
    assert moved.returncode == 0, moved.stderr
    archived = data_of(moved)["archive_path"]
    assert archived in head_tree(mem)
    with app.index(catch_up=False) as db, pytest.raises(PathNotFound) as caught:
        read(app, db, resolved, now="2026-11-30T10:00:00Z")
    assert archived in caught.value.message
    with pytest.raises(PathNotFound) as caught:
        target_type(app, resolved)  # `correct`'s default type, read before the lock
    assert archived in caught.value.message


def test_read_racing_archive_of_the_same_memory_is_answered_or_refused_never_a_crash(mem: Path) -> None:
    paths = _seed(mem, PAIRS)

    def pair(k: int) -> list[tuple[str, int, str, str]]:
        with ThreadPoolExecutor(2) as pool:
            archive = pool.submit(run, mem, "archive", paths[k], "--reason", "race", "--json")
            time.sleep(0.1 + 0.02 * (k % 12))  # the read starts while the archive runs, at staggered instants
            read = pool.submit(run, mem, "read", paths[k], "--json")
            return [(name, p.returncode, p.stdout, p.stderr) for name, p in (("archive", archive.result()),
                                                                                 ("read", read.result()))]

    with ThreadPoolExecutor(3) as pool:
        outcomes = [o for pair_outcomes in pool.map(pair, range(PAIRS)) for o in pair_outcomes]
    for name, code, out, err in outcomes:
        assert code in (0, 1), f"{name} exit {code}: {err[-1500:]}"
        if name == "read" and code == 1:
            assert json.loads(out)["code"] == "ERR_PATH_NOT_FOUND", out
    assert all(code == 0 for name, code, _, _ in outcomes if name == "archive")
    assert status(mem) == ""
