"""A run merged on a forge (merge commit, squash, fast-forward) and pulled: its ledger is applied exactly once.

Acceptance of issue 5 item 3, end to end with the real git binary and a local bare remote standing in for the
forge: ``sleep pr`` pushes the branch, a "forge" clone merges it the way a forge button would, the user pulls, and
the next ``sleep status`` recognises the run from the files it committed (not from its branch).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.landing.reconcile import reconcile_landed_runs, run_id_of_file
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

LATER = "2026-02-03T10:00:00Z"


def path_without_gh() -> str:
    """``PATH`` minus every folder holding a ``gh`` executable (so the compare-address path is taken)."""
    return os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "gh").exists())


def _remote(tmp_path: Path, repo: Path) -> Path:
    bare = tmp_path / "forge.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "origin", "main")
    return bare


def _forge_merge(tmp_path: Path, bare: Path, run: str, mode: str) -> str:
    """Merge ``run`` into the remote's main as a forge would; return the new main."""
    forge = tmp_path / "forge-checkout"
    git(tmp_path, "clone", "-q", str(bare), str(forge))
    if mode == "merge-commit":
        git(forge, "merge", "-q", "--no-ff", "-m", "Merge pull request #1 from acme/sleep", f"origin/{run}")
    elif mode == "squash":
        git(forge, "merge", "-q", "--squash", f"origin/{run}")
        git(forge, "commit", "-q", "-m", "Sleep run (#1)")
    else:
        git(forge, "merge", "-q", "--ff-only", f"origin/{run}")
    git(forge, "push", "-q", "origin", "main")
    if mode == "squash":  # the forge deletes the head branch; the record must survive without it
        git(forge, "push", "-q", "origin", "--delete", run)
    return git(forge, "rev-parse", "main").strip()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["merge-commit", "squash", "fast-forward"])
def test_forge_merged_run_applies_its_ledger_once_on_pull(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    monkeypatch.setenv("PATH", path_without_gh())
    repo = memory_repo(tmp_path, capsys)
    bare = _remote(tmp_path, repo)
    run = sleep_run(repo, capsys)
    tip = add_ledger_commit(repo, run, [MARK])

    code, pr = cli(capsys, "-C", str(repo), "sleep", "pr", run)
    assert code == 0, pr
    assert git(bare, "rev-parse", f"refs/heads/{run}").strip() == tip == pr["data"]["pushedSha"]
    assert pr["data"]["forge"] == "none" and pr["data"]["url"] is None and "not a known forge" in pr["data"]["note"]
    assert Path(pr["data"]["bodyFile"]).read_text().startswith(f"## Sleep run `{run}`")

    new_main = _forge_merge(tmp_path, bare, run, mode)
    if mode == "squash":  # and the local branch is gone too: only main's tree can tell
        git(repo, "branch", "-q", "-D", run)
    assert promoted(repo) == 0 and applied_at(repo, run) == []

    git(repo, "pull", "-q", "--ff-only", "origin", "main")
    assert git(repo, "rev-parse", "main").strip() == new_main
    monkeypatch.setenv("MEMHTML_NOW", LATER)
    code, status = cli(capsys, "-C", str(repo), "sleep", "status")
    assert code == 0, status
    reconciled = status["data"]["reconciled"]
    assert [(r["runId"], r["landed"], r["marksPending"], r["marksApplied"]) for r in reconciled] == [(run, mode, 1, 1)]
    row = next(r for r in status["data"]["runs"] if r["runId"] == run)
    assert row["status"] == "merged" and row["landed"]["how"] == mode
    assert promoted(repo) == 1
    assert applied_at(repo, run) == [LATER]

    # pulling again brings nothing and applies nothing, even with the mark reset behind its back
    set_promoted(repo, 0)
    git(repo, "pull", "-q", "--ff-only", "origin", "main")
    monkeypatch.setenv("MEMHTML_NOW", "2026-02-05T10:00:00Z")
    code, again = cli(capsys, "-C", str(repo), "sleep", "status")
    assert code == 0 and again["data"]["reconciled"] == []
    assert promoted(repo) == 0 and applied_at(repo, run) == [LATER]

    # a teammate's fresh clone has no row for the run: it is recognised from main's tree and the run's commits
    teammate = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(bare), str(teammate))
    if mode == "squash":  # the forge dropped the run's commits and branch: nothing backs the files on main yet
        code, theirs = cli(capsys, "-C", str(teammate), "sleep", "status")
        [unbacked] = theirs["data"]["reconciled"]
        assert unbacked["runId"] == run and unbacked["landed"] is None and "not backed" in unbacked["error"]
        assert all(r["runId"] != run for r in theirs["data"]["runs"])
        git(teammate, "fetch", "-q", str(repo), f"refs/remotes/origin/{run}:refs/remotes/mate/{run}")
    code, theirs = cli(capsys, "-C", str(teammate), "sleep", "status")
    assert [(r["runId"], r["landed"], r["rowCreated"]) for r in theirs["data"]["reconciled"]] == [(run, mode, True)]
    assert next(r for r in theirs["data"]["runs"] if r["runId"] == run)["status"] == "merged"


def test_sleep_merge_records_its_landing_and_reconcile_leaves_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    repo = memory_repo(tmp_path, capsys)
    run = sleep_run(repo, capsys)
    add_ledger_commit(repo, run, [MARK])
    code, merged = cli(capsys, "-C", str(repo), "sleep", "merge", run, "--skip-gate")
    assert code == 0 and merged["data"]["marksApplied"] == 1, merged
    code, status = cli(capsys, "-C", str(repo), "sleep", "status")
    assert status["data"]["reconciled"] == []
    row = next(r for r in status["data"]["runs"] if r["runId"] == run)
    assert (row["landed"]["how"] == "sleep-merge"
            and row["landed"]["commitSha"] == git(repo, "rev-parse", "main").strip())
    assert applied_at(repo, run) == [NOW]


def test_a_local_git_merge_is_recognised_by_the_next_sleep_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sleep run`` reconciles first: a run merged with plain ``git merge`` is marked before the next one starts."""
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    repo = memory_repo(tmp_path, capsys)
    run = sleep_run(repo, capsys)
    add_ledger_commit(repo, run, [MARK])
    git(repo, "merge", "-q", "--no-ff", "-m", "merge the night", run)
    code, env = cli(capsys, "-C", str(repo), "sleep", "run", "--date", "2026-02-02")
    assert code == 0, env
    assert promoted(repo) == 1
    db = IndexDB.for_repo(GitRepo.discover(repo))
    try:
        assert db.query("SELECT how FROM state.sleep_landings WHERE run_id = ?", (run,)) == [("merge-commit",)]
        assert reconcile_landed_runs(GitRepo.discover(repo), db, LATER) == []
    finally:
        db.close()


def test_run_ids_are_read_back_from_committed_file_names() -> None:
    assert run_id_of_file("sleep-2026-02-01.html") == "sleep/2026-02-01"
    assert run_id_of_file("sleep-2026-02-01-3.pending.jsonl") == "sleep/2026-02-01-3"
    assert run_id_of_file(".gitkeep") is None
    assert run_id_of_file("sleep-2026-02-01.html.orig") is None
    assert run_id_of_file("notes.html") is None


def test_no_main_or_no_runs_is_a_no_op(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    (root / "a.txt").write_text("a\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-q", "-m", "a")
    repo = GitRepo.discover(root)
    db = IndexDB.for_repo(repo)
    try:
        assert reconcile_landed_runs(repo, db, NOW) == []
        git(root, "branch", "-q", "-m", "main", "trunk")  # no main, no master, no memhtml.trunk
        assert reconcile_landed_runs(repo, db, NOW) == []
    finally:
        db.close()
    assert shutil.which("git")


def test_reconcile_reads_back_the_file_names_the_report_phase_writes() -> None:
    """One module (sleep/engine/runfiles.py) names a run's files; reconcile must parse what it names."""
    from git_memhtml.sleep.engine import runfiles as report

    assert run_id_of_file(report.report_path("sleep/2026-02-01-2").rsplit("/", 1)[-1]) == "sleep/2026-02-01-2"
    assert run_id_of_file(report.ledger_file("sleep/2026-02-01").rsplit("/", 1)[-1]) == "sleep/2026-02-01"
