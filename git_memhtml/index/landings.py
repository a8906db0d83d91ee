"""How a sleep run reached ``main``: the ``state.sleep_landings`` rows (issue 5 item 3; docs/forge-ci.md), and
the ``state.applied_ledgers`` rows that say a run's pending-mark ledger was applied once.

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
    """Every landing row by run id. Raises ``StorageError``."""
    rows = db.query("SELECT run_id, how, commit_sha, landed_at FROM state.sleep_landings")
    return {
        str(run_id): LandingRow(str(run_id), str(how), None if sha is None else str(sha), str(at))
        for run_id, how, sha, at in rows
    }


def applied_ledgers(db: IndexDB) -> set[str]:
    """Run ids whose pending-mark ledger was applied (``state.applied_ledgers``)."""
    return {str(run_id) for (run_id,) in db.query("SELECT run_id FROM state.applied_ledgers")}


def ledger_applied(db: IndexDB, run_id: str) -> bool:
    """Whether ``run_id``'s ledger has its ``state.applied_ledgers`` row. Raises ``StorageError``."""
    return db.query_one("SELECT 1 FROM state.applied_ledgers WHERE run_id = ?", (run_id,)) is not None


def mark_ledger_applied(db: IndexDB, run_id: str, *, now: str) -> None:
    """Insert ``run_id``'s ``state.applied_ledgers`` row stamped ``now``.

    Raises:
        StorageError: the state database cannot be written, or the row exists (primary key).
    """
    db.execute("INSERT INTO state.applied_ledgers (run_id, applied_at) VALUES (?, ?)", (run_id, now))
