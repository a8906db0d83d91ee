"""``GitRepo`` is one class put together from a module per noun (issue 12: no module of the choke point over 500
lines), and every method of the one public class is reachable under its old name."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import git_memhtml.gitrepo as gitrepo
from git_memhtml.gitrepo import GitRepo
from git_memhtml.gitrepo.reads import Reads
from git_memhtml.gitrepo.status import WorkTree
from git_memhtml.gitrepo.worktrees import Worktrees

MAX_LINES = 500
"""The size limit of a module of ``gitrepo/`` (issue 12, item (d) of session 3)."""

API = ("discover", "init", "head_sha", "current_branch", "branch_sha", "branches", "read_blob", "tree_blobs",
       "tree_files", "blobs_at", "read_path_at", "diff", "tree_delta", "tree_changes", "changed_paths", "dirty",
       "is_ancestor", "merge_base", "commits_between", "commit_sha", "parents", "commit_message", "log_trailers",
       "stage", "move", "unstage_all", "restore_paths", "staged_changes", "create_branch", "delete_branch",
       "add_worktree", "add_detached_worktree", "worktree_path", "remove_worktree", "discard_folder",
       "prune_dangling_worktrees", "trash_folder", "sweep_trash", "fast_forward", "config_get", "config_set",
       "run_git", "run_git_bytes", "cherry_pick_in_memory", "replay_commit", "move_branch", "commit",
       "commit_files", "write_lock")
"""Public methods callers use (before the split they were all defined in ``gitrepo/repo.py``)."""


@pytest.mark.parametrize("module", sorted(Path(gitrepo.__file__).parent.glob("*.py")), ids=lambda p: p.name)
def test_no_gitrepo_module_is_over_the_limit(module: Path) -> None:
    assert len(module.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


def test_every_public_method_is_on_gitrepo() -> None:
    missing = [name for name in API if not callable(getattr(GitRepo, name, None))]
    assert missing == []
    assert issubclass(GitRepo, (Reads, WorkTree, Worktrees))
    for mixin in (Reads, WorkTree, Worktrees):
        own = [n for n, v in vars(mixin).items() if inspect.isfunction(v) and not n.startswith("__")]
        assert own and all(getattr(GitRepo, n) is getattr(mixin, n) for n in own), mixin.__name__


def test_a_linked_worktree_opens_as_a_gitrepo_with_the_same_environment(tmp_path: Path) -> None:
    env = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "T",
           "GIT_COMMITTER_EMAIL": "t@example.org", "HOME": str(tmp_path)}
    repo = GitRepo.init(tmp_path / "r", env=env)
    (repo.root / "a.txt").write_text("a")
    repo.stage(["a.txt"])
    sha = repo.commit("first")
    assert sha is not None
    repo.create_branch("side", sha)
    linked = repo.add_worktree("side", tmp_path / "wt" / "side", "side")
    assert type(linked) is GitRepo and linked.env is repo.env and linked.head_sha() == sha
    detached = repo.add_detached_worktree("det", tmp_path / "wt" / "det", sha)
    assert type(detached) is GitRepo and detached.current_branch() is None and detached.env is repo.env
