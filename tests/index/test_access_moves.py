"""Access history follows a move (issue 8 item 9): the fold rule, and the CLI's ``archive`` and ``correct``.

Before the fix the move function was never called, so every archive and correction dropped the history retention
and salience read: the row stayed at a path that no longer exists.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.main import main
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.access import fold_access, reinforce
from git_memhtml.index.db import IndexDB

T0 = "2026-01-01T00:00:00Z"
T1 = "2026-01-02T00:00:00Z"
T2 = "2026-01-03T00:00:00Z"


def _rows(db: IndexDB) -> dict[str, tuple[Any, ...]]:
    return {r[0]: tuple(r[1:]) for r in db.query(
        "SELECT path, access_count, reinforcement_count, round(outcome_score, 4), last_accessed_at, "
        "last_reinforced_at, updated_at FROM state.access ORDER BY path")}


def test_fold_sums_counts_and_keeps_the_later_instants(db: IndexDB) -> None:
    reinforce(db, ["keep"], signal="positive", now=T0)          # keep: 1 access, 1 reinforcement, +1.0
    reinforce(db, ["drop"], signal="negative", now=T0)          # drop: 1 access, 1 reinforcement, -1.0
    reinforce(db, ["drop"], signal="neutral", now=T2)           # drop: 2 accesses, last access T2
    assert fold_access(db, "drop", "keep")
    assert _rows(db) == {"keep": (3, 2, 0.0, T2, T0, T2)}       # outcome: (1·1 + 1·-1) / 2


def test_fold_weights_the_outcome_by_reinforcements(db: IndexDB) -> None:
    reinforce(db, ["keep"], signal="neutral", now=T0)            # never reinforced: outcome 0 carries no weight
    reinforce(db, ["drop"], signal="positive", now=T1)
    assert fold_access(db, "drop", "keep")
    assert _rows(db) == {"keep": (2, 1, 1.0, T1, T1, T1)}


def test_fold_without_a_keeper_row_moves_the_row(db: IndexDB) -> None:
    reinforce(db, ["drop"], signal="positive", now=T0)
    assert fold_access(db, "drop", "keep")
    assert _rows(db) == {"keep": (1, 1, 1.0, T0, T0, T0)}
    assert not fold_access(db, "drop", "keep")  # nothing left to fold: a second application is a no-op
    assert _rows(db) == {"keep": (1, 1, 1.0, T0, T0, T0)}


# -- the CLI moves ---------------------------------------------------------------------------------------------

def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    capsys.readouterr()
    code = main([*args, "--json"])
    out = capsys.readouterr()
    assert code == 0, out
    return dict(json.loads(out.out)["data"])


def _state(root: Path) -> dict[str, tuple[Any, ...]]:
    db = IndexDB.for_repo(GitRepo.discover(root))
    try:
        return _rows(db)
    finally:
        db.close()


@pytest.fixture
def mem(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMHTML_NOW", T0)
    root = tmp_path / "mem"
    assert main(["init", str(root)]) == 0
    for title, claim in (("Deploy day", "Alpha deploys on Mondays."), ("Cache policy", "Alpha caches for an hour.")):
        _cli(capsys, "-C", str(root), "write", "--type", "semantic", "--title", title, "--claim", claim)
    return root


def test_archive_carries_the_history_to_the_archive_path(mem: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = "areas/inbox/deploy-day.html"
    _cli(capsys, "-C", str(mem), "reinforce", path, "--signal", "positive")
    before = _state(mem)[path]
    data = _cli(capsys, "-C", str(mem), "archive", path, "--reason", "stale")
    assert data["archive_path"] == "archive/2026/" + path
    assert _state(mem) == {"archive/2026/" + path: before}


def test_correct_carries_the_history_to_the_archived_target(mem: Path, capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = "areas/inbox/cache-policy.html"
    _cli(capsys, "-C", str(mem), "read", path)
    monkeypatch.setenv("MEMHTML_NOW", T1)
    _cli(capsys, "-C", str(mem), "reinforce", path, "--signal", "negative")
    before = _state(mem)[path]
    data = _cli(capsys, "-C", str(mem), "correct", path, "--title", "Cache policy v2",
                "--claim", "Alpha caches for ten minutes.")
    assert _state(mem) == {data["archived_path"]: before}  # the correction starts its own history
    assert data["archived_path"] == "archive/2026/" + path


def test_a_refused_archive_moves_no_history(mem: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = "areas/inbox/deploy-day.html"
    _cli(capsys, "-C", str(mem), "reinforce", path)
    before = _state(mem)
    assert main(["-C", str(mem), "archive", path, "--reason", "   "]) == 2
    assert _state(mem) == before
