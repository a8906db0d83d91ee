"""How a sleep run reached ``main``: the ``state.sleep_landings`` rows (issue 5 item 3; docs/forge-ci.md).

``how`` is one of :data:`LANDINGS`: ``sleep-merge`` (our own fast-forward after the gate), or, for a run merged
on a forge and pulled, ``fast-forward`` (the run's own commits are on main's first-parent line; a forge's
"rebase and merge" reads the same), ``merge-commit`` (a merge commit brought the run's files) or ``squash`` (one
new commit brought them). The first landing recorded for a run wins; later calls change nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from git_memhtml.index.db import IndexDB

LANDINGS: tuple[str, ...] = ("sleep-merge", "fast-forward", "merge-commit", "squash")
"""The allowed ``how`` values (the migration's CHECK constraint)."""


@dataclass(frozen=True)
class LandingRow:
    """One ``state.sleep_landings`` row."""

    run_id: str
    how: str
    commit_sha: str | None
    landed_at: str

    def as_json(self) -> dict[str, str | None]:
        """JSON shape: ``{"how", "commitSha", "landedAt"}``."""
        return {"how": self.how, "commitSha": self.commit_sha, "landedAt": self.landed_at}


def record_landing(db: IndexDB, run_id: str, how: str, commit_sha: str | None, *, now: str) -> bool:
    """Record that ``run_id`` landed on main ``how`` at commit ``commit_sha``; return whether a row was written.

    Raises:
        ValueError: ``how`` is not one of :data:`LANDINGS`.
        StorageError: the state database cannot be written.
    """
    if how not in LANDINGS:
        raise ValueError(f"unknown landing {how!r}; one of {', '.join(LANDINGS)}")
    return db.execute(
        "INSERT INTO state.sleep_landings (run_id, how, commit_sha, landed_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(run_id) DO NOTHING",
        (run_id, how, commit_sha, now),
    ) > 0


def landing_rows(db: IndexDB) -> dict[str, LandingRow]:
    """Every landing row by run id."""
    rows = db.query("SELECT run_id, how, commit_sha, landed_at FROM state.sleep_landings")
    return {str(r[0]): LandingRow(str(r[0]), str(r[1]), None if r[2] is None else str(r[2]), str(r[3])) for r in rows}


def applied_ledgers(db: IndexDB) -> set[str]:
    """Run ids whose pending-mark ledger was applied (``state.applied_ledgers``)."""
    return {str(r[0]) for r in db.query("SELECT run_id FROM state.applied_ledgers")}


def merged_runs(db: IndexDB) -> set[str]:
    """Run ids whose ``state.sleep_runs`` row is ``merged``."""
    return {str(r[0]) for r in db.query("SELECT run_id FROM state.sleep_runs WHERE status = 'merged'")}
