"""One way into git (issue 9 item 2): every git child we start loses the one scrub list, and the commit identity
and dates come in as a parameter (docs/architecture.md "Environment and configuration").

The scrub table runs each of our git-child paths with ``GIT_DIR``, ``GIT_WORK_TREE``, ``GIT_INDEX_FILE``,
``GIT_OBJECT_DIRECTORY`` and ``GIT_NAMESPACE`` set in the parent to ANOTHER repository. A ``git`` wrapper
first on ``PATH`` writes down which repository-locating variables each child received, then runs the real git:
the operation must act on the right repository and the record must show children but no leaked variable.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pygit2
import pytest

from git_memhtml.cli.app import App
from git_memhtml.cli.common import init_memory
from git_memhtml.gitrepo import GitRepo
from git_memhtml.gitrepo.process import SCRUBBED_ENV, git_child_env, run_program
from git_memhtml.hooks.gitconfig import ensure_config, global_place
from git_memhtml.hooks.install import install
from git_memhtml.hooks.merge_driver import text_merge

ROOT = Path(__file__).resolve().parents[2]
_BIN = Path(sys.executable).with_name("git-memhtml")
EXE = [str(_BIN)] if _BIN.is_file() else [sys.executable, "-m", "git_memhtml"]


def _commit_count(root: Path) -> int:
    """Commits reachable from HEAD, read with pygit2 (no git child: the wrapper records only our code's)."""
    repo = pygit2.Repository(str(root))
    return sum(1 for _ in repo.walk(repo.head.target))


@dataclass
class World:
    """The repository under test, a decoy repository the parent's variables point at, the wrapper's record."""

    repo: Path
    decoy: Path
    record: Path

    def children(self) -> list[str]:
        """One line per git child the wrapper saw: the scrubbed variables it received (empty when none)."""
        return self.record.read_text().splitlines() if self.record.exists() else []


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    repo, decoy = tmp_path / "memory", tmp_path / "decoy"
    init_memory(repo)
    init_memory(decoy)
    real_git = shutil.which("git")
    assert real_git is not None
    record = tmp_path / "children.log"
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    names = " ".join(SCRUBBED_ENV)
    wrapper.write_text(
        "#!/bin/sh\n"
        f"line=''\nfor name in {names}; do\n"
        '  eval "set_=\\${$name+x}"\n'
        '  if [ -n "$set_" ]; then line="$line $name"; fi\n'
        "done\n"
        f'echo "child:$line" >> "{record}"\n'
        f'exec "{real_git}" "$@"\n'
    )
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GIT_DIR", str(decoy / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(decoy))
    monkeypatch.setenv("GIT_INDEX_FILE", str(decoy / ".git" / "index"))
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(decoy / ".git" / "objects"))
    monkeypatch.setenv("GIT_NAMESPACE", "decoy")
    return World(repo, decoy, record)


def _run_git(w: World) -> None:
    repo = GitRepo.discover(w.repo)
    assert repo.run_git(["rev-parse", "--show-toplevel"]).strip() == str(w.repo.resolve())
    assert repo.run_git_bytes(["rev-parse", "HEAD"]).decode().strip() == repo.head_sha()


def _commit_files(w: World) -> None:
    decoy_head = GitRepo.discover(w.decoy).head_sha()
    repo = GitRepo.discover(w.repo)
    sha = repo.commit_files({"resources/note.txt": b"one\n"}, "add a note")  # moves the ref with git update-ref
    assert sha is not None and repo.head_sha() == sha
    assert GitRepo.discover(w.decoy).head_sha() == decoy_head


def _fast_forward(w: World) -> None:
    repo = GitRepo.discover(w.repo)
    head = repo.head_sha()
    assert head is not None
    repo.create_branch("side", head)
    repo.run_git(["checkout", "-q", "side"])
    sha = repo.commit_files({"resources/side.txt": b"side\n"}, "on side")
    assert sha is not None
    repo.run_git(["checkout", "-q", "main"])
    repo.fast_forward("main", sha)  # the checked-out branch: git merge --ff-only
    assert (w.repo / "resources" / "side.txt").read_bytes() == b"side\n"


def _install_hooks(w: World) -> None:
    repo = GitRepo.discover(w.repo)
    report = install(repo.root, repo.common_dir)  # git rev-parse --git-path hooks, git config --file
    assert report.hooks_dir == str(repo.common_dir / "hooks")
    assert (repo.common_dir / "hooks" / "post-commit").is_file()


def _global_config(w: World) -> None:
    place = global_place()
    assert ensure_config(place, "install")
    assert not ensure_config(place, "install")  # the second look (git config --file --get-all) finds the include


def _text_merge(w: World) -> None:
    base, ours, theirs = (w.repo.parent / n for n in ("base.txt", "ours.txt", "theirs.txt"))
    base.write_text("a\nb\nc\n")
    ours.write_text("A\nb\nc\n")
    theirs.write_text("a\nb\nC\n")
    assert text_merge(base, ours, theirs, "x.txt") == 0
    assert ours.read_text() == "A\nb\nC\n"


def _cli_write(w: World) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([*EXE, "-C", str(w.repo), "write", "--type", "semantic", "--title", "Port",
                           "--claim", "The service listens on port 8080.", "--entity", "service:svc"],
                          capture_output=True, text=True, env=env, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (_commit_count(w.repo), _commit_count(w.decoy)) == (2, 1)  # each has init's scaffold commit
    repo = GitRepo.discover(w.repo)
    head = repo.head_sha()
    assert head is not None
    added = repo.changed_paths(repo.parents(head)[0], head)
    assert len(added) == 1 and added[0].endswith(".html")


SCRUB_ROWS: list[tuple[str, Callable[[World], None]]] = [
    ("GitRepo.run_git", _run_git),
    ("commit_files update-ref", _commit_files),
    ("fast_forward merge --ff-only", _fast_forward),
    ("hooks install", _install_hooks),
    ("global merge-driver config", _global_config),
    ("merge driver text merge", _text_merge),
    ("CLI write in a subprocess", _cli_write),
]


@pytest.mark.parametrize("operation", [row[1] for row in SCRUB_ROWS], ids=[row[0] for row in SCRUB_ROWS])
def test_no_git_child_inherits_a_repository_locating_variable(world: World,
                                                             operation: Callable[[World], None]) -> None:
    operation(world)
    children = world.children()
    assert children, "the operation started no git child: the row proves nothing"
    assert [c for c in children if c != "child:"] == []


def test_the_forge_client_loses_the_same_variables(world: World) -> None:
    out = run_program(["env"], cwd=world.repo, env=os.environ, timeout=30)
    names = {line.split("=", 1)[0] for line in out.stdout.splitlines()}
    assert out.returncode == 0 and "PATH" in names and not names & set(SCRUBBED_ENV)


def test_git_child_env_keeps_identity_and_removes_only_the_scrub_list() -> None:
    base = dict.fromkeys(SCRUBBED_ENV, "x") | {"GIT_AUTHOR_NAME": "A", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/b"}
    env = git_child_env(base)
    assert not set(env) & set(SCRUBBED_ENV)
    assert (env["GIT_AUTHOR_NAME"], env["GIT_CONFIG_NOSYSTEM"], env["PATH"]) == ("A", "1", "/b")
    assert (env["MEMHTML_HOOKS"], env["LC_ALL"], env["GIT_TERMINAL_PROMPT"]) == ("0", "C", "0")


PARAM_ENV = {
    "GIT_AUTHOR_NAME": "Param Author", "GIT_AUTHOR_EMAIL": "param.author@example.invalid",
    "GIT_COMMITTER_NAME": "Param Committer", "GIT_COMMITTER_EMAIL": "param.committer@example.invalid",
    "GIT_AUTHOR_DATE": "2031-03-04T05:06:07+02:00", "GIT_COMMITTER_DATE": "@1900000000 -0130",
}
"""An identity and dates unlike the conftest's (Test Author, 2026-01-15), given only as a parameter."""


def _author_and_committer(root: Path, sha: str) -> tuple[tuple[str, str, int, int], tuple[str, str, int, int]]:
    commit = pygit2.Repository(str(root)).get(sha)
    assert isinstance(commit, pygit2.Commit)
    a, c = commit.author, commit.committer
    return (a.name, a.email, a.time, a.offset), (c.name, c.email, c.time, c.offset)


EXPECTED = (("Param Author", "param.author@example.invalid", 1930359967, 120),
            ("Param Committer", "param.committer@example.invalid", 1900000000, -90))


def _via_discover(root: Path, env: dict[str, str]) -> GitRepo:
    return GitRepo.discover(root, env=env)


def _via_app(root: Path, env: dict[str, str]) -> GitRepo:
    return App(repo_path=root, env=env).repo()


def _via_worktree(root: Path, env: dict[str, str]) -> GitRepo:
    repo = GitRepo.discover(root, env=env)
    head = repo.head_sha()
    assert head is not None
    repo.create_branch("wt", head)
    return repo.add_worktree("wt", root.parent / "wt", "wt")  # a linked work tree keeps its opener's env


IDENTITY_ROWS: list[tuple[str, Callable[[Path, dict[str, str]], GitRepo]]] = [
    ("GitRepo.discover(env=)", _via_discover),
    ("App(env=).repo()", _via_app),
    ("add_worktree of a repo opened with env", _via_worktree),
]


@pytest.mark.parametrize("opener", [row[1] for row in IDENTITY_ROWS], ids=[row[0] for row in IDENTITY_ROWS])
def test_identity_and_dates_given_as_a_parameter_win_over_the_process_environment(
        tmp_path: Path, opener: Callable[[Path, dict[str, str]], GitRepo]) -> None:
    root = tmp_path / "memory"
    init_memory(root)
    env = {**os.environ, **PARAM_ENV}
    repo = opener(root, env)
    assert os.environ["GIT_AUTHOR_NAME"] == "Test Author"  # the process says otherwise
    sha = repo.commit_files({"resources/a.txt": b"a\n"}, "by parameter")
    assert sha is not None
    assert _author_and_committer(repo.root, sha) == EXPECTED
    staged = repo.root / "resources" / "b.txt"
    staged.write_bytes(b"b\n")
    repo.stage(["resources/b.txt"])
    second = repo.commit("staged by parameter")
    assert second is not None and _author_and_committer(repo.root, second) == EXPECTED


def test_init_with_an_env_commits_its_scaffold_with_that_identity(tmp_path: Path) -> None:
    report = init_memory(tmp_path / "memory", env={**os.environ, **PARAM_ENV})
    assert report.commit_sha is not None
    assert _author_and_committer(tmp_path / "memory", report.commit_sha) == EXPECTED


def test_a_repo_opened_without_env_reads_the_live_environment_at_each_commit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "memory"
    init_memory(root)
    repo = GitRepo.discover(root)  # opened before the variables change
    for key, value in PARAM_ENV.items():
        monkeypatch.setenv(key, value)
    sha = repo.commit_files({"resources/a.txt": b"a\n"}, "live")
    assert sha is not None and _author_and_committer(root, sha) == EXPECTED


def test_the_cli_snapshot_is_taken_when_the_invocation_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "memory"
    init_memory(root)
    app = App(repo_path=root)
    for key, value in PARAM_ENV.items():
        monkeypatch.setenv(key, value)
    sha = app.repo().commit_files({"resources/a.txt": b"a\n"}, "snapshot")
    assert sha is not None
    author, _ = _author_and_committer(root, sha)
    assert author[:2] == ("Test Author", "author@example.invalid")
