"""The hook body in-process: inherited git variables, kill switch, time-bound setting, queued runs."""

from __future__ import annotations

import fcntl
import subprocess
from pathlib import Path

from git_memhtml.cli.common import init_memory as init_repo
from git_memhtml.gitrepo.process import scrub_git_env
from git_memhtml.hooks.runner import HOOK_TIMEOUT_S, hook_timeout, hooks_disabled, run_hook


def _none(key: str) -> str | None:
    return None


def test_scrub_removes_repository_locating_variables_and_keeps_identity() -> None:
    env = {"GIT_DIR": ".git/worktrees/x", "GIT_INDEX_FILE": ".git/next-index-1.lock", "GIT_WORK_TREE": "/w",
           "GIT_PREFIX": "sub/", "GIT_AUTHOR_NAME": "A", "PATH": "/bin"}
    assert scrub_git_env(env) == ".git/worktrees/x"
    assert env == {"GIT_AUTHOR_NAME": "A", "PATH": "/bin"}


def test_kill_switch_and_timeout_sources() -> None:
    assert hooks_disabled({"MEMHTML_HOOKS": "0"}, _none)
    assert hooks_disabled({}, lambda key: "off" if key == "memhtml.hooks" else None)
    assert not hooks_disabled({"MEMHTML_HOOKS": "1"}, lambda key: "0")
    assert hook_timeout({"MEMHTML_HOOK_TIMEOUT": "2.5"}, _none) == 2.5
    assert hook_timeout({"MEMHTML_HOOK_TIMEOUT": "soon"}, lambda key: "7") == 7.0
    assert hook_timeout({}, lambda key: "-1") == HOOK_TIMEOUT_S


def test_git_dir_of_another_repository_is_skipped(tmp_path: Path) -> None:
    root, other = tmp_path / "mem", tmp_path / "other"
    init_repo(root)
    init_repo(other)
    outcome = run_hook("post-commit", cwd=root, env={}, now="2026-01-01T00:00:00Z", embedder_factory=lambda: None,
                       git_dir_env=str(other / ".git"))
    assert outcome.status == "skipped" and "is not the repository" in outcome.message
    assert not (root / ".git" / "memhtml" / "index.db").exists()


def test_a_hook_that_finds_the_lock_held_queues_a_rerun_and_exits(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    init_repo(root)
    folder = root / ".git" / "memhtml"
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "hook.lock").open("a") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        outcome = run_hook("post-merge", cwd=root, env={}, now="2026-01-01T00:00:00Z",
                           embedder_factory=lambda: None)
    assert outcome.status == "queued"
    assert (folder / "hook.rerun").exists()
    assert "post-merge pid=" in (folder / "hooks.log").read_text()
    done = run_hook("post-merge", cwd=root, env={}, now="2026-01-01T00:00:00Z", embedder_factory=lambda: None)
    assert done.status == "updated" and not (folder / "hook.rerun").exists()


def test_sleep_worktrees_are_skipped(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    init_repo(root)
    wt = root / ".git" / "memhtml" / "worktrees" / "sleep-x"
    subprocess.run(["git", "-C", str(root), "worktree", "add", "-q", "--detach", str(wt)], check=True)
    outcome = run_hook("post-checkout", cwd=wt, env={}, now="2026-01-01T00:00:00Z", embedder_factory=lambda: None)
    assert outcome.status == "skipped" and "sleep worktree" in outcome.message
