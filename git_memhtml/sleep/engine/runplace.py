"""Where a run lives: its id, its linked worktree and the index it leaves for the run gate (docs/sleep.md "Run ids",
docs/gate.md §9.4).

Split out of ``sleep/engine/run.py`` (the runner): these are names and places, computed from the repository and the
run id, with no phase in sight.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import socket
from pathlib import Path

from git_memhtml.errors import MemhtmlError, RunRefused
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.index.runs import get_run
from git_memhtml.sleep.engine.contract import MAX_SAME_DAY_RUNS
from git_memhtml.sleep.engine.runfiles import run_file_stem

CLONE_ID_KEY = "memhtml.cloneid"
"""Local git config key of this clone's random id (made on the first run; ``git clone`` never copies it)."""

RUN_SUFFIX_HEX = 6
"""Hex characters of a run id's suffix: 16.7 million per clone and date, so two clones' runs never share an id."""


def clone_id(main: GitRepo) -> str:
    """This clone's id: ``git config memhtml.cloneid``, created (16 random hex characters) when absent."""
    found = main.config_get(CLONE_ID_KEY)
    if found:
        return found
    value = secrets.token_hex(8)
    main.config_set(CLONE_ID_KEY, value)
    return value


def run_id_candidate(main: GitRepo, date: str, ordinal: int) -> str:
    """``sleep/<date>-<suffix>``: the suffix hashes this clone (its id, host and git dir path), date and ordinal.

    The host and path separate a clone copied with ``cp -r`` (same config, so same clone id) from its original.
    """
    seed = f"{clone_id(main)}\n{socket.gethostname()}\n{main.common_dir}\n{date}\n{ordinal}"
    return f"sleep/{date}-{hashlib.sha256(seed.encode('utf-8')).hexdigest()[:RUN_SUFFIX_HEX]}"


def next_run_id(main: GitRepo, date: str, db: IndexDB) -> str:
    """Return the first free ``sleep/<date>-<suffix>`` of ordinals 1 … 100 (branch and real run row both free).

    Unique across clones (docs/sleep.md "Run ids"), so two clones' runs of one day land side by side.

    Raises:
        RunRefused: all 100 ids of the date are taken.
    """
    for n in range(1, MAX_SAME_DAY_RUNS + 1):
        run_id = run_id_candidate(main, date, n)
        row = get_run(db, run_id)
        if main.branch_sha(run_id) is None and (row is None or row.dry_run):
            return run_id
    raise RunRefused(
        f"all {MAX_SAME_DAY_RUNS} run ids of {date} are taken",
        hint="delete old runs: git memhtml sleep abort <run-id>, or pass --date",
    )


def worktree_name(run_id: str) -> str:
    """Return the worktree name of a run (``sleep/2026-11-30-2`` → ``sleep-2026-11-30-2``)."""
    return run_file_stem(run_id)


def worktree_folder(main: GitRepo, run_id: str) -> Path:
    """Return where a run's linked worktree lives: ``<common-dir>/memhtml/worktrees/<name>``."""
    return main.common_dir / "memhtml" / "worktrees" / worktree_name(run_id)


def run_index_path(main: GitRepo, run_id: str) -> Path:
    """Where a finished run's index is kept once its worktree is gone: ``<common-dir>/memhtml/runs/<name>.index.db``
    (a cache of the tip's projection for the run gate, docs/gate.md §9.4; dropped by merge and abort)."""
    return main.common_dir / "memhtml" / "runs" / f"{worktree_name(run_id)}.index.db"


def keep_run_index(db: IndexDB, main: GitRepo, run_id: str) -> None:
    """Copy the run's index (it describes the run's tip after the last phase's reindex) to :func:`run_index_path`.

    A cache: a copy that fails leaves nothing, and the run gate then builds the tip's index itself.
    """
    target = run_index_path(main, run_id)
    partial = target.with_name(target.name + ".partial")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        drop_run_index(main, run_id)
        if partial.exists():
            partial.unlink()
        db.copy_index_to(partial)
        os.replace(partial, target)
    except (MemhtmlError, OSError):
        for leftover in (partial, target):
            try:
                leftover.unlink(missing_ok=True)
            except OSError:
                pass


def drop_run_index(main: GitRepo, run_id: str) -> None:
    """Remove a run's kept index (and any SQLite side file of it); absent is fine."""
    target = run_index_path(main, run_id)
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            Path(str(target) + suffix).unlink(missing_ok=True)
        except OSError:
            pass
