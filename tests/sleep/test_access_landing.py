"""A sleep run's moves reach the shared access plane when the run lands, never before (issue 8 item 9).

The run archives on its own branch: a plain move (retention triage, reprieve, task sweep) carries the history to
the archive path, a dedup fold (``superseded-by`` the keeper) passes it to the keeper. Both landing paths apply
them: ``sleep merge`` and a forge landing recognised by reconcile (a squash here). Before the fix the history of
every moved memory was stranded at its old path.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.main import main
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.landing.access_moves import land_access_moves
from git_memhtml.store import edits

DATE = "2026-02-01"
NOW = "2026-02-01T09:00:00Z"
AT = "2026-02-01T00:00:00Z"
PLAIN = "areas/inbox/plain.html"
DROP = "areas/inbox/drop.html"
KEEP = "areas/inbox/keep.html"


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    capsys.readouterr()
    code = main([*args, "--json"])
    out = capsys.readouterr()
    assert code == 0, out
    return dict(json.loads(out.out)["data"])


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def _state(root: Path) -> dict[str, tuple[Any, ...]]:
    db = IndexDB.for_repo(GitRepo.discover(root))
    try:
        return {r[0]: tuple(r[1:]) for r in db.query(
            "SELECT path, access_count, reinforcement_count, round(outcome_score, 4), last_accessed_at "
            "FROM state.access ORDER BY path")}
    finally:
        db.close()


def _run_with_moves(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
                    ) -> tuple[Path, str]:
    """A repository whose three memories have access rows, and a finished run whose branch carries one plain
    archive move and one dedup fold (made with the very edits the phases use)."""
    monkeypatch.setenv("MEMHTML_NOW", "2026-01-20T00:00:00Z")
    root = tmp_path / "mem"
    assert main(["init", str(root)]) == 0
    for path, claim in ((PLAIN, "The plain memory is old news."), (DROP, "The deploy window opens at nine."),
                        (KEEP, "The deploy window opens at 9 am.")):
        _cli(capsys, "-C", str(root), "write", "--type", "semantic", "--title", path, "--claim", claim,
             "--path", path)
    _cli(capsys, "-C", str(root), "reinforce", PLAIN, DROP, KEEP, "--signal", "positive")
    monkeypatch.setenv("MEMHTML_NOW", "2026-01-21T00:00:00Z")
    _cli(capsys, "-C", str(root), "reinforce", DROP, "--signal", "negative")
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    run = str(_cli(capsys, "-C", str(root), "sleep", "run", "--date", DATE)["runId"])
    folder = tmp_path / "run-worktree"
    _git(root, "worktree", "add", "-q", str(folder), run)
    tree = GitRepo.discover(folder)
    for path in (PLAIN, DROP, KEEP):  # the run may not have moved them itself; this test owns their moves
        assert (folder / path).is_file()
    edits.archive_file(tree, PLAIN, at=AT)
    archived = edits.archive_file(tree, DROP, at=AT, extra=[edits.set_meta("superseded-by", "/" + KEEP)])
    assert archived is not None
    edits.stamp_file(tree, KEEP, [edits.link("supersedes", "/" + archived)])
    _git(folder, "commit", "-q", "--amend", "--no-edit")  # into the run's last (report) commit: the landing rail
    # refuses a phase commit after the report
    _git(root, "worktree", "remove", str(folder))
    return root, run


EXPECTED = {
    "archive/2026/" + PLAIN: (1, 1, 1.0, "2026-01-20T00:00:00Z"),
    KEEP: (3, 3, 0.6, "2026-01-21T00:00:00Z"),  # keep (1 reinforcement, +1.0) + drop (2, 0.7·1 − 0.3 = 0.4):
}                                               # accesses 1 + 2, outcome (1·1.0 + 2·0.4) / 3


@pytest.mark.slow
def test_sleep_merge_lands_the_runs_moves(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    root, run = _run_with_moves(tmp_path, capsys, monkeypatch)
    before = _state(root)
    assert set(before) == {PLAIN, DROP, KEEP}  # nothing moves while the run is only a branch
    _cli(capsys, "-C", str(root), "sleep", "merge", run, "--skip-gate")
    assert _state(root) == EXPECTED


@pytest.mark.slow
def test_a_squashed_run_lands_its_moves_through_reconcile(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    root, run = _run_with_moves(tmp_path, capsys, monkeypatch)
    _git(root, "merge", "-q", "--squash", run)
    _git(root, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", f"Squash {run}")
    data = _cli(capsys, "-C", str(root), "sleep", "status")
    assert [r["landed"] for r in data["reconciled"]] == ["squash"]
    assert _state(root) == EXPECTED
    again = _cli(capsys, "-C", str(root), "sleep", "status")  # reconciled once: the plane does not move again
    assert again["reconciled"] == [] and _state(root) == EXPECTED


def test_land_access_moves_is_a_no_op_without_a_range(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    db = IndexDB.for_repo(repo)
    try:
        assert land_access_moves(repo, db, None, None).moved == 0
        assert land_access_moves(repo, db, "a" * 40, "a" * 40).folded == 0
        assert land_access_moves(repo, db, "0" * 40, "1" * 40).error is not None  # unreadable: reported
    finally:
        db.close()
