"""Access plane: cooldown in SQL, outcome EWMA, rename, JSONL export (docs/index.md §3.8, docs/retrieval.md §4;
docs/retention.md §4.5)."""

from __future__ import annotations

import json

import pytest

from git_memhtml.errors import UsageError
from git_memhtml.index.access import export_access_jsonl, record_read, reinforce, rename_access
from git_memhtml.index.db import IndexDB

T0 = "2026-01-01T00:00:00Z"


def _row(db: IndexDB, path: str) -> tuple[object, ...] | None:
    return db.query_one(
        "SELECT access_count, reinforcement_count, outcome_score, last_accessed_at, last_reinforced_at "
        "FROM state.access WHERE path = ?", (path,))


def test_cooldown_gates_the_bump_and_the_signal(db: IndexDB) -> None:
    assert reinforce(db, ["a", "a", "b"], signal="positive", now=T0) == ("a", "b")
    assert _row(db, "a") == (1, 1, 1.0, T0, T0)
    assert reinforce(db, ["a"], signal="negative", now="2026-01-01T00:14:59Z") == ()
    assert _row(db, "a") == (1, 1, 1.0, T0, T0)
    assert reinforce(db, ["a"], signal="negative", now="2026-01-01T00:15:00Z") == ("a",)
    count, reinforced, outcome, _, last = _row(db, "a")  # type: ignore[misc]
    assert (count, reinforced, last) == (2, 2, "2026-01-01T00:15:00Z")
    assert outcome == pytest.approx(0.7 * 1.0 - 0.3)


def test_neutral_read_counts_access_only(db: IndexDB) -> None:
    assert record_read(db, "a", now=T0)
    assert not record_read(db, "a", now="2026-01-01T00:01:00Z")
    assert _row(db, "a") == (1, 0, 0.0, T0, None)
    with pytest.raises(UsageError):
        reinforce(db, ["a"], signal="great", now=T0)  # type: ignore[arg-type]


def test_rename_moves_the_row(db: IndexDB) -> None:
    reinforce(db, ["old"], signal="positive", now=T0)
    assert rename_access(db, "old", "new")
    assert _row(db, "old") is None and _row(db, "new") == (1, 1, 1.0, T0, T0)
    assert not rename_access(db, "missing", "x")


def test_export_format(db: IndexDB) -> None:
    assert export_access_jsonl(db) == ""
    reinforce(db, ["b"], signal="positive", now=T0)
    reinforce(db, ["a"], signal="neutral", now=T0)
    reinforce(db, ["b"], signal="negative", now="2026-01-01T01:00:00Z")
    text = export_access_jsonl(db)
    assert text.endswith("\n") and text.count("\n") == 2
    first, second = (json.loads(line) for line in text.splitlines())
    assert list(first) == ["path", "accessCount", "reinforcementCount", "outcomeScore", "lastAccessedAt",
                           "lastReinforcedAt", "updatedAt"]
    assert first["path"] == "a" and first["outcomeScore"] == 0 and first["lastReinforcedAt"] is None
    assert second["outcomeScore"] == 0.4
    assert text.splitlines()[0] == (
        '{"path":"a","accessCount":1,"reinforcementCount":0,"outcomeScore":0,'
        f'"lastAccessedAt":"{T0}","lastReinforcedAt":null,"updatedAt":"{T0}"}}')
