"""Trust rule: no partial run lands (issue 8 item 3).

A run SIGKILLed in the middle of a phase leaves a branch with some phase commits, a worktree with half-written
files and, when the kill hits a ref update, a stale ``refs/heads/<run>.lock``. ``sleep merge`` refuses it (the
hint names ``resume``) until ``sleep resume`` has finished it; ``doctor`` reports the stale lock; ``resume`` and
``abort`` recover from it. Rows: each way to end the partial run (``resume`` then merge, ``abort``).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.main import main
from git_memhtml.embed.registry import get_embedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.engine.run import run_sleep
from tests.trust.run_helpers import (
    END_POINTS,
    START_POINTS,
    dies_while_ending,
    dies_while_starting,
    killed_mid_phase,
    wait_for_ready,
)

DATE = "2026-02-01"
NOW = "2026-02-01T09:00:00Z"


def git(root: Path, *args: str) -> str:
    """The real git binary in ``root``."""
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    """``git memhtml <args> --json`` in-process: (exit code, envelope or None, stderr)."""
    capsys.readouterr()
    code = main([*args, "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


@pytest.fixture
def killed(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A memory repo whose run was SIGKILLed mid-phase, with the stale ref lock such a kill can leave."""
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    repo = tmp_path / "memory"
    assert main(["init", str(repo)]) == 0
    for i in (1, 2, 3):
        assert main(["-C", str(repo), "write", "--type", "semantic", "--title", f"Fact {i}",
                     "--claim", f"The service number {i} listens on port 80{i}."]) == 0
    child = multiprocessing.get_context("fork").Process(target=killed_mid_phase, args=(str(repo),))
    child.start()
    child.join(120)
    assert child.exitcode == -signal.SIGKILL
    [run_id] = git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/sleep/").split()
    lock = repo / ".git" / "refs" / "heads" / f"{run_id}.lock"
    lock.write_text(git(repo, "rev-parse", run_id))  # what a kill during the branch's ref update leaves
    admin = repo / ".git" / "worktrees" / run_id.replace("/", "-")
    assert admin.is_dir(), "the killed run's worktree is left behind"
    (admin / "index.lock").write_bytes(b"")  # and a kill while its index was written
    return repo, run_id


@pytest.mark.slow
@pytest.mark.parametrize("ending", ["resume-then-merge", "abort"])
def test_a_run_killed_mid_phase_never_lands_until_finished(
    killed: tuple[Path, str], capsys: pytest.CaptureFixture[str], ending: str
) -> None:
    repo, run_id = killed
    main_before = git(repo, "rev-parse", "main")
    branch_before = git(repo, "rev-parse", run_id)
    lock = repo / ".git" / "refs" / "heads" / f"{run_id}.lock"

    code, refused, _ = cli(capsys, "-C", str(repo), "sleep", "merge", run_id, "--skip-gate")
    assert code == 1 and refused["refusal"] == "interrupted" and not refused["merged"]
    assert f"sleep resume {run_id}" in refused["hint"]
    assert git(repo, "rev-parse", "main") == main_before and git(repo, "rev-parse", run_id) == branch_before

    index_lock = (repo / ".git" / "worktrees" / run_id.replace("/", "-") / "index.lock").resolve()
    code, doctor, _ = cli(capsys, "-C", str(repo), "doctor")
    assert code == 1
    found = {(f["kind"], f["path"]) for f in doctor["data"]["staleLocks"]}
    assert {("ref-lock", str(lock.resolve())), ("index-lock", str(index_lock))} <= found

    if ending == "abort":
        code, aborted, err = cli(capsys, "-C", str(repo), "sleep", "abort", run_id)
        assert code == 0, err
        assert aborted["data"]["branchDeleted"] and str(lock.resolve()) in aborted["data"]["recoveredLocks"]
        assert str(index_lock) in aborted["data"]["recoveredLocks"]
        assert git(repo, "branch", "--list", run_id) == "" and not lock.exists()
        assert git(repo, "rev-parse", "main") == main_before
        return

    code, resumed, err = cli(capsys, "-C", str(repo), "sleep", "resume", run_id)
    assert code == 0, err
    assert str(lock.resolve()) in resumed["data"]["recoveredLocks"] and not lock.exists()
    assert str(index_lock) in resumed["data"]["recoveredLocks"]
    assert "areas/half.html" not in git(repo, "ls-tree", "-r", "--name-only", run_id)
    code, merged, err = cli(capsys, "-C", str(repo), "sleep", "merge", run_id, "--skip-gate")
    assert code == 0 and merged["data"]["merged"], (merged, err)
    assert git(repo, "rev-parse", "main").strip() == resumed["data"]["headSha"]
    code, doctor, _ = cli(capsys, "-C", str(repo), "doctor")
    assert [f for f in doctor["data"]["staleLocks"] if f["kind"] != "sleep-lock"] == []


def _blocking_run(repo: str, ready: str, release: str) -> None:
    """Child: a real run that waits after confidence-decay until ``release`` exists (a live owner)."""
    import time

    os.environ["MEMHTML_EMBED"] = "fake"
    main_repo = GitRepo.discover(repo)

    def after(report: Any) -> None:
        if report.phase == "confidence-decay":
            Path(ready).write_text("ready")
            while not Path(release).exists():
                time.sleep(0.05)

    run_sleep(main_repo, IndexDB.for_repo(main_repo), date=DATE, embedder=get_embedder("fake"), clock=lambda: NOW,
              after_phase=after)


@pytest.mark.slow
@pytest.mark.parametrize("verb", ["resume", "abort"])
def test_locks_of_a_run_a_live_process_owns_are_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, verb: str
) -> None:
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    repo = tmp_path / "memory"
    assert main(["init", str(repo)]) == 0
    assert main(["-C", str(repo), "write", "--type", "semantic", "--title", "Fact", "--claim", "Port 80 is open."]) == 0
    ready, release = tmp_path / "ready", tmp_path / "release"
    child = multiprocessing.get_context("fork").Process(target=_blocking_run, args=(str(repo), str(ready),
                                                                                     str(release)))
    child.start()
    try:
        wait_for_ready(child, ready, "confidence-decay")
        [run_id] = git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/sleep/").split()
        lock = repo / ".git" / "refs" / "heads" / f"{run_id}.lock"
        lock.write_text("in use\n")
        code, _, err = cli(capsys, "-C", str(repo), "sleep", verb, run_id)
        assert code == 1 and "running" in err and run_id in err
        assert lock.read_text() == "in use\n"
        code, doctor, _ = cli(capsys, "-C", str(repo), "doctor")
        assert doctor["data"]["staleLocks"] == []  # a live sleep process may be using them
        lock.unlink()
    finally:
        release.write_text("go")
        child.join(120)
    assert child.exitcode == 0


@pytest.mark.slow
def test_a_reused_pid_neither_holds_the_lock_nor_keeps_a_run_running(
    killed: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The killed run's lock and row name a pid that is now a live, unrelated process (this one)."""
    repo, run_id = killed
    lock = repo / ".git" / "memhtml" / "sleep.lock"
    data = json.loads(lock.read_text())
    assert data["runId"] == run_id
    lock.write_text(json.dumps({**data, "pid": os.getpid()}))  # alive, but started at another time
    db = IndexDB.for_repo(GitRepo.discover(repo))
    try:
        db.execute("UPDATE state.sleep_runs SET status = 'running', owner = ? WHERE run_id = ?",
                   (f"{os.uname().nodename}:{os.getpid()}", run_id))
    finally:
        db.close()
    code, status, _ = cli(capsys, "-C", str(repo), "sleep", "status")
    assert next(r for r in status["data"]["runs"] if r["runId"] == run_id)["status"] == "interrupted"
    code, refused, _ = cli(capsys, "-C", str(repo), "sleep", "merge", run_id, "--skip-gate")
    assert code == 1 and refused["refusal"] == "interrupted"
    code, _resumed, err = cli(capsys, "-C", str(repo), "sleep", "resume", run_id)
    assert code == 0, err
    assert not lock.exists()


def _started_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "memory"
    assert main(["init", str(repo)]) == 0
    assert main(["-C", str(repo), "write", "--type", "semantic", "--title", "Fact", "--claim", "Port 80 is open."]) == 0
    return repo


def _leftovers(repo: Path) -> tuple[list[str], list[str]]:
    """The ``sleep/…`` branches and the linked worktree folders left in ``repo``."""
    branches = git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/sleep/").split()
    trees = [line.split(" ", 1)[1] for line in git(repo, "worktree", "list", "--porcelain").splitlines()
             if line.startswith("worktree ")][1:]
    return branches, trees


@pytest.mark.slow
@pytest.mark.parametrize("point", sorted(START_POINTS))
def test_a_run_killed_while_starting_is_interrupted_and_abort_removes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, point: str
) -> None:
    """The row is written before the branch and the worktree: every kill leaves a row, or nothing at all."""
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    repo = _started_repo(tmp_path)
    child = multiprocessing.get_context("fork").Process(target=dies_while_starting, args=(str(repo), point))
    child.start()
    child.join(120)
    assert child.exitcode == -signal.SIGKILL
    code, status, _ = cli(capsys, "-C", str(repo), "sleep", "status")
    runs = status["data"]["runs"]
    if point == "before-row":  # killed before anything of the run existed
        assert runs == [] and _leftovers(repo) == ([], [])
        return
    [run] = runs
    assert run["status"] == "interrupted"
    code, _aborted, err = cli(capsys, "-C", str(repo), "sleep", "abort", run["runId"])
    assert code == 0, err
    assert _leftovers(repo) == ([], [])
    assert not (repo / ".git" / "memhtml" / "worktrees" / run["runId"].replace("/", "-")).exists()


@pytest.mark.slow
@pytest.mark.parametrize("point", ["before-branch", "before-worktree"])
def test_a_run_in_its_first_instants_is_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, point: str
) -> None:
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    repo = _started_repo(tmp_path)
    ready, release = tmp_path / "ready", tmp_path / "release"
    child = multiprocessing.get_context("fork").Process(target=dies_while_starting,
                                                        args=(str(repo), point, str(release), str(ready)))
    child.start()
    try:
        wait_for_ready(child, ready, f"its start point {point}")
        run_id = json.loads((repo / ".git" / "memhtml" / "sleep.lock").read_text())["runId"]
        for verb in ("merge", "abort", "resume"):
            code, refused, err = cli(capsys, "-C", str(repo), "sleep", verb, run_id)
            assert code == 1 and "running" in err and run_id in err, (verb, err)
        code, refused, _ = cli(capsys, "-C", str(repo), "sleep", "merge", run_id, "--skip-gate")
        assert refused["refusal"] == "running"
    finally:
        release.write_text("go")
        child.join(120)


@pytest.mark.parametrize("with_worktree", [True, False])
def test_a_row_less_start_is_abortable_only_with_our_worktree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, with_worktree: bool
) -> None:
    """A run killed while starting before rows came first: a branch at its base and our worktree, no row."""
    from git_memhtml.sleep.engine.runplace import worktree_folder, worktree_name

    monkeypatch.setenv("MEMHTML_NOW", NOW)
    repo = _started_repo(tmp_path)
    run_id = "sleep/2026-02-01-0a0b0c"
    main_repo = GitRepo.discover(repo)
    main_repo.create_branch(run_id, git(repo, "rev-parse", "main").strip())
    if with_worktree:
        main_repo.add_worktree(worktree_name(run_id), worktree_folder(main_repo, run_id), run_id)
    code, refused, err = cli(capsys, "-C", str(repo), "sleep", "merge", run_id, "--skip-gate")
    assert code == 1 and refused["refusal"] == ("interrupted" if with_worktree else "not-a-run")
    code, _aborted, err = cli(capsys, "-C", str(repo), "sleep", "abort", run_id)
    if not with_worktree:  # a hand-made branch at main is no run: never deleted
        assert code == 1 and run_id in err and _leftovers(repo) == ([run_id], [])
        assert refused["code"] == "ERR_NO_RUN"
        return
    assert code == 0, err
    assert _leftovers(repo) == ([], [])


@pytest.mark.slow
@pytest.mark.parametrize("point", sorted(END_POINTS))
def test_a_run_killed_after_its_report_commit_is_finished_and_resume_only_cleans_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, point: str
) -> None:
    """A kill after the last phase commit interrupts only the teardown: the run is in review, `sleep review`
    accepts it, and `sleep resume` removes what the kill left without running a phase or committing (one report
    commit on the branch, the tip unchanged, the phase commits all named)."""
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    repo = _started_repo(tmp_path)
    child = multiprocessing.get_context("fork").Process(target=dies_while_ending, args=(str(repo), point))
    child.start()
    child.join(180)
    assert child.exitcode == -signal.SIGKILL
    [run_id] = git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/sleep/").split()
    tip = git(repo, "rev-parse", run_id).strip()
    phase_commits = git(repo, "rev-list", "--reverse", f"main..{run_id}").split()
    code, status, err = cli(capsys, "-C", str(repo), "sleep", "status")
    assert code == 0 and [r["status"] for r in status["data"]["runs"]] == ["review"], (point, status)
    code, _review, err = cli(capsys, "-C", str(repo), "sleep", "review", run_id, "--no-probes")
    assert code == 0, (point, err)
    code, resumed, err = cli(capsys, "-C", str(repo), "sleep", "resume", run_id)
    assert code == 0, (point, err)
    assert resumed["data"]["commits"] == [] and resumed["data"]["failedPhases"] == []
    assert {p["status"] for p in resumed["data"]["phases"]} == {"skipped"}
    committed = [p["commitSha"] for p in resumed["data"]["phases"] if p.get("commitSha")]
    assert sorted(committed) == sorted(phase_commits), "every phase commit on the branch is named"
    assert git(repo, "rev-parse", run_id).strip() == tip
    subjects = git(repo, "log", "--format=%s", f"main..{run_id}").splitlines()
    assert sum("(sleep(report))" in s for s in subjects) == 1, subjects
    assert _leftovers(repo) == ([run_id], [])
    code, status, err = cli(capsys, "-C", str(repo), "sleep", "status")
    assert [r["status"] for r in status["data"]["runs"]] == ["review"], status
    code, doctor, err = cli(capsys, "-C", str(repo), "doctor")
    assert code == 0 and doctor["data"]["leftoverWorktrees"] == [], doctor
