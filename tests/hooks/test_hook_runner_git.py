"""The installed hooks under real git commands: catch-up, convergence after reset, broken index, kill switch."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from git_memhtml.cli.common import init_memory as init_repo
from git_memhtml.gitrepo import GitRepo
from git_memhtml.hooks.install import install
from git_memhtml.index.db import IndexDB
from tests.hooks.hooks_helpers import git, memhtml, memory, write

pytestmark = pytest.mark.slow


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMHTML_HOOK_DETACH", "0")
    root = tmp_path / "mem"
    init_repo(root)
    install(root, root / ".git")
    return root


def _indexed(root: Path) -> tuple[set[str], str | None]:
    db = IndexDB.for_repo(GitRepo.discover(root))
    try:
        paths = {r[0] for r in db.query("SELECT path FROM files")}
        row = db.query_one("SELECT head_sha FROM index_state WHERE id = 1")
    finally:
        db.close()
    return paths, (row[0] if row else None)


def _head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").stdout.strip()


def _log(root: Path) -> str:
    path = root / ".git" / "memhtml" / "hooks.log"
    return path.read_text() if path.exists() else ""


def _commit_memory(root: Path, path: str, title: str, claim: str) -> None:
    write(root, path, memory(title, claim))
    git(root, "add", path)
    git(root, "commit", "-qm", f"add {path}")


def test_a_real_commit_makes_the_memory_searchable(repo: Path) -> None:
    _commit_memory(repo, "areas/ops/timeout.html", "Checkout timeout", "The checkout upstream timeout is 30 s.")
    paths, head = _indexed(repo)
    assert "areas/ops/timeout.html" in paths and head == _head(repo)
    assert "post-commit pid=" in _log(repo) and "updated" in _log(repo)
    hits = memhtml(repo, "search", "checkout upstream timeout", "--json").stdout
    assert "areas/ops/timeout.html" in hits


def test_reset_hard_converges_on_the_next_hook_or_the_next_command(repo: Path) -> None:
    _commit_memory(repo, "areas/ops/a.html", "Alpha", "Alpha fact about queues.")
    _commit_memory(repo, "areas/ops/b.html", "Beta", "Beta fact about caches.")
    git(repo, "reset", "-q", "--hard", "HEAD~1")  # fires no hook (docs/git.md §1.11)
    assert "areas/ops/b.html" in _indexed(repo)[0]
    git(repo, "checkout", "-q", "-b", "elsewhere")  # post-checkout
    paths, head = _indexed(repo)
    assert "areas/ops/b.html" not in paths and head == _head(repo)
    _commit_memory(repo, "areas/ops/c.html", "Gamma", "Gamma fact about retries.")
    with_hooks_off = {"MEMHTML_HOOKS": "0"}
    git(repo, "reset", "-q", "--hard", "HEAD~1", env=with_hooks_off)
    git(repo, "checkout", "-q", "-b", "third", env=with_hooks_off)
    assert "areas/ops/c.html" in _indexed(repo)[0]
    memhtml(repo, "search", "retries")
    paths, head = _indexed(repo)
    assert "areas/ops/c.html" not in paths and head == _head(repo)


def test_kill_switch_leaves_the_index_alone(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _commit_memory(repo, "areas/ops/a.html", "Alpha", "Alpha fact about queues.")
    monkeypatch.setenv("MEMHTML_HOOKS", "0")
    log_before = _log(repo)
    _commit_memory(repo, "areas/ops/b.html", "Beta", "Beta fact about caches.")
    assert "areas/ops/b.html" not in _indexed(repo)[0]
    assert _log(repo) == log_before


def test_locked_index_exits_zero_logs_and_the_next_command_recovers(repo: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    _commit_memory(repo, "areas/ops/a.html", "Alpha", "Alpha fact about queues.")
    monkeypatch.setenv("MEMHTML_HOOK_TIMEOUT", "1")
    holder = IndexDB.for_repo(GitRepo.discover(repo))
    try:
        with holder.atomic():
            holder.execute("UPDATE index_state SET updated_at = updated_at WHERE id = 1")
            write(repo, "areas/ops/b.html", memory("Beta", "Beta fact about caches."))
            git(repo, "add", "areas/ops/b.html")
            proc = git(repo, "commit", "-qm", "b")
            assert proc.returncode == 0
            direct = subprocess.run(["git-memhtml-hook", "post-commit"], cwd=repo, capture_output=True, text=True,
                                    check=False)
            assert direct.returncode == 0 and "timeout" in direct.stderr
    finally:
        holder.close()
    assert "timeout: stopped at the 1 s time bound" in _log(repo)
    assert "areas/ops/b.html" not in _indexed(repo)[0]
    memhtml(repo, "index", "update")
    paths, head = _indexed(repo)
    assert "areas/ops/b.html" in paths and head == _head(repo)


def test_missing_and_corrupt_index_are_rebuilt_by_the_hook(repo: Path) -> None:
    _commit_memory(repo, "areas/ops/a.html", "Alpha", "Alpha fact about queues.")
    memdir = repo / ".git" / "memhtml"
    for part in memdir.glob("index.db*"):
        part.unlink()
    _commit_memory(repo, "areas/ops/b.html", "Beta", "Beta fact about caches.")
    assert "no index yet: building it" in _log(repo)
    assert _indexed(repo)[0] >= {"areas/ops/a.html", "areas/ops/b.html"}
    for part in memdir.glob("index.db-*"):
        part.unlink()
    (memdir / "index.db").write_bytes(b"this is not a database" * 100)
    _commit_memory(repo, "areas/ops/c.html", "Gamma", "Gamma fact about retries.")
    assert "index.db was corrupt: moved to index.db.corrupt" in _log(repo)
    assert (memdir / "index.db.corrupt").read_bytes().startswith(b"this is not")
    assert _indexed(repo)[0] >= {"areas/ops/a.html", "areas/ops/b.html", "areas/ops/c.html"}


def test_state_db_that_cannot_open_fails_soft(repo: Path) -> None:
    _commit_memory(repo, "areas/ops/a.html", "Alpha", "Alpha fact about queues.")
    state = repo / ".git" / "memhtml" / "state.db"
    for part in state.parent.glob("state.db-*"):
        part.unlink()
    state.write_bytes(b"garbage" * 200)
    write(repo, "areas/ops/b.html", memory("Beta", "Beta fact about caches."))
    git(repo, "add", "areas/ops/b.html")
    assert git(repo, "commit", "-qm", "b").returncode == 0
    assert "failed: the state database" in _log(repo)
    assert state.read_bytes().startswith(b"garbage")


def test_rebase_defers_to_post_rewrite_and_converges(repo: Path) -> None:
    _commit_memory(repo, "areas/ops/base.html", "Base", "Base fact about logs.")
    git(repo, "checkout", "-q", "-b", "topic")
    _commit_memory(repo, "areas/ops/t1.html", "Topic one", "Topic one fact about disks.")
    _commit_memory(repo, "areas/ops/t2.html", "Topic two", "Topic two fact about nets.")
    git(repo, "checkout", "-q", "main")
    _commit_memory(repo, "areas/ops/m1.html", "Main one", "Main one fact about dns.")
    git(repo, "checkout", "-q", "topic")
    git(repo, "rebase", "-q", "main")
    log = _log(repo)
    assert "skipped: rebase in progress" in log
    assert "post-rewrite pid=" in log
    paths, head = _indexed(repo)
    assert {"areas/ops/t1.html", "areas/ops/t2.html", "areas/ops/m1.html"} <= paths and head == _head(repo)


def test_detached_hook_converges_in_the_background(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMHTML_HOOK_DETACH", "1")
    _commit_memory(repo, "areas/ops/a.html", "Alpha", "Alpha fact about queues.")
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "updated" not in _log(repo):
        time.sleep(0.2)
    lock = repo / ".git" / "memhtml" / "hook.lock"
    subprocess.run(["flock", str(lock), "true"], check=True, timeout=60)  # wait for the job to let go
    paths, head = _indexed(repo)
    assert "areas/ops/a.html" in paths and head == _head(repo)


@pytest.mark.parametrize("name", ["Upper.HTML", "mixed.Html"])
def test_post_commit_indexes_an_html_file_of_any_case(repo: Path, name: str) -> None:
    """``.HTML`` is a memory too: the post-commit hook's catch-up indexes it, and search finds it."""
    path = f"areas/ops/{name}"
    _commit_memory(repo, path, "Upper case name", "The gateway retries three times before failing.")
    paths, head = _indexed(repo)
    assert path in paths and head == _head(repo), (paths, _log(repo))
    assert path in memhtml(repo, "search", "gateway retries", "--json").stdout
    assert "not a memory file" not in memhtml(repo, "validate", path, check=False).stdout


def _indexed_body(root: Path, path: str) -> str | None:
    db = IndexDB.for_repo(GitRepo.discover(root))
    try:
        row = db.query_one("SELECT body_text FROM files WHERE path = ?", (path,))
    finally:
        db.close()
    return None if row is None else str(row[0])


def test_post_commit_defers_the_work_tree_to_the_next_reader(repo: Path) -> None:
    """The post-commit pass projects the commit and takes no status (docs/hooks.md "Deferred work-tree status"):
    an uncommitted edit made before the commit is not read by it, and the next reader's catch-up indexes it
    before answering. A post-checkout pass still reads the work tree."""
    _commit_memory(repo, "areas/ops/a.html", "Alpha", "Alpha fact about queues.")
    write(repo, "areas/ops/a.html", memory("Alpha", "Alpha fact about zeppelins."))  # dirty, not committed
    _commit_memory(repo, "areas/ops/b.html", "Beta", "Beta fact about caches.")  # post-commit: b only
    paths, head = _indexed(repo)
    assert "areas/ops/b.html" in paths and head == _head(repo)
    assert "queues" in str(_indexed_body(repo, "areas/ops/a.html"))  # the work tree was not read
    hits = memhtml(repo, "search", "zeppelins", "--json").stdout
    assert "areas/ops/a.html" in hits  # the reader's full pass took the status
    assert "zeppelins" in str(_indexed_body(repo, "areas/ops/a.html"))
    write(repo, "areas/ops/b.html", memory("Beta", "Beta fact about walruses."))
    git(repo, "checkout", "-q", "-b", "other")  # post-checkout: a full pass
    assert "walruses" in str(_indexed_body(repo, "areas/ops/b.html"))
