"""Run and phase rows in the state plane (docs/sleep.md §2.4 "Rows").

The rows are a convenience for ``status`` and ``merge``; the branch's commits are the record. A failed row write
never fails a run (docs/sleep.md §2.5).
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable, Collection
from dataclasses import dataclass
from git_memhtml.domain.instants import hours_between

from git_memhtml.errors import StorageError
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.contract import STALE_RUN_HOURS, phase_ordinal
from git_memhtml.sleep.env import PhaseReport


@dataclass(frozen=True)
class RunRow:
    """One ``state.sleep_runs`` row."""

    run_id: str
    branch: str
    base_sha: str
    head_sha: str | None
    status: str
    dry_run: bool
    started_at: str
    ended_at: str | None


_COLUMNS = "run_id, branch, base_sha, head_sha, status, dry_run, started_at, ended_at"


def _row(values: tuple[object, ...]) -> RunRow:
    return RunRow(
        str(values[0]),
        str(values[1]),
        str(values[2]),
        None if values[3] is None else str(values[3]),
        str(values[4]),
        bool(values[5]),
        str(values[6]),
        None if values[7] is None else str(values[7]),
    )


def current_owner() -> str:
    """Return ``<host>:<pid>`` of this process (stored on the run row it executes)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def owner_alive(owner: str | None) -> bool:
    """Whether the process named by ``owner`` still runs (unknown hosts count as alive)."""
    if not owner or ":" not in owner:
        return True
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def mark_interrupted(db: IndexDB, *, now: str, live: Collection[str] | None = None) -> list[str]:
    """Stamp ``interrupted`` on ``running`` rows whose process is gone; return their run ids.

    Args:
        live: the runs a live process holds the sleep lock for (:mod:`sleep.lock`; every run holds it throughout,
            so every other ``running`` row is interrupted, whatever pid its owner names now). ``None`` falls back
            to the row's owner pid on this host (a reused pid then reads as alive).

    An interrupted run is not abandoned: ``sleep resume <run>`` finishes it.
    """
    found = []
    for run_id, owner in db.query("SELECT run_id, owner FROM state.sleep_runs WHERE status = 'running'"):
        if (str(run_id) not in live) if live is not None else not owner_alive(owner):
            set_status(db, str(run_id), "interrupted", now=now)
            found.append(str(run_id))
    return found


def run_owner(db: IndexDB, run_id: str) -> str | None:
    """The ``<host>:<pid>`` stored on a run's row (the process that last executed it), or ``None``."""
    found = db.query_one("SELECT owner FROM state.sleep_runs WHERE run_id = ?", (run_id,))
    return None if found is None or found[0] is None else str(found[0])


def rebase_row(db: IndexDB, run_id: str, *, base_sha: str, head_sha: str, shas: dict[str, str]) -> None:
    """After ``sleep rebase``: the row's new base and head, and each phase row's commit sha mapped old → new.

    Raises:
        StorageError: the state plane cannot be written (the branch has moved; ``sleep status`` shows the old base
            until the row is fixed, and ``merge`` then refuses ``main-advanced``, which is safe).
    """
    with db.atomic():
        db.execute("UPDATE state.sleep_runs SET base_sha = ?, head_sha = ? WHERE run_id = ?",
                   (base_sha, head_sha, run_id))
        for old, new in shas.items():
            db.execute("UPDATE state.sleep_phases SET commit_sha = ? WHERE run_id = ? AND commit_sha = ?",
                       (new, run_id, old))


def unfinished_runs(db: IndexDB) -> list[RunRow]:
    """Return runs left ``running`` or ``interrupted``, newest first."""
    rows = db.query(
        f"SELECT {_COLUMNS} FROM state.sleep_runs WHERE status IN ('running', 'interrupted') "
        "ORDER BY started_at DESC, run_id DESC"
    )
    return [_row(r) for r in rows]


def get_run(db: IndexDB, run_id: str) -> RunRow | None:
    """Return the row of ``run_id``, or ``None``."""
    found = db.query_one(f"SELECT {_COLUMNS} FROM state.sleep_runs WHERE run_id = ?", (run_id,))
    return None if found is None else _row(found)


def latest_run(db: IndexDB, *, include_dry: bool = False) -> RunRow | None:
    """Return the most recently started run (dry runs excluded unless asked)."""
    where = "" if include_dry else "WHERE dry_run = 0"
    found = db.query_one(f"SELECT {_COLUMNS} FROM state.sleep_runs {where} ORDER BY started_at DESC, run_id DESC")
    return None if found is None else _row(found)


def all_runs(db: IndexDB) -> list[RunRow]:
    """Return every non-dry run, newest first."""
    rows = db.query(f"SELECT {_COLUMNS} FROM state.sleep_runs WHERE dry_run = 0 ORDER BY started_at DESC, run_id DESC")
    return [_row(r) for r in rows]


def upsert_run(db: IndexDB, row: RunRow) -> None:
    """Insert or update a run row; storage errors are swallowed (rows never fail a run)."""
    try:
        db.execute(
            f"INSERT INTO state.sleep_runs ({_COLUMNS}, owner) VALUES (?,?,?,?,?,?,?,?,?) "
            "ON CONFLICT(run_id) DO UPDATE SET head_sha=excluded.head_sha, status=excluded.status, "
            "ended_at=excluded.ended_at, owner=excluded.owner",
            (
                row.run_id,
                row.branch,
                row.base_sha,
                row.head_sha,
                row.status,
                int(row.dry_run),
                row.started_at,
                row.ended_at,
                current_owner(),
            ),
        )
    except StorageError:
        pass


def set_status(db: IndexDB, run_id: str, status: str, *, head_sha: str | None = None, now: str) -> None:
    """Update a run's status (and head) — errors swallowed."""
    try:
        db.execute(
            "UPDATE state.sleep_runs SET status = ?, head_sha = coalesce(?, head_sha), ended_at = ? WHERE run_id = ?",
            (status, head_sha, now, run_id),
        )
    except StorageError:
        pass


def record_phase(db: IndexDB, run_id: str, report: PhaseReport, *, started_at: str, ended_at: str) -> None:
    """Write one phase row (not on dry runs; errors swallowed)."""
    try:
        db.execute(
            "INSERT INTO state.sleep_phases (run_id, phase, ordinal, status, commit_sha, counts, detail, llm_calls,"
            " started_at, ended_at) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT(run_id, phase) DO UPDATE SET "
            "status=excluded.status, commit_sha=excluded.commit_sha, counts=excluded.counts, "
            "detail=excluded.detail, llm_calls=excluded.llm_calls, started_at=excluded.started_at, "
            "ended_at=excluded.ended_at",
            (
                run_id,
                report.phase,
                phase_ordinal(report.phase),
                report.status,
                report.commit_sha,
                json.dumps(report.counts),
                report.detail,
                report.llm_calls,
                started_at,
                ended_at,
            ),
        )
    except StorageError:
        pass


def phase_rows(db: IndexDB, run_id: str) -> list[PhaseReport]:
    """Return a run's phase rows in canonical order."""
    rows = db.query(
        "SELECT phase, status, counts, commit_sha, llm_calls, detail FROM state.sleep_phases "
        "WHERE run_id = ? ORDER BY ordinal",
        (run_id,),
    )
    return [PhaseReport(str(r[0]), str(r[1]), json.loads(str(r[2])), r[3], int(r[4]), r[5]) for r in rows]


def reap_stale(db: IndexDB, *, branch_exists: Callable[[str], bool], now: str) -> list[dict[str, str]]:
    """Stamp ``abandoned`` on unfinished rows whose branch is gone, or ``running`` ones started over 20 h ago.

    The reaping rule of docs/sleep.md §2.4; an ``interrupted`` run whose branch exists is left for ``sleep resume``.

    Returns:
        ``[{"runId", "reason"}]`` for each reaped row.
    """
    reaped: list[dict[str, str]] = []
    for row in db.query(f"SELECT {_COLUMNS} FROM state.sleep_runs WHERE status IN ('running', 'interrupted')"):
        run = _row(row)
        hours = hours_between(run.started_at, now)
        reason = None
        if not run.dry_run and not branch_exists(run.branch):
            reason = "branch gone"
        elif run.status == "running" and hours > STALE_RUN_HOURS:
            reason = f"started {int(hours)}h ago, past budget"
        if reason:
            set_status(db, run.run_id, "abandoned", now=now)
            reaped.append({"runId": run.run_id, "reason": reason})
    return reaped
