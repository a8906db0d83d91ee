"""Git's status and staging beside another process rewriting work-tree files (docs/git.md §1.12).

libgit2 stats a tracked file, then hashes it with the size it stat'ed; when another process replaces the file with
a shorter one in between, the whole walk fails with ``error reading file for hashing``. A writer replaces memory
files atomically all the time, so a second command's status met that failure under load (CI, the race of
tests/trust/test_trust_acknowledged.py). These tests run a real churning process beside real status walks.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from git_memhtml.errors import GitError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.gitrepo import status as status_module

FILES = 120

CHURN = """
import os, random, sys, time
root, count, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
sizes = [os.path.getsize(os.path.join(root, f"m{n}.html")) for n in range(count)]
end = time.time() + seconds
while time.time() < end:
    for n in range(count):
        path = os.path.join(root, f"m{n}.html")
        temp = os.path.join(root, f".m{n}.html.churn")
        with open(temp, "w") as handle:
            handle.write("y" * (sizes[n] - random.choice((0, 0, 40))))
        os.replace(temp, path)
        time.sleep(0.0005)
"""
"""Replaces every file again and again, atomically, with the committed size or 40 bytes less: the same size makes
libgit2 hash the file; the shorter replacement, landing between its stat and its read, breaks the hash. A writer
rewrites about 2,000 files a second (0.5 ms apart), as a busy agent's batch does; with no pause at all, on this
2-core machine nearly every walk met a change, so twelve attempts failed at random in about half the runs, on the
code before issue 27 too."""


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    root = tmp_path / "mem"
    root.mkdir()
    for n in range(FILES):
        (root / f"m{n}.html").write_text("x" * (200 + 37 * n))
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.invalid",
                    "commit", "-qm", "seed"], check=True)
    return GitRepo.discover(root)


@pytest.fixture
def churn(repo: GitRepo) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([sys.executable, "-c", CHURN, str(repo.root), str(FILES), "60"])
    time.sleep(0.3)  # the churn is under way
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def test_the_race_is_real_for_a_bare_libgit2_status(repo: GitRepo, churn: subprocess.Popen[bytes]) -> None:
    """The failure the retry answers: libgit2's own status walk fails beside the churn (else the next tests
    prove nothing)."""
    raw = pygit2.Repository(str(repo.root))
    failures = 0
    deadline = time.monotonic() + 30
    while failures == 0 and time.monotonic() < deadline:
        try:
            raw.status()
        except OSError as exc:
            assert "error reading file for hashing" in str(exc)
            failures += 1
    assert failures > 0, "no status walk failed in 30 s: the churn did not reach libgit2's stat-then-hash window"


def test_dirty_never_fails_beside_a_rewriting_process(repo: GitRepo, churn: subprocess.Popen[bytes]) -> None:
    for _ in range(60):
        dirty = [e for e in repo.dirty() if not e.path.endswith(".churn")]  # the churn's own temporaries
        assert {e.path for e in dirty} <= {f"m{n}.html" for n in range(FILES)}
        assert not any(e.deleted for e in dirty)  # replaced, never missing


def test_stage_never_fails_beside_a_rewriting_process(repo: GitRepo, churn: subprocess.Popen[bytes]) -> None:
    paths = [f"m{n}.html" for n in range(0, FILES, 3)]
    for _ in range(30):
        repo.stage(paths)
    index = pygit2.Repository(str(repo.root)).index
    assert all(path in index for path in paths)


def test_a_tree_that_never_settles_is_a_git_error_naming_the_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(status_module, "RESCAN_PAUSE_S", 0.0)
    calls = 0

    def always_racing() -> None:
        nonlocal calls
        calls += 1
        raise OSError("error reading file for hashing: ")

    with pytest.raises(GitError) as caught:
        status_module._settled(always_racing, "git status")
    assert calls == status_module.RESCAN_ATTEMPTS
    assert str(caught.value).startswith("git status: work-tree files kept changing")
    assert caught.value.hint


def test_any_other_disk_failure_is_raised_at_once() -> None:
    calls = 0

    def broken() -> None:
        nonlocal calls
        calls += 1
        raise OSError("Input/output error")

    with pytest.raises(OSError, match="Input/output error"):
        status_module._settled(broken, "git status")
    assert calls == 1
