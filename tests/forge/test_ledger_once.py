"""The pending-mark ledger is applied exactly once, at landing (docs/ledger.md §1): by ``sleep merge`` or the
forge-landing reconciliation, never by ``sleep rebase`` (a rebase moves the run, it does not land it), and never a
second time by a second merge, a later reconciliation or a merge after a rebase."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from git_memhtml.embed.registry import get_embedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.engine.ledger import EdgePromoted, EntityPromoted, ledger_lines
from git_memhtml.sleep.engine.runfiles import ledger_file, report_path
from git_memhtml.sleep.landing.merge import apply_ledger, merge_run
from git_memhtml.sleep.phases.report import merged_ledger
from tests.forge.forge_helpers import NOW, applied_at, cli, git, memory_repo, sleep_run

LATER = "2026-02-02T09:00:00Z"
MARKS: list[EdgePromoted | EntityPromoted] = [
    EntityPromoted("service", "svc-a", "svc-alpha"),
    EntityPromoted("person", "ann\u2028x", "Ann\u0085 Lee"),  # separators inside a value: one line still
    EdgePromoted("areas/a.html", "contradicts", "areas/b.html"),
]


def _seed_rows(repo: Path) -> None:
    """The corroboration rows the marks promote, as the run's detections left them (promoted 0)."""
    db = IndexDB.for_repo(GitRepo.discover(repo))
    try:
        for mark in MARKS:
            if isinstance(mark, EntityPromoted):
                db.execute("INSERT INTO state.entity_corroboration (entity_type, alias_name, canonical_name, "
                           "detections, updated_at) VALUES (?, ?, ?, 2, ?)",
                           (mark.entity_type, mark.alias, mark.canonical, NOW))
            else:
                db.execute("INSERT INTO state.edge_corroboration (src_path, rel, dst_path, detections, updated_at) "
                           "VALUES (?, ?, ?, 2, ?)", (mark.src, mark.rel, mark.dst, NOW))
    finally:
        db.close()


def _promoted(repo: Path) -> list[int]:
    db = IndexDB.for_repo(GitRepo.discover(repo))
    try:
        entities = [int(r[0]) for r in db.query(
            "SELECT promoted FROM state.entity_corroboration ORDER BY entity_type DESC")]
        edges = [int(r[0]) for r in db.query("SELECT promoted FROM state.edge_corroboration")]
        return entities + edges
    finally:
        db.close()


def _reset(repo: Path) -> None:
    """Put every flag back behind the ledger's back, so a second application would show."""
    db = IndexDB.for_repo(GitRepo.discover(repo))
    try:
        db.execute("UPDATE state.entity_corroboration SET promoted = 0, confirmed = 0")
        db.execute("UPDATE state.edge_corroboration SET promoted = 0, confirmed = 0")
    finally:
        db.close()


def _commit_ledger(repo: Path, run_id: str) -> bytes:
    """The ledger the report phase renders for :data:`MARKS`, committed into the run's report commit."""
    folder = repo.parent / f"{repo.name}-ledger"
    git(repo, "worktree", "add", "-q", str(folder), run_id)
    data = merged_ledger("", MARKS).encode("utf-8")
    (folder / ledger_file(run_id)).write_bytes(data)
    git(folder, "add", ledger_file(run_id))
    git(folder, "commit", "-q", "--amend", "--no-edit")
    git(repo, "worktree", "remove", str(folder))
    return data


def _status_reconciled(repo: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    code, status = cli(capsys, "-C", str(repo), "sleep", "status")
    assert code == 0, status
    return list(status["data"]["reconciled"])


@pytest.mark.slow
def test_merge_applies_once_and_neither_a_second_merge_nor_reconcile_applies_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    repo = memory_repo(tmp_path, capsys)
    run = sleep_run(repo, capsys)
    _commit_ledger(repo, run)
    _seed_rows(repo)
    code, merged = cli(capsys, "-C", str(repo), "sleep", "merge", run, "--skip-gate")
    assert code == 0, merged
    assert (merged["data"]["marksPending"], merged["data"]["marksApplied"]) == (3, 3)
    assert _promoted(repo) == [1, 1, 1] and applied_at(repo, run) == [NOW]

    _reset(repo)
    monkeypatch.setenv("MEMHTML_NOW", LATER)
    code, again = cli(capsys, "-C", str(repo), "sleep", "merge", run, "--skip-gate")
    assert code == 1 and "already merged" in json.dumps(again)
    assert _status_reconciled(repo, capsys) == []
    db = IndexDB.for_repo(GitRepo.discover(repo))
    try:
        assert apply_ledger(GitRepo.discover(repo), db, run, run, now=LATER) == (3, 0)
    finally:
        db.close()
    assert _promoted(repo) == [0, 0, 0] and applied_at(repo, run) == [NOW]


@pytest.mark.slow
def test_a_rebase_carries_the_ledger_unchanged_applies_nothing_and_the_merge_applies_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    repo = memory_repo(tmp_path, capsys)
    run = sleep_run(repo, capsys)
    data = _commit_ledger(repo, run)
    _seed_rows(repo)
    code, wrote = cli(capsys, "-C", str(repo), "write", "--type", "semantic", "--title", "Late fact",
                      "--claim", "A fact written on main while the run waited for review.")
    assert code == 0, wrote

    code, rebased = cli(capsys, "-C", str(repo), "sleep", "rebase", run, "--skip-gate")
    assert code == 0 and rebased["data"]["rebased"], rebased
    assert (rebased["data"]["marksPending"], rebased["data"]["marksApplied"]) == (3, 0)
    head = rebased["data"]["headSha"]
    assert GitRepo.discover(repo).read_path_at(head, ledger_file(run)) == data  # byte for byte
    page = (GitRepo.discover(repo).read_path_at(head, report_path(run)) or b"").decode()
    assert "marksPending=3</td>" in page  # the re-rendered page counts the ledger as the report phase does
    assert _promoted(repo) == [0, 0, 0] and applied_at(repo, run) == []
    assert _status_reconciled(repo, capsys) == []  # the rebased run is not on main: nothing lands

    code, merged = cli(capsys, "-C", str(repo), "sleep", "merge", run, "--skip-gate")
    assert code == 0, merged
    assert (merged["data"]["marksPending"], merged["data"]["marksApplied"]) == (3, 3)
    assert _promoted(repo) == [1, 1, 1] and applied_at(repo, run) == [NOW]
    _reset(repo)
    assert _status_reconciled(repo, capsys) == []
    assert _promoted(repo) == [0, 0, 0]


# --- the application itself: hostile lines, one transaction ---------------------------------------------------------

HOSTILE = [
    "[1, 2]",
    '"entity-promoted"',
    "17",
    "null",
    "[" * 100_000 + "]" * 100_000,
    '{"kind": "entity-promoted", "entityType": ["service"], "alias": "svc-a", "canonical": "svc-alpha"}',
    '{"kind": "edge-promoted", "src": 1, "rel": "contradicts", "dst": "areas/b.html"}',
    '{"kind": "entity-promoted", "alias": "svc-a", "canonical": "svc-alpha"}',
    '{"kind": "drop-table", "sql": "DELETE FROM state.entity_corroboration"}',
    "{not json",
]


@pytest.mark.slow
def test_hostile_ledger_lines_are_skipped_and_the_good_marks_still_apply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    repo = memory_repo(tmp_path, capsys)
    run = sleep_run(repo, capsys)
    folder = repo.parent / "hostile"
    git(repo, "worktree", "add", "-q", str(folder), run)
    good = merged_ledger("", MARKS)
    (folder / ledger_file(run)).write_bytes(("\n".join(HOSTILE) + "\n").encode() + b"\xff\xfe\n" + good.encode())
    git(folder, "add", ledger_file(run))
    git(folder, "commit", "-q", "--amend", "--no-edit")
    git(repo, "worktree", "remove", str(folder))
    _seed_rows(repo)
    proc = subprocess.run(["git-memhtml", "sleep", "merge", run, "--skip-gate"], cwd=repo, capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    pending = len(HOSTILE) + 1 + len(MARKS)
    assert f"applied {len(MARKS)} of {pending} pending marks" in proc.stdout
    assert "ledger not applied" not in proc.stderr
    assert _promoted(repo) == [1, 1, 1]


def test_ledger_lines_split_on_newline_only() -> None:
    text = merged_ledger("", MARKS)
    assert len(ledger_lines(text)) == 3 and len(text.splitlines()) > 3
    assert merged_ledger(text, MARKS) == text  # a resume re-recording the marks appends nothing, splits nothing


def test_a_merge_that_loses_the_race_to_another_merge_of_the_run_says_already_merged_and_applies_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two ``sleep merge`` of one run: this one passes its checks, the other lands the run while this one runs its
    gate, and under the lock this one finds the trunk moved to the run's own tip: "already merged", not a rebase
    hint, and the ledger is not applied by the loser."""
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    repo = memory_repo(tmp_path, capsys)
    run = sleep_run(repo, capsys)

    def another_merge_lands_meanwhile() -> object:
        git(repo, "merge", "-q", "--ff-only", run)
        return None

    db = IndexDB.for_repo(GitRepo.discover(repo))
    try:
        report = merge_run(GitRepo.discover(repo), db, run, gate=another_merge_lands_meanwhile,
                           embedder=get_embedder("fake"), clock=lambda: NOW)
    finally:
        db.close()
    assert not report.merged and report.refusal == "main-advanced"
    assert report.reason == f"{run} is already merged into main (another merge landed it meanwhile)"
    assert report.hint == "start a fresh cycle: git memhtml sleep run"
    assert report.marks_applied is None and applied_at(repo, run) == []
    assert git(repo, "rev-parse", "main").strip() == git(repo, "rev-parse", run).strip()
