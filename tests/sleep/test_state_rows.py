"""Run and phase rows read back into their Literal states; a row written around the CHECK constraint."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memhtml.errors import StorageError
from git_memhtml.index.db import IndexDB
from git_memhtml.index.runs import get_run
from git_memhtml.sleep.engine.env import PHASE_STATUSES, phase_status
from git_memhtml.sleep.engine.runs import RUN_STATES, phase_rows, run_state
from tests.sleep.sleep_corpus_helpers import make_repo, memory

RUN = "sleep/2026-03-10-abc123"


def _db(tmp_path: Path) -> IndexDB:
    return IndexDB.for_repo(make_repo(tmp_path, {"areas/inbox/a.html": memory("A fact.")}))


def test_the_literals_are_the_state_db_check_values() -> None:
    assert set(RUN_STATES) == {"running", "interrupted", "review", "merged", "abandoned", "failed"}
    assert PHASE_STATUSES == ("ok", "failed", "skipped")
    assert [run_state(s) for s in RUN_STATES] == list(RUN_STATES) and run_state("bogus") is None
    assert [phase_status(s) for s in PHASE_STATUSES] == list(PHASE_STATUSES) and phase_status("OK") is None


def test_a_phase_row_with_an_unknown_status_is_a_storage_error_naming_state_db(tmp_path: Path) -> None:
    db = _db(tmp_path)
    db.execute("PRAGMA ignore_check_constraints = ON")
    db.execute("INSERT INTO state.sleep_phases (run_id, phase, ordinal, status) VALUES (?, 'reprieve', 11, 'done')",
               (RUN,))
    with pytest.raises(StorageError, match="phase reprieve has unknown status 'done'") as err:
        phase_rows(db, RUN)
    assert err.value.path == db.state_path and err.value.hint is not None and RUN in err.value.hint


def test_a_run_row_with_an_unknown_status_still_reads(tmp_path: Path) -> None:
    db = _db(tmp_path)
    db.execute("PRAGMA ignore_check_constraints = ON")
    db.execute("INSERT INTO state.sleep_runs (run_id, branch, base_sha, status, started_at) "
               "VALUES (?, ?, 'b', 'paused', 't')", (RUN, RUN))
    row = get_run(db, RUN)
    assert row is not None and row.status == "paused"  # runref judges it: an unknown status reads as review
