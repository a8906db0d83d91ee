"""Shared pieces of the forge tests: the CLI in-process, the real git binary, a memory repo with one sleep run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.main import main
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.engine.runfiles import ledger_file

DATE = "2026-02-01"
RUN = f"sleep/{DATE}"
NOW = "2026-02-01T09:00:00Z"
MARK = {"kind": "entity-promoted", "entityType": "service", "alias": "svc-a", "canonical": "svc-alpha"}
"""A pending mark whose application is visible: it promotes one seeded corroboration row."""


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    """Run ``git memhtml <args> --json`` in-process; return (exit code, parsed envelope or None)."""
    capsys.readouterr()
    code = main([*args, "--json"])
    out = capsys.readouterr().out
    return code, (json.loads(out) if out.strip() else None)


def git(root: Path, *args: str) -> str:
    """Run the real git binary in ``root``; return stdout."""
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def memory_repo(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str = "memory") -> Path:
    """``git memhtml init`` plus three written memories (three commits on main)."""
    repo = tmp_path / name
    assert cli(capsys, "init", str(repo))[0] == 0
    for i in (1, 2, 3):
        code, env = cli(capsys, "-C", str(repo), "write", "--type", "semantic", "--title", f"Fact {i}",
                        "--claim", f"The service number {i} listens on port 80{i}.", "--entity", f"service:svc{i}")
        assert code == 0, env
    return repo


def sleep_run(repo: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """A complete run on ``sleep/<DATE>``; returns its run id."""
    code, env = cli(capsys, "-C", str(repo), "sleep", "run", "--date", DATE)
    assert code == 0, env
    return str(env["data"]["runId"])


def add_ledger_commit(repo: Path, run_id: str, marks: list[dict[str, str]]) -> str:
    """Commit a pending-mark ledger on the run's branch (as the report phase does when marks exist); seed the
    corroboration rows the marks promote. Returns the new branch tip."""
    main_repo = GitRepo.discover(repo)
    folder = repo.parent / f"{repo.name}-ledger-worktree"
    git(repo, "worktree", "add", "-q", str(folder), run_id)
    path = folder / ledger_file(run_id)
    path.write_text("".join(json.dumps(m, sort_keys=True, separators=(",", ":")) + "\n" for m in marks))
    git(folder, "add", ledger_file(run_id))
    git(folder, "commit", "-q", "--amend", "--no-edit")  # into the run's report commit, where the report phase
    # commits a ledger: the landing rail refuses any commit after the report
    git(repo, "worktree", "remove", str(folder))
    db = IndexDB.for_repo(main_repo)
    try:
        for m in marks:
            db.execute(
                "INSERT INTO state.entity_corroboration (entity_type, alias_name, canonical_name, detections, "
                "updated_at) VALUES (?, ?, ?, 1, ?)", (m["entityType"], m["alias"], m["canonical"], NOW))
    finally:
        db.close()
    return git(repo, "rev-parse", run_id).strip()


def promoted(repo: Path, mark: dict[str, str] = MARK) -> int:
    """The ``promoted`` flag of the corroboration row ``mark`` names."""
    db = IndexDB.for_repo(GitRepo.discover(repo))
    try:
        row = db.query_one("SELECT promoted FROM state.entity_corroboration WHERE entity_type = ? AND alias_name = ?"
                           " AND canonical_name = ?", (mark["entityType"], mark["alias"], mark["canonical"]))
    finally:
        db.close()
    return -1 if row is None else int(row[0])


def set_promoted(repo: Path, value: int, mark: dict[str, str] = MARK) -> None:
    """Reset the flag (to prove a later pass does not apply the ledger again)."""
    db = IndexDB.for_repo(GitRepo.discover(repo))
    try:
        db.execute("UPDATE state.entity_corroboration SET promoted = ? WHERE alias_name = ?", (value, mark["alias"]))
    finally:
        db.close()


def applied_at(repo: Path, run_id: str) -> list[str]:
    """Every ``state.applied_ledgers`` stamp of ``run_id`` (one row at most)."""
    db = IndexDB.for_repo(GitRepo.discover(repo))
    try:
        return [str(r[0]) for r in db.query("SELECT applied_at FROM state.applied_ledgers WHERE run_id = ?",
                                            (run_id,))]
    finally:
        db.close()
