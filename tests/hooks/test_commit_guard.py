"""The commit guard (pre-commit, pre-merge-commit shims; git_memhtml/hooks/guard.py) with real git, real
``git-memhtml`` processes and a real ``kill -9`` at the ``after-ref`` fault point (docs/hooks.md "The commit
guard"). The porcelain-commit table lives in tests/trust/test_trust_acknowledged.py (``PLAIN_COMMITS``)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from git_memhtml.gitrepo.lock import write_lock
from git_memhtml.hooks.guard import index_files
from git_memhtml.hooks.install import install

ROOT = Path(__file__).resolve().parents[2]
NOW = "2026-11-30T10:00:00Z"
BATCH = [json.dumps({"title": f"guard {k}", "type": "semantic", "body": f"Guard fact {k} holds."}) for k in range(3)]


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "MEMHTML_NOW": NOW, "MEMHTML_HOOK_DETACH": "0", **extra}


def _git(root: Path, *args: str, env: dict[str, str] | None = None, check: bool = True
         ) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, env=env or _env(),
                          check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} exited {proc.returncode}: {proc.stderr}")
    return proc


def _memhtml(cwd: Path, *args: str, stdin: str | None = None, **extra: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("git-memhtml")
    return subprocess.run([str(exe) if exe.is_file() else "git-memhtml", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, env=_env(**extra), check=False)


def _tree(root: Path, rev: str = "HEAD") -> dict[str, str]:
    out = _git(root, "ls-tree", "-r", "-z", rev).stdout
    return {e.split("\t", 1)[1]: e.split()[2] for e in out.split("\0") if e}


def _killed(tmp_path: Path, *, side: bool = False) -> tuple[Path, dict[str, str], str]:
    """A memory repository with the hooks installed, whose ``apply`` of :data:`BATCH` was SIGKILLed after its ref
    move: ``(root, {batch path: blob sha}, batch commit sha)``. ``side``: a branch ``side`` with one commit
    (``side.txt``) forks from ``main`` before the batch."""
    root = tmp_path / "mem"
    assert _memhtml(tmp_path, "init", str(root)).returncode == 0
    assert _memhtml(root, "install").returncode == 0
    if side:
        _git(root, "checkout", "-q", "-b", "side")
        (root / "side.txt").write_text("side\n")
        _git(root, "add", "side.txt")
        _git(root, "commit", "-q", "-m", "side")
        _git(root, "checkout", "-q", "main")
    base = _tree(root)
    proc = _memhtml(root, "apply", "--json", stdin="\n".join(BATCH) + "\n", MEMHTML_FAULT_POINT="after-ref")
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    batch = {p: sha for p, sha in _tree(root).items() if p not in base}
    assert len(batch) == len(BATCH) and (root / ".git/memhtml/write-journal.json").is_file()
    return root, batch, _git(root, "rev-parse", "HEAD").stdout.strip()


@pytest.mark.parametrize(("index_file", "lock", "expected"), [
    (None, False, ["{g}/index"]),  # a hook run by hand
    (".git/index", False, ["{g}/index"]),  # plain `git commit`, `--amend`: relative, unlocked
    ("{g}/index.lock", True, ["{g}/index.lock"]),  # `git commit -a`
    ("{g}/next-index-7.lock", True, ["{g}/next-index-7.lock", "{g}/index.lock"]),  # `git commit <paths>`
    ("{g}/next-index-7.lock", False, ["{g}/next-index-7.lock"]),
])
def test_the_guard_writes_the_index_files_git_commits(tmp_path: Path, index_file: str | None, lock: bool,
                                                      expected: list[str]) -> None:
    git_dir = tmp_path / ".git"
    git_dir.mkdir()
    if lock:
        (git_dir / "index.lock").write_bytes(b"")
    named = None if index_file is None else index_file.replace("{g}", str(git_dir))
    got = index_files(git_dir, named, tmp_path)
    assert [p.resolve() for p in got] == [Path(e.replace("{g}", str(git_dir))).resolve() for e in expected]


def test_a_commit_is_refused_while_the_journal_cannot_be_finished_and_nothing_moves(tmp_path: Path) -> None:
    """Another writer holds the write lock: the guard waits ``memhtml.locktimeout`` at most, then git refuses the
    commit with the journal named and a hint; HEAD, the index and the journal are as they were."""
    root, batch, head = _killed(tmp_path)
    (root / "other.txt").write_text("mine\n")
    _git(root, "add", "other.txt")
    staged = _git(root, "ls-files", "-s").stdout
    assert not any(p in staged for p in batch)
    with write_lock(root / ".git", purpose="a test holding the lock", timeout=5):
        refused = _git(root, "commit", "-q", "-m", "x", env=_env(MEMHTML_LOCK_TIMEOUT="0.5"), check=False)
    assert refused.returncode != 0
    assert "write-journal.json" in refused.stderr and "commit refused" in refused.stderr
    assert "hint:" in refused.stderr and "--no-verify" in refused.stderr
    assert _git(root, "rev-parse", "HEAD").stdout.strip() == head
    assert _git(root, "ls-files", "-s").stdout == staged, "the guard wrote no index entry"
    assert (root / ".git/memhtml/write-journal.json").is_file()
    done = _git(root, "commit", "-q", "-m", "x")  # the lock is free: the same command now keeps the batch
    assert all(_tree(root).get(p) == sha for p, sha in batch.items()), done.stderr
    assert _git(root, "status", "--porcelain").stdout == ""


def test_without_a_journal_the_guard_starts_no_python(tmp_path: Path) -> None:
    """No journal: the shim is one file test, it never looks for git-memhtml (PATH without it commits quietly);
    with a journal and no git-memhtml on PATH the commit is refused, naming the journal."""
    root, batch, head = _killed(tmp_path)
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("git", "sh", "cat", "rm"):
        found = shutil.which(tool)
        assert found
        (bare / tool).symlink_to(found)
    no_tool = _env(PATH=str(bare))
    refused = _git(root, "commit", "-q", "--allow-empty", "-m", "x", env=no_tool, check=False)
    assert refused.returncode != 0 and "write-journal.json" in refused.stderr and "not on PATH" in refused.stderr
    assert _git(root, "rev-parse", "HEAD").stdout.strip() == head
    wrote = _memhtml(root, "write", "--type", "semantic", "--title", "Next", "--claim", "Next holds.")
    assert wrote.returncode == 0, wrote.stderr  # any writer finishes the journal
    assert not (root / ".git/memhtml/write-journal.json").exists() and _git(root, "status", "--porcelain").stdout == ""
    (root / "other.txt").write_text("mine\n")
    _git(root, "add", "other.txt")
    quiet = _git(root, "commit", "-q", "-m", "y", env=no_tool)
    assert "pre-commit" not in quiet.stderr and "refused" not in quiet.stderr
    assert all(_tree(root).get(p) == sha for p, sha in batch.items())


@pytest.mark.parametrize(("legacy_exit", "commits"), [(0, True), (1, False)])
def test_a_foreign_pre_commit_hook_runs_after_the_guard_and_decides(tmp_path: Path, legacy_exit: int,
                                                                     commits: bool) -> None:
    """A pre-commit hook of another tool (the pre-commit framework's) is kept as ``pre-commit.legacy``; it runs
    after the journal is finished (it sees the batch staged as HEAD has it) and its exit status decides."""
    root = tmp_path / "mem"
    assert _memhtml(tmp_path, "init", str(root)).returncode == 0
    hooks = root / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "pre-commit").write_text("#!/bin/sh\ngit diff --cached --name-status HEAD > \"$(git rev-parse "
                                      f"--git-dir)/foreign.log\"\nexit {legacy_exit}\n")
    (hooks / "pre-commit").chmod(0o755)
    report = install(root, root / ".git")
    assert ("pre-commit", "chained") in {(a.hook, a.action) for a in report.hooks}
    proc = _memhtml(root, "apply", "--json", stdin="\n".join(BATCH) + "\n", MEMHTML_FAULT_POINT="after-ref")
    assert proc.returncode == -signal.SIGKILL
    head = _git(root, "rev-parse", "HEAD").stdout.strip()
    (root / "other.txt").write_text("mine\n")
    _git(root, "add", "other.txt")
    done = _git(root, "commit", "-q", "-m", "x", check=False)
    assert (root / ".git" / "foreign.log").read_text() == "A\tother.txt\n", "the foreign hook saw the finished index"
    assert (done.returncode == 0) is commits, done.stderr
    assert _git(root, "rev-parse", "HEAD~1" if commits else "HEAD").stdout.strip() == head


def test_pre_merge_commit_finishes_the_journal_before_the_merge_commit(tmp_path: Path) -> None:
    """``git merge`` refuses on its own while the batch shows as staged deletions (nothing lost); once the index
    matches HEAD again (``git reset``), a merge commit runs the pre-merge-commit guard, which writes the batch
    files and ends the journal, so the merge leaves a clean status."""
    root, batch, _ = _killed(tmp_path, side=True)
    refused = _git(root, "merge", "-q", "--no-ff", "--no-edit", "side", check=False)
    assert refused.returncode != 0 and all(_tree(root).get(p) == sha for p, sha in batch.items())
    _git(root, "reset", "-q")  # the index follows HEAD; the work tree still lacks the batch
    assert (root / ".git/memhtml/write-journal.json").is_file()
    _git(root, "merge", "-q", "--no-ff", "--no-edit", "side")
    tree = _tree(root)
    assert all(tree.get(p) == sha for p, sha in batch.items()) and "side.txt" in tree
    assert all((root / p).is_file() for p in batch)
    assert not (root / ".git/memhtml/write-journal.json").exists()
    assert _git(root, "status", "--porcelain").stdout == ""


def test_a_journal_of_a_branch_no_longer_checked_out_writes_nothing_into_the_work_tree(tmp_path: Path) -> None:
    """Killed on ``main``, then the user switched to ``side``: a commit there must not get ``main``'s batch (the
    journal is dropped; git's checkout of ``main`` later brings the files), and ``main`` keeps it."""
    root, batch, head = _killed(tmp_path, side=True)
    _git(root, "reset", "-q", "--hard")  # the user's own way out: the index and files follow HEAD (the batch)
    assert all((root / p).is_file() for p in batch)
    _git(root, "checkout", "-q", "side")
    assert not any((root / p).exists() for p in batch)
    (root / "more.txt").write_text("more\n")
    _git(root, "add", "more.txt")
    _git(root, "commit", "-q", "-m", "on side")
    wrote = _memhtml(root, "write", "--type", "semantic", "--title", "Side", "--claim", "Side holds.")
    assert wrote.returncode == 0, wrote.stderr
    assert not any(p in _tree(root) for p in batch) and not any((root / p).exists() for p in batch)
    assert _git(root, "status", "--porcelain").stdout == ""
    assert not (root / ".git/memhtml/write-journal.json").exists()
    assert _git(root, "rev-parse", "main").stdout.strip() == head


def test_the_guard_finishes_a_linked_worktree_journal_in_that_worktree_index(tmp_path: Path) -> None:
    """A linked worktree keeps its journal and index under ``.git/worktrees/<n>`` (``.git`` is a ``gitdir:`` file
    the shim reads); a plain commit there keeps the batch, and the main checkout is not touched."""
    root = tmp_path / "mem"
    assert _memhtml(tmp_path, "init", str(root)).returncode == 0
    assert _memhtml(root, "install").returncode == 0
    linked = tmp_path / "linked"
    _git(root, "worktree", "add", "-q", "-b", "wt", str(linked))
    main_index = _git(root, "ls-files", "-s").stdout
    proc = _memhtml(linked, "apply", "--json", stdin="\n".join(BATCH) + "\n", MEMHTML_FAULT_POINT="after-ref")
    assert proc.returncode == -signal.SIGKILL
    batch = {p: sha for p, sha in _tree(linked).items() if p not in _tree(root)}
    assert len(batch) == len(BATCH) and (root / ".git/worktrees/linked/memhtml/write-journal.json").is_file()
    (linked / "other.txt").write_text("mine\n")
    _git(linked, "add", "other.txt")
    _git(linked, "commit", "-q", "-m", "x")
    tree = _tree(linked)
    assert all(tree.get(p) == sha for p, sha in batch.items()) and "other.txt" in tree
    assert _git(linked, "status", "--porcelain").stdout == ""
    assert not (root / ".git/worktrees/linked/memhtml/write-journal.json").exists()
    assert _git(root, "ls-files", "-s").stdout == main_index and not any((root / p).exists() for p in batch)
