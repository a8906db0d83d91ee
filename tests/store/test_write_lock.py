"""The write lock, compare-and-swap commits, the landing journal and the after-commit translator, on real
repositories and real processes (docs/store.md "The write lock")."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from git_memhtml.cli.common import init_memory as init_repo
from git_memhtml.errors import HeadMoved, WriteLocked
from git_memhtml.gitrepo import GitRepo
from git_memhtml.gitrepo.lock import write_lock
from git_memhtml.gitrepo.message import build_message

ROOT = Path(__file__).resolve().parents[2]
_BIN = Path(sys.executable).with_name("git-memhtml")
EXE = [str(_BIN)] if _BIN.is_file() else [sys.executable, "-m", "git_memhtml"]


def run(root: Path, *args: str, extra: dict[str, str] | None = None,
        input: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(extra or {})}
    return subprocess.run([*EXE, *args], cwd=root, capture_output=True, text=True, env=env, check=False,
                          timeout=120, input=input)


def status(root: Path) -> str:
    return subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=all"],
                          capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    init_repo(tmp_path / "mem")
    return GitRepo.discover(tmp_path / "mem")


def hold_lock(repo: GitRepo, seconds: float) -> subprocess.Popen[str]:
    """Another process holding the write lock for ``seconds``; returns once it holds it."""
    code = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from git_memhtml.gitrepo.lock import write_lock
        with write_lock(Path({str(repo.common_dir)!r}), purpose="holder-test"):
            print("held", flush=True)
            time.sleep({seconds})
    """)
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert child.stdout is not None and child.stdout.readline().strip() == "held"
    return child


@pytest.mark.parametrize("how", ["env", "git-config"])
def test_a_held_lock_times_out_with_a_refusal_naming_the_holder(repo: GitRepo, how: str) -> None:
    """A writer facing a held lock waits the configured ``memhtml.locktimeout`` (0.5 s here, not the 10 s default;
    the refusal states the wait it was given) and then refuses, naming the holder and changing nothing."""
    holder = hold_lock(repo, 30)
    try:
        extra = {"MEMHTML_LOCK_TIMEOUT": "0.5"} if how == "env" else {}
        if how == "git-config":
            repo.config_set("memhtml.locktimeout", "0.5")
        head = repo.head_sha()
        proc = run(repo.root, "write", "--type", "semantic", "--title", "T", "--claim", "C holds.", extra=extra)
        assert proc.returncode == 1, proc.stderr
        assert "held the write lock for more than 0.5 s" in proc.stderr, "the wait is the configured timeout"
        assert f"pid={holder.pid}" in proc.stderr and "command='holder-test'" in proc.stderr
        assert "hint:" in proc.stderr and repo.head_sha() == head and status(repo.root) == ""
    finally:
        holder.kill()
        holder.wait()


def test_the_lock_is_released_when_its_holder_is_killed(repo: GitRepo) -> None:
    holder = hold_lock(repo, 60)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    with write_lock(repo.common_dir, purpose="after", timeout=2):
        pass


def test_the_lock_is_reentrant_in_one_process_and_shared_by_linked_worktrees(repo: GitRepo, tmp_path: Path) -> None:
    head = repo.head_sha()
    assert head is not None
    repo.create_branch("side", head)
    linked = repo.add_worktree("side", tmp_path / "side", "side")
    with repo.write_lock("outer"), repo.write_lock("inner"):
        child = subprocess.run(
            [sys.executable, "-c", "from pathlib import Path; from git_memhtml.gitrepo.lock import write_lock\n"
             f"with write_lock(Path({str(linked.common_dir)!r}), purpose='x', timeout=0.2): pass"],
            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
        assert child.returncode != 0 and "WriteLocked" in child.stderr
    holder = hold_lock(repo, 30)
    try:
        with pytest.raises(WriteLocked, match="holder-test"), write_lock(repo.common_dir, purpose="probe", timeout=0):
            pass
    finally:
        holder.kill()
        holder.wait()


def test_a_commit_on_a_stale_head_is_refused_and_changes_nothing(repo: GitRepo) -> None:
    stale = repo.head_sha()
    (repo.root / "other.txt").write_text("someone else's commit")
    subprocess.run(["git", "-C", str(repo.root), "add", "other.txt"], check=True)
    subprocess.run(["git", "-C", str(repo.root), "commit", "-q", "-m", "other"], check=True)
    moved = repo.head_sha()
    with pytest.raises(HeadMoved):
        repo.commit_files({"areas/inbox/x.html": b"x"}, "memhtml(write): x", parent=stale)
    with pytest.raises(HeadMoved):  # the ref update itself compares and swaps
        repo._compare_and_swap(repo.head_ref()[0], moved or "", stale, "x")
    assert repo.head_sha() == moved and not (repo.root / "areas/inbox/x.html").exists() and status(repo.root) == ""


def test_commit_files_keeps_unrelated_staged_entries_and_leaves_status_clean(repo: GitRepo) -> None:
    (repo.root / "staged.txt").write_text("mine")
    repo.stage(["staged.txt"])
    sha = repo.commit_files({"areas/inbox/a.html": b"a", "README.html": None}, "memhtml(x): two paths")
    assert sha and repo.head_sha() == sha and not (repo.root / "README.html").exists()
    assert (repo.root / "areas/inbox/a.html").read_bytes() == b"a"
    assert status(repo.root) == "A  staged.txt\n"


def test_the_journal_finishes_a_landed_commit_but_never_overwrites_a_later_edit(repo: GitRepo) -> None:
    stream = "\n".join(json.dumps({"title": f"J{k}", "type": "semantic", "body": f"Journal fact {k} holds."})
                       for k in range(3))
    proc = run(repo.root, "apply", "--json", input=stream, extra={"MEMHTML_FAULT_POINT": "after-ref"})
    assert proc.returncode == -signal.SIGKILL
    landed = [p for p in repo.tree_blobs(repo.head_sha() or "") if p.startswith("areas/inbox/j")]
    assert len(landed) == 3 and not any((repo.root / p).exists() for p in landed)
    (repo.root / landed[0]).write_text("edited by hand after the crash")
    temp = repo.root / Path(landed[1]).parent / f".{Path(landed[1]).name}.memhtml-tmp-99999"
    temp.parent.mkdir(parents=True, exist_ok=True)
    temp.write_text("half a file: the kill hit during the rename's write")
    retry = run(repo.root, "write", "--type", "semantic", "--title", "Next", "--claim", "Next holds.")
    assert retry.returncode == 0, retry.stderr
    assert (repo.root / landed[0]).read_text() == "edited by hand after the crash"
    for path in landed[1:]:
        assert (repo.root / path).read_bytes() == repo.read_blob(repo.tree_blobs(repo.head_sha() or "")[path])
    assert status(repo.root) == f" M {landed[0]}\n" and not repo.has_journal() and not temp.exists()


def test_a_failure_after_the_commit_landed_is_not_an_exit_3(repo: GitRepo) -> None:
    """stdout closed before the envelope is printed: the write is stored, so the exit says so."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([*EXE, "write", "--type", "semantic", "--title", "Piped", "--claim", "Piped holds.",
                              "--json"], cwd=repo.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()
    err = child.stderr.read().decode()
    assert child.wait(timeout=120) == 0, err
    head = repo.head_sha() or ""
    assert "landed" in err and head[:12] in err
    assert repo.commit_message(head).startswith("memhtml(write): Piped") and status(repo.root) == ""


@pytest.mark.parametrize(("subject", "body", "trailers", "expected"), [
    ("a\nb\r\nc\u2028d\x1be", None, (), "a b c d e\n"),
    ("s", "line one\n\nSigned-off-by: x\r\n  kept", [("Memhtml-Run", "r\n\nMemhtml-Phase: p")],
     "s\n\n  line one\n\n  Signed-off-by: x\n  kept\n\nMemhtml-Run: r Memhtml-Phase: p\n"),
    ("s", "\n\n", [], "s\n"),
    ("s", None, [("Memhtml-Session", "a\u00a0b  c")], "s\n\nMemhtml-Session: a\u00a0b  c\n"),
])
def test_build_message_folds_subject_and_trailers_and_indents_the_body(
        subject: str, body: str | None, trailers: list[tuple[str, str]], expected: str) -> None:
    assert build_message(subject, body, trailers) == expected


def test_a_trailer_key_that_is_not_a_token_is_a_bug() -> None:
    with pytest.raises(ValueError):
        build_message("s", None, [("Bad Key", "v")])


def test_sleep_merge_moves_the_trunk_only_under_the_write_lock(repo: GitRepo) -> None:
    for k in range(3):
        proc = run(repo.root, "write", "--type", "semantic", "--title", f"M{k}", "--claim", f"Merge fact {k} holds.")
        assert proc.returncode == 0, proc.stderr
    ran = run(repo.root, "sleep", "run", "--date", "2026-12-14", "--json")
    assert ran.returncode == 0, ran.stderr
    run_id = json.loads(ran.stdout)["data"]["runId"]
    trunk = repo.head_sha()
    holder = hold_lock(repo, 30)
    try:
        proc = run(repo.root, "sleep", "merge", run_id, "--skip-gate",
                   extra={"MEMHTML_LOCK_TIMEOUT": "0.5"})
        assert proc.returncode == 1 and "holder-test" in proc.stderr, proc.stderr
        assert repo.head_sha() == trunk
    finally:
        holder.kill()
        holder.wait()
    proc = run(repo.root, "sleep", "merge", run_id, "--skip-gate")
    assert proc.returncode == 0, proc.stderr
    assert repo.head_sha() == repo.branch_sha(run_id) != trunk and status(repo.root) == ""
