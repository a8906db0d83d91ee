"""The access plane ``state.access``: reinforcement, reads, renames and the committed JSONL export
(docs/index.md §3.3, §3.8, docs/retrieval.md §4.4 "Reinforcement"; docs/retention.md §4.5). This module is the sole
writer of ``state.access`` and of ``state.observation``, the instant this store began observing reads (issue 8 item 4;
docs/sleep.md).

Only explicit reads and ``reinforce`` bump; search and recall never do. The 900 s cooldown is decided in SQL
(the upsert's ``WHERE``), and it gates the signal too. ``now`` is always passed in (ISO-8601 UTC).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from git_memhtml.domain.reinforce import (
    COOLDOWN_SECONDS,
    OUTCOME_DECAY,
    OUTCOME_GAIN,
    SIGNAL_VALUES,
    AccessState,
    Signal,
)
from git_memhtml.errors import UsageError
from git_memhtml.index.db import IndexDB

_UPSERT = f"""
INSERT INTO state.access(path, access_count, reinforcement_count, outcome_score, last_accessed_at,
                         last_reinforced_at, updated_at)
VALUES (:path, 1, :bump, :sig, :now, CASE WHEN :bump = 1 THEN :now END, :now)
ON CONFLICT(path) DO UPDATE SET
  access_count = access_count + 1,
  reinforcement_count = reinforcement_count + :bump,
  outcome_score = CASE WHEN :bump = 1
                       THEN max(-1.0, min(1.0, {OUTCOME_DECAY!r} * outcome_score + {OUTCOME_GAIN!r} * :sig))
                       ELSE outcome_score END,
  last_accessed_at = :now,
  last_reinforced_at = CASE WHEN :bump = 1 THEN :now ELSE last_reinforced_at END,
  updated_at = :now
WHERE last_accessed_at IS NULL OR unixepoch(:now) - unixepoch(last_accessed_at) >= {COOLDOWN_SECONDS}
RETURNING path
"""
"""One bump (docs/retention.md §4.5): first insert sets outcome = signal; later non-neutral signals take the EWMA
``clamp(0.7·old + 0.3·s, −1, 1)``; the cooldown (900 s) refuses the whole bump; RETURNING says it applied."""

_OBSERVED = """
INSERT INTO state.observation(id, started_at) VALUES (1, :now)
ON CONFLICT(id) DO UPDATE SET started_at = excluded.started_at
WHERE unixepoch(started_at) IS NULL OR unixepoch(excluded.started_at) < unixepoch(started_at)
"""
"""Record that this store observes reads from ``:now`` on (issue 8 item 4): the first applied bump inserts the
row; a later one replaces it only when it is earlier (a skewed clock) or the stored start is unreadable."""


def reinforce(db: IndexDB, paths: Sequence[str], *, signal: Signal, now: str) -> tuple[str, ...]:
    """Bump ``paths`` (deduplicated) with ``signal`` at ``now``; return the paths that were bumped (the others
    were inside their 900 s cooldown), in input order. The first applied bump of the store also records ``now`` as
    its observation start (:func:`observation_start`), in the same transaction.

    Raises:
        UsageError: unknown signal. StorageError: SQLite failed.
    """
    if signal not in SIGNAL_VALUES:
        raise UsageError(f"unknown signal {signal!r}", hint=f"use one of: {', '.join(SIGNAL_VALUES)}")
    value = SIGNAL_VALUES[signal]
    bumped: list[str] = []
    with db.atomic():
        for path in dict.fromkeys(paths):
            rows = db.query(_UPSERT, {"path": path, "bump": int(value != 0), "sig": float(value), "now": now})
            if rows:
                bumped.append(path)
        if bumped:
            db.execute(_OBSERVED, {"now": now})
    return tuple(bumped)


def record_read(db: IndexDB, path: str, *, now: str) -> bool:
    """Record one explicit read of ``path`` (neutral bump); return whether it applied (not cooled down). A
    read-only index (``db.read_only``) records nothing: the read is served, its access is not counted."""
    if db.read_only is not None:
        return False
    return bool(reinforce(db, [path], signal="neutral", now=now))


def observation_start(db: IndexDB) -> str | None:
    """The instant (ISO-8601 UTC) from which this store has observed reads: its first applied access bump, or for
    a state.db older than migration ``0006_observation`` its earliest ``last_accessed_at``. ``None`` when nobody
    ever read anything through this store (a fresh import, a fresh clone: the sidecar is not imported).

    Renames, folds and the sidecar export never move it. Raises ``StorageError``.
    """
    row = db.query_one("SELECT started_at FROM state.observation WHERE id = 1")
    return None if row is None else str(row[0])


def rename_access(db: IndexDB, old: str, new: str) -> bool:
    """Move the access row of ``old`` to ``new`` (docs/index.md §3.3 ``onMove``): the CLI's ``archive`` and ``correct``
    call it once their commit landed, and a sleep run's plain archive moves reach it when the run lands
    (:mod:`git_memhtml.sleep.landing.access_moves`). A row already at ``new`` is replaced by ``old``'s history. Returns
    whether ``old`` had a row."""
    if old == new:
        return db.query_one("SELECT 1 FROM state.access WHERE path = ?", (old,)) is not None
    with db.atomic():
        if db.query_one("SELECT 1 FROM state.access WHERE path = ?", (old,)) is None:
            return False
        db.execute("DELETE FROM state.access WHERE path = ?", (new,))
        db.execute("UPDATE state.access SET path = ? WHERE path = ?", (new, old))
    return True


def _later(a: str | None, b: str | None) -> str | None:
    """The later of two ISO-8601 UTC instants (string order is time order); ``None`` only when both are."""
    return max((v for v in (a, b) if v is not None), default=None)


def fold_access(db: IndexDB, old: str, keeper: str) -> bool:
    """Pass the access history of ``old`` to ``keeper`` (a dedup fold: ``old`` was archived into it) and drop the
    row of ``old``. Returns whether ``old`` had a row.

    Merge rule (our decision, docs/store.md; the counts merge like the sidecar import of docs/index.md §3.8 but add,
    since
    the two rows count different reads): ``access_count`` and ``reinforcement_count`` are summed;
    ``last_accessed_at``, ``last_reinforced_at`` and ``updated_at`` take the later instant; ``outcome_score`` is
    the mean of both weighted by their reinforcement counts (the keeper's when neither was reinforced), so it
    stays in [-1, 1]. Without a keeper row this is :func:`rename_access`.
    """
    if old == keeper:
        return db.query_one("SELECT 1 FROM state.access WHERE path = ?", (old,)) is not None
    columns = ("access_count, reinforcement_count, outcome_score, last_accessed_at, last_reinforced_at, "
               "updated_at")
    with db.atomic():
        gone = db.query_one(f"SELECT {columns} FROM state.access WHERE path = ?", (old,))
        if gone is None:
            return False
        kept = db.query_one(f"SELECT {columns} FROM state.access WHERE path = ?", (keeper,))
        if kept is None:
            db.execute("UPDATE state.access SET path = ? WHERE path = ?", (keeper, old))
            return True
        reinforced = int(kept[1]) + int(gone[1])
        outcome = (float(kept[2]) if reinforced == 0
                   else (float(kept[2]) * int(kept[1]) + float(gone[2]) * int(gone[1])) / reinforced)
        db.execute(
            "UPDATE state.access SET access_count = ?, reinforcement_count = ?, outcome_score = ?, "
            "last_accessed_at = ?, last_reinforced_at = ?, updated_at = ? WHERE path = ?",
            (int(kept[0]) + int(gone[0]), reinforced, max(-1.0, min(1.0, outcome)), _later(kept[3], gone[3]),
             _later(kept[4], gone[4]), _later(kept[5], gone[5]), keeper),
        )
        db.execute("DELETE FROM state.access WHERE path = ?", (old,))
    return True


def _score(value: float) -> float | int:
    rounded = round(float(value), 4)
    if rounded == 0:
        return 0
    return int(rounded) if rounded.is_integer() else rounded


def export_access_jsonl(db: IndexDB) -> str:
    """Return ``state.access`` as the committed sidecar text (docs/index.md §3.8): rows by path, one compact JSON object
    per line with keys ``path, accessCount, reinforcementCount, outcomeScore`` (4 dp, −0 → 0, integral values
    without a fraction), ``lastAccessedAt, lastReinforcedAt, updatedAt``; trailing newline; ``""`` when empty."""
    rows = db.query(
        "SELECT path, access_count, reinforcement_count, outcome_score, last_accessed_at, last_reinforced_at, "
        "updated_at FROM state.access ORDER BY path"
    )
    lines = [
        json.dumps(
            {
                "path": path,
                "accessCount": int(count),
                "reinforcementCount": int(reinforced),
                "outcomeScore": _score(outcome),
                "lastAccessedAt": last_access,
                "lastReinforcedAt": last_reinforced,
                "updatedAt": updated,
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )
        for path, count, reinforced, outcome, last_access, last_reinforced, updated in rows
    ]
    return "".join(line + "\n" for line in lines)


def access_rows(db: IndexDB) -> dict[str, AccessState]:
    """Every ``state.access`` row keyed by path; a path without a row reads as ``AccessState()``. Raises
    ``StorageError``."""
    rows = db.query(
        "SELECT path, access_count, reinforcement_count, outcome_score, last_accessed_at, last_reinforced_at "
        "FROM state.access"
    )
    return {
        str(path): AccessState(int(count), int(reinforced), float(outcome), last_access, last_reinforced)
        for path, count, reinforced, outcome, last_access, last_reinforced in rows
    }


@dataclass(frozen=True)
class AccessSeed(AccessState):
    """One whole ``state.access`` row to store as given (docs/index.md §3.3): the access facts of
    :class:`~git_memhtml.domain.reinforce.AccessState` plus the row's key ``path`` and its ``updated_at``; instants
    are ISO-8601 UTC seconds. Built by keyword only (the evaluation fixture's rows)."""

    path: str = field(kw_only=True)
    updated_at: str = field(kw_only=True)


def seed_access(db: IndexDB, rows: Sequence[AccessSeed]) -> None:
    """Insert or replace ``rows`` in ``state.access`` in one transaction, bypassing the bump rules (the evaluation
    harness seeds a fixture's history this way). Raises ``StorageError``."""
    with db.atomic():
        db.executemany(
            "INSERT OR REPLACE INTO state.access (path, access_count, reinforcement_count, outcome_score, "
            "last_accessed_at, last_reinforced_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(r.path, r.access_count, r.reinforcement_count, r.outcome_score, r.last_accessed_at,
              r.last_reinforced_at, r.updated_at) for r in rows],
        )
