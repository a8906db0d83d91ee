"""With the hooks installed, ``git pull`` alone records a forge-merged run: post-merge's catch-up reconciles it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from git_memhtml.gitrepo import GitRepo
from git_memhtml.hooks.install import install
from git_memhtml.index.db import IndexDB
from tests.forge.forge_helpers import (
    MARK,
    NOW,
    add_ledger_commit,
    applied_at,
    cli,
    git,
    memory_repo,
    promoted,
    set_promoted,
    sleep_run,
)

pytestmark = pytest.mark.slow


def test_pull_with_hooks_applies_the_ledger_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("MEMHTML_HOOK_DETACH", "0")
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    repo = memory_repo(tmp_path, capsys)
    install(repo, GitRepo.discover(repo).common_dir)
    bare = tmp_path / "forge.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "origin", "main")
    run = sleep_run(repo, capsys)
    add_ledger_commit(repo, run, [MARK])
    git(repo, "push", "-q", "origin", run)
    forge = tmp_path / "forge-checkout"
    git(tmp_path, "clone", "-q", str(bare), str(forge))
    git(forge, "merge", "-q", "--no-ff", "-m", "Merge pull request #3", f"origin/{run}")
    git(forge, "push", "-q", "origin", "main")

    git(repo, "pull", "-q", "--ff-only", "origin", "main")  # post-merge fires; no git memhtml command runs
    assert promoted(repo) == 1 and applied_at(repo, run) == [NOW]
    db = IndexDB.for_repo(GitRepo.discover(repo))
    try:
        assert db.query("SELECT how FROM state.sleep_landings WHERE run_id = ?", (run,)) == [("merge-commit",)]
        assert db.query("SELECT status FROM state.sleep_runs WHERE run_id = ?", (run,)) == [("merged",)]
    finally:
        db.close()
    log = (repo / ".git" / "memhtml" / "hooks.log").read_text()
    assert f"{run} landed (merge-commit), 1 marks applied" in log

    set_promoted(repo, 0)
    git(repo, "pull", "-q", "--ff-only", "origin", "main")
    git(repo, "checkout", "-q", "-b", "elsewhere")  # post-checkout catches up too
    assert promoted(repo) == 0 and applied_at(repo, run) == [NOW]
    code, status = cli(capsys, "-C", str(repo), "sleep", "status")
    assert code == 0 and status["data"]["reconciled"] == []
