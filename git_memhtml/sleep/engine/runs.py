"""Run and phase rows in the state plane (docs/sleep.md §2.4 "Rows"): the engine's policy over the
queries of :mod:`git_memhtml.index.runs` (which also holds the plain reads: ``get_run``, ``latest_run``, …).

The rows are a convenience for ``status`` and ``merge``; the branch's commits are the record. A failed row write
never fails a run (docs/sleep.md §2.5).
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable, Collection
from typing import Literal, get_args

from git_memhtml.domain.instants import hours_between
from git_memhtml.errors import StorageError
from git_memhtml.index import runs as run_rows
from git_memhtml.index.db import IndexDB
from git_memhtml.index.runs import RunRow
from git_memhtml.sleep.engine.contract import STALE_RUN_HOURS, phase_ordinal
from git_memhtml.sleep.engine.env import PhaseReport, phase_status

RunState = Literal["running", "interrupted", "failed", "review", "merged", "abandoned"]
"""A run's state: its row's ``status`` (the ``state.sleep_runs.status`` CHECK of state migration 0004 allows
exactly these), and what :func:`git_memhtml.sleep.engine.runref.resolve_sleep_run` judges a run to be."""

RUN_STATES: tuple[RunState, ...] = get_args(RunState)
"""Every run state, in the order of :data:`RunState`."""


def run_state(value: str) -> RunState | None:
    """Return ``value`` as a :data:`RunState`, or ``None`` when it is none."""
    for state in RUN_STATES:
        if state == value:
            return state
    return None


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
    for run in run_rows.running_owners(db):
        if (run.run_id not in live) if live is not None else not owner_alive(run.owner):
            set_status(db, run.run_id, "interrupted", now=now)
            found.append(run.run_id)
    return found


def upsert_run(db: IndexDB, row: RunRow) -> None:
    """Insert or update a run row; storage errors are swallowed (rows never fail a run)."""
    try:
        run_rows.upsert_run(db, row, owner=current_owner())
    except StorageError:
        pass


def set_status(db: IndexDB, run_id: str, status: RunState, *, head_sha: str | None = None, now: str) -> None:
    """Update a run's status (and head) — errors swallowed."""
    try:
        run_rows.set_status(db, run_id, status, head_sha=head_sha, now=now)
    except StorageError:
        pass


def record_phase(db: IndexDB, run_id: str, report: PhaseReport, *, started_at: str, ended_at: str) -> None:
    """Write one phase row (not on dry runs; errors swallowed)."""
    try:
        run_rows.upsert_phase(
            db,
            run_id,
            run_rows.PhaseRow(report.phase, report.status, json.dumps(report.counts), report.commit_sha,
                          report.llm_calls, report.detail),
            ordinal=phase_ordinal(report.phase),
            started_at=started_at,
            ended_at=ended_at,
        )
    except StorageError:
        pass


def phase_rows(db: IndexDB, run_id: str) -> list[PhaseReport]:
    """Return a run's phase rows in canonical order."""
    out: list[PhaseReport] = []
    for r in run_rows.phase_rows(db, run_id):
        status = phase_status(r.status)
        if status is None:  # only a row written around the CHECK constraint of state migration 0004
            raise StorageError(f"state.db: run {run_id} phase {r.phase} has unknown status {r.status!r}",
                               hint=f"git memhtml sleep abort {run_id} drops the run", path=str(db.state_path))
        out.append(PhaseReport(r.phase, status, json.loads(r.counts), r.commit_sha, r.llm_calls, r.detail))
    return out


def reap_stale(db: IndexDB, *, branch_exists: Callable[[str], bool], now: str) -> list[dict[str, str]]:
    """Stamp ``abandoned`` on unfinished rows whose branch is gone, or ``running`` ones started over 20 h ago.

    The reaping rule of docs/sleep.md §2.4; an ``interrupted`` run whose branch exists is left for ``sleep resume``.

    Returns:
        ``[{"runId", "reason"}]`` for each reaped row.
    """
    reaped: list[dict[str, str]] = []
    for run in run_rows.unfinished_runs_stored(db):
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
