"""The run and phase rows of the state plane: ``state.sleep_runs`` and ``state.sleep_phases``
(docs/sleep.md §2.4 "Rows"; migration ``state_migrations/0004_sleep_runs.sql``).

Plain reads and writes; every function raises ``StorageError`` when SQLite fails. Whether a failed write may fail a
run is the caller's decision (``sleep.engine.runs`` swallows them). Instants are ISO-8601 UTC strings.
"""

from __future__ import annotations

from dataclasses import dataclass

from git_memhtml.index.db import IndexDB


@dataclass(frozen=True)
class RunRow:
    """One ``state.sleep_runs`` row (the ``owner`` column is read on its own: :func:`running_owners`)."""

    run_id: str
    branch: str
    base_sha: str
    head_sha: str | None
    status: str
    dry_run: bool
    started_at: str
    ended_at: str | None


@dataclass(frozen=True)
class RunOwner:
    """A run id with the ``<host>:<pid>`` that last executed it (``None`` when never recorded)."""

    run_id: str
    owner: str | None


@dataclass(frozen=True)
class PhaseRow:
    """One ``state.sleep_phases`` row; ``counts`` is the stored JSON text (an object)."""

    phase: str
    status: str
    counts: str
    commit_sha: str | None
    llm_calls: int
    detail: str | None


_COLUMNS = "run_id, branch, base_sha, head_sha, status, dry_run, started_at, ended_at"


def _run(values: tuple[object, ...]) -> RunRow:
    run_id, branch, base, head, status, dry, started, ended = values
    return RunRow(
        str(run_id), str(branch), str(base), None if head is None else str(head), str(status), bool(dry),
        str(started), None if ended is None else str(ended),
    )


def get_run(db: IndexDB, run_id: str) -> RunRow | None:
    """The row of ``run_id``, or ``None``."""
    found = db.query_one(f"SELECT {_COLUMNS} FROM state.sleep_runs WHERE run_id = ?", (run_id,))
    return None if found is None else _run(found)


def latest_run(db: IndexDB, *, include_dry: bool = False) -> RunRow | None:
    """The most recently started run (``started_at`` then ``run_id``, descending); dry runs only when asked."""
    where = "" if include_dry else "WHERE dry_run = 0"
    found = db.query_one(f"SELECT {_COLUMNS} FROM state.sleep_runs {where} ORDER BY started_at DESC, run_id DESC")
    return None if found is None else _run(found)


def all_runs(db: IndexDB) -> list[RunRow]:
    """Every non-dry run, newest first."""
    rows = db.query(f"SELECT {_COLUMNS} FROM state.sleep_runs WHERE dry_run = 0 ORDER BY started_at DESC, run_id DESC")
    return [_run(r) for r in rows]


def unfinished_runs(db: IndexDB) -> list[RunRow]:
    """Runs left ``running`` or ``interrupted``, newest first."""
    rows = db.query(
        f"SELECT {_COLUMNS} FROM state.sleep_runs WHERE status IN ('running', 'interrupted') "
        "ORDER BY started_at DESC, run_id DESC"
    )
    return [_run(r) for r in rows]


def unfinished_runs_stored(db: IndexDB) -> list[RunRow]:
    """Runs left ``running`` or ``interrupted`` in SQLite's storage order (no ``ORDER BY``; the reaper's read)."""
    return [
        _run(r)
        for r in db.query(f"SELECT {_COLUMNS} FROM state.sleep_runs WHERE status IN ('running', 'interrupted')")
    ]


def running_runs(db: IndexDB) -> list[RunRow]:
    """Runs whose status is ``running``, by ``run_id``."""
    rows = db.query(f"SELECT {_COLUMNS} FROM state.sleep_runs WHERE status = 'running' ORDER BY run_id")
    return [_run(r) for r in rows]


def running_owners(db: IndexDB) -> list[RunOwner]:
    """Every ``running`` run with its stored owner (storage order)."""
    rows = db.query("SELECT run_id, owner FROM state.sleep_runs WHERE status = 'running'")
    return [RunOwner(str(run_id), None if owner is None else str(owner)) for run_id, owner in rows]


def run_owner(db: IndexDB, run_id: str) -> str | None:
    """The ``<host>:<pid>`` stored on a run's row, or ``None`` (no row, or no owner recorded)."""
    found = db.query_one("SELECT owner FROM state.sleep_runs WHERE run_id = ?", (run_id,))
    return None if found is None or found[0] is None else str(found[0])


def merged_runs(db: IndexDB) -> set[str]:
    """Run ids whose ``state.sleep_runs`` row is ``merged``."""
    return {str(r[0]) for r in db.query("SELECT run_id FROM state.sleep_runs WHERE status = 'merged'")}


def upsert_run(db: IndexDB, row: RunRow, *, owner: str) -> None:
    """Insert ``row`` with ``owner``, or update the head, status, end and owner of the existing row."""
    db.execute(
        f"INSERT INTO state.sleep_runs ({_COLUMNS}, owner) VALUES (?,?,?,?,?,?,?,?,?) "
        "ON CONFLICT(run_id) DO UPDATE SET head_sha=excluded.head_sha, status=excluded.status, "
        "ended_at=excluded.ended_at, owner=excluded.owner",
        (row.run_id, row.branch, row.base_sha, row.head_sha, row.status, int(row.dry_run), row.started_at,
         row.ended_at, owner),
    )


def set_status(db: IndexDB, run_id: str, status: str, *, head_sha: str | None, now: str) -> None:
    """Set a run's status and end instant ``now``; its head becomes ``head_sha`` unless that is ``None``."""
    db.execute(
        "UPDATE state.sleep_runs SET status = ?, head_sha = coalesce(?, head_sha), ended_at = ? WHERE run_id = ?",
        (status, head_sha, now, run_id),
    )


def rebase_run(db: IndexDB, run_id: str, *, base_sha: str, head_sha: str, shas: dict[str, str]) -> None:
    """In one transaction: the run's new base and head, and each phase row's ``commit_sha`` mapped old → new."""
    with db.atomic():
        db.execute("UPDATE state.sleep_runs SET base_sha = ?, head_sha = ? WHERE run_id = ?",
                   (base_sha, head_sha, run_id))
        for old, new in shas.items():
            db.execute("UPDATE state.sleep_phases SET commit_sha = ? WHERE run_id = ? AND commit_sha = ?",
                       (new, run_id, old))


def upsert_phase(
    db: IndexDB, run_id: str, row: PhaseRow, *, ordinal: int, started_at: str, ended_at: str
) -> None:
    """Insert or replace the ``(run_id, row.phase)`` phase row; ``ordinal`` is the phase's canonical position."""
    db.execute(
        "INSERT INTO state.sleep_phases (run_id, phase, ordinal, status, commit_sha, counts, detail, llm_calls,"
        " started_at, ended_at) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT(run_id, phase) DO UPDATE SET "
        "status=excluded.status, commit_sha=excluded.commit_sha, counts=excluded.counts, "
        "detail=excluded.detail, llm_calls=excluded.llm_calls, started_at=excluded.started_at, "
        "ended_at=excluded.ended_at",
        (run_id, row.phase, ordinal, row.status, row.commit_sha, row.counts, row.detail, row.llm_calls, started_at,
         ended_at),
    )


def phase_rows(db: IndexDB, run_id: str) -> list[PhaseRow]:
    """A run's phase rows by ``ordinal``."""
    rows = db.query(
        "SELECT phase, status, counts, commit_sha, llm_calls, detail FROM state.sleep_phases "
        "WHERE run_id = ? ORDER BY ordinal",
        (run_id,),
    )
    return [PhaseRow(str(p), str(s), str(c), sha, int(n), detail) for p, s, c, sha, n, detail in rows]
