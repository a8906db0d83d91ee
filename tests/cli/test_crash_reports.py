"""Crash reports never overwrite each other (cli/main.py ``_crash_report``: unique names, ``O_EXCL``)."""

from __future__ import annotations

import os
import stat
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from git_memhtml.cli.main import _crash_report


@pytest.fixture
def crashes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path / "git-memhtml-crashes"


def _boom(n: int) -> BaseException:
    try:
        raise RuntimeError(f"crash number {n}")
    except RuntimeError as exc:
        return exc


def test_many_crashes_in_one_second_make_as_many_files(crashes: Path) -> None:
    paths = [_crash_report(_boom(i)) for i in range(5)]
    assert len(set(paths)) == 5
    for i, path in enumerate(paths):
        assert path.parent == crashes and f"crash number {i}" in path.read_text()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_an_existing_report_is_never_overwritten(crashes: Path) -> None:
    crashes.mkdir(parents=True)
    now = datetime.now(UTC)
    planted = []
    for moment in (now, now + timedelta(seconds=1), now + timedelta(seconds=2)):  # whichever second the call sees
        name = f"crash-{moment.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-1.log"
        (crashes / name).write_text("an earlier crash")
        planted.append(crashes / name)
    path = _crash_report(_boom(7))
    assert path not in planted and "crash number 7" in path.read_text()
    assert all(p.read_text() == "an earlier crash" for p in planted)
