"""Removing a run's worktree costs a rename and a prune, and every state a kill leaves is cleaned by the next run
(issue 12: "Removing a run's worktree ≤ 2 s at 10k (today 26 s)"; git_memhtml/gitrepo/repo.py ``remove_worktree``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from git_memhtml.cli.demo import DEMO_CORPUS
from git_memhtml.cli.main import main
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.engine.runplace import next_run_id, worktree_folder

DATE = "2026-02-01"


def _worktrees(repo: GitRepo) -> list[str]:
    """``git worktree list --porcelain`` records; each says ``prunable`` when its folder is gone."""
    return [r for r in repo.run_git(["worktree", "list", "--porcelain"]).split("\n\n") if r.strip()]


def _wait_gone(path: Path, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not path.exists():
            return True
        time.sleep(0.05)
    return not path.exists()


def _run(root: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    capsys.readouterr()
    code = main(["-C", str(root), "sleep", "run", "--date", DATE, "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    data = json.loads(out)["data"]
    assert isinstance(data, dict)
    return data


@pytest.fixture
def memory(tmp_path: Path) -> GitRepo:
    root = tmp_path / "mem"
    assert main(["init", str(root)]) == 0
    assert main(["-C", str(root), "apply", "--file", str(DEMO_CORPUS)]) == 0
    return GitRepo.discover(root)


def _fill(folder: Path, files: int) -> None:
    folder.mkdir(parents=True)
    for i in range(files):
        (folder / f"f{i}.html").write_bytes(b"x" * 100)


def test_a_run_leaves_one_worktree_and_its_folder_is_deleted(memory: GitRepo,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    data = _run(memory.root, capsys)
    run_id = str(data["runId"])
    assert len(_worktrees(memory)) == 1  # the checkout only: no linked worktree, none prunable
    assert not worktree_folder(memory, run_id).exists()
    trash = memory.trash_folder()
    assert all(_wait_gone(entry) for entry in (trash.iterdir() if trash.is_dir() else []))


def test_remove_worktree_puts_the_folder_aside_at_once(memory: GitRepo) -> None:
    """The folder leaves the worktrees place and the admin dir goes in one call; the files go in the background."""
    sha = memory.head_sha()
    assert sha is not None
    memory.create_branch("sleep/t", sha)
    folder = memory.common_dir / "memhtml" / "worktrees" / "sleep-t"
    tree = memory.add_worktree("sleep-t", folder, "sleep/t")
    _fill(tree.root / "projects" / "bulk", 2000)
    memory.remove_worktree("sleep-t")
    assert not folder.exists() and "sleep-t" not in memory.run_git(["worktree", "list"])
    assert not (memory.common_dir / "worktrees" / "sleep-t").exists()
    trash = memory.trash_folder()
    assert all(_wait_gone(entry) for entry in trash.iterdir())


def test_a_dangling_worktree_is_pruned_by_the_next_run(memory: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    """A kill between the rename and the prune: registered, its folder gone."""
    sha = memory.head_sha()
    assert sha is not None
    memory.create_branch("sleep/killed", sha)
    folder = memory.common_dir / "memhtml" / "worktrees" / "sleep-killed"
    memory.add_worktree("sleep-killed", folder, "sleep/killed")
    aside = memory.trash_folder() / f"sleep-killed.{int(time.time())}.dead"
    aside.parent.mkdir(parents=True, exist_ok=True)
    folder.rename(aside)
    assert any("prunable" in record for record in _worktrees(memory))
    _run(memory.root, capsys)
    assert len(_worktrees(memory)) == 1


def test_an_unregistered_folder_of_the_next_run_is_discarded(memory: GitRepo,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A folder under the run's worktree place that no worktree owns (a kill of an older teardown) does not block
    the run that needs the place."""
    db = IndexDB.for_repo(memory)
    try:
        run_id = next_run_id(memory, DATE, db)
    finally:
        db.close()
    folder = worktree_folder(memory, run_id)
    _fill(folder, 20)
    data = _run(memory.root, capsys)
    assert data["runId"] == run_id and not data.get("failedPhases")
    assert not folder.exists() and len(_worktrees(memory)) == 1


def test_aged_trash_is_swept_and_young_trash_is_left_to_its_deleter(memory: GitRepo) -> None:
    trash = memory.trash_folder()
    old = trash / f"sleep-x.{int(time.time()) - 3600}.aaaa"
    odd = trash / "not-a-stamp"
    young = trash / f"sleep-y.{int(time.time())}.bbbb"
    for folder in (old, odd, young):
        _fill(folder, 10)
    swept = memory.sweep_trash()
    assert sorted(swept) == sorted([old.name, odd.name])
    assert _wait_gone(old) and _wait_gone(odd)
    assert young.is_dir() and len(list(young.iterdir())) == 10


KILLER = """
import sys
from pathlib import Path
from git_memhtml.gitrepo import GitRepo
repo = GitRepo.discover(Path(sys.argv[1]))
print("go", flush=True)
repo.remove_worktree("sleep-k")
"""


@pytest.mark.parametrize("delay_ms", [0, 2, 10, 40])
def test_kill_9_during_teardown_leaves_a_state_the_next_removal_cleans(memory: GitRepo, delay_ms: int) -> None:
    """SIGKILL a real process removing a worktree at several moments; whatever it left, ``git worktree list``
    reads, and the next removal (with the trash grace spent) leaves one worktree and an empty trash."""
    sha = memory.head_sha()
    assert sha is not None
    memory.create_branch("sleep/k", sha)
    folder = memory.common_dir / "memhtml" / "worktrees" / "sleep-k"
    tree = memory.add_worktree("sleep-k", folder, "sleep/k")
    _fill(tree.root / "projects" / "bulk", 3000)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, "-c", KILLER, str(memory.root)], stdout=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"go"
    time.sleep(delay_ms / 1000)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    _worktrees(memory)  # git reads whatever was left
    memory.remove_worktree("sleep-k")
    memory.sweep_trash(grace_s=-1)
    assert len(_worktrees(memory)) == 1 and not folder.exists()
    trash = memory.trash_folder()
    assert all(_wait_gone(entry) for entry in (trash.iterdir() if trash.is_dir() else []))


def test_a_dangling_worktree_of_yours_elsewhere_is_left_to_git(memory: GitRepo, tmp_path: Path) -> None:
    """Only our worktrees (under ``<common dir>/memhtml/``) are pruned; yours on a drive not mounted now stay."""
    sha = memory.head_sha()
    assert sha is not None
    memory.create_branch("mine", sha)
    folder = tmp_path / "elsewhere" / "mine"
    memory.add_worktree("mine", folder, "mine")
    folder.rename(tmp_path / "unmounted")
    memory.remove_worktree("some-other")
    assert "mine" in memory.run_git(["worktree", "list", "--porcelain"])
