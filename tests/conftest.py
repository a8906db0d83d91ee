"""Hermetic test environment: temporary HOME and temp folder, fixed git identity and dates, no inherited git state.

Every test (and every xdist worker's session) gets its own HOME and its own temp folder, so tests running side by
side under ``pytest -n`` (pyproject ``addopts``) never meet each other's files: code that asks
:func:`tempfile.gettempdir` (crash reports, the demo, the probe gate's scratch) writes under the test's own folder,
in process (``tempfile.tempdir``) and in the subprocesses it spawns (``TMPDIR``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
"""Real inputs (LoCoMo, transcripts) laid beside the project; never copied into it."""

FIXED_DATE = "2026-01-15T12:00:00+00:00"


def _pin_environment(monkeypatch: pytest.MonkeyPatch, home: Path, temp: Path) -> None:
    """Point HOME and XDG at ``home`` and the temp folder at ``temp``, pin git identity and dates, scrub GIT_* and
    MEMHTML_*."""
    for key in list(os.environ):
        if key.startswith(("GIT_", "MEMHTML_")):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    temp.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # gettempdir() caches its answer: reset it in process too
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Author")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "author@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Committer")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "committer@example.invalid")
    monkeypatch.setenv("GIT_AUTHOR_DATE", FIXED_DATE)
    monkeypatch.setenv("GIT_COMMITTER_DATE", FIXED_DATE)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("MEMHTML_EMBED", "fake")
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test Author\n\temail = author@example.invalid\n[init]\n\tdefaultBranch = main\n"
    )


@pytest.fixture(autouse=True, scope="session")
def hermetic_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The same pinned environment for the whole session, so module- and session-scoped fixtures (which run
    before any function-scoped one) never see the machine's HOME, identity or git state."""
    patch = pytest.MonkeyPatch()
    _pin_environment(patch, tmp_path_factory.mktemp("session-home"), tmp_path_factory.mktemp("session-tmp"))
    yield
    patch.undo()


@pytest.fixture(autouse=True)
def hermetic_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Point HOME, XDG and the temp folder at temporary folders, pin git identity and dates, scrub GIT_* and
    MEMHTML_*."""
    _pin_environment(monkeypatch, tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("tmp"))
    yield


_SHARED_SCOPES = {"class": 0, "module": 1, "package": 2}
"""Fixture scopes whose one value serves several tests of one file or folder, narrowest first (pytest's scopes
below ``session``; a session fixture is per worker anyway and must be cheap)."""


def _shared_fixture_group(item: pytest.Item) -> str | None:
    """The folder or file whose class-, module- or package-scoped fixture ``item`` uses (the widest one), or
    ``None`` when it uses none. Reads pytest's fixture closure of the item (``Function._fixtureinfo``)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    widest: tuple[int, str] | None = None
    for defs in info.name2fixturedefs.values():
        fixturedef = defs[-1]
        rank = _SHARED_SCOPES.get(fixturedef.scope)
        if rank is None:
            continue
        owner = fixturedef.baseid if rank == _SHARED_SCOPES["package"] else item.nodeid.split("::")[0]
        if widest is None or rank > widest[0]:
            widest = (rank, owner or ".")
    return None if widest is None else widest[1]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under ``pytest -n --dist loadgroup`` (pyproject ``addopts``), keep the tests that share a class-, module- or
    package-scoped fixture on one worker, so that the fixture (a built corpus, a finished sleep run, a wheel in a
    venv) is built once, not once per worker; every other test is handed to whichever worker is free. A test that
    already names its own ``xdist_group`` keeps it. ``tryfirst``: xdist reads the marks in its own hook of this
    name."""
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        group = _shared_fixture_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
    items[:] = sorted(items, key=_starts_early)


def _starts_early(item: pytest.Item) -> int:
    """0 for a ``slow`` test in no group, else 1: the sort key that hands the long single tests (an 8 × 50 writers
    run takes minutes) out first, so no worker starts one when the others are nearly done. loadgroup hands out the
    groups first (largest first), then the single tests in this order; a grouped test keeps its place, beside its
    group's other tests, so no module fixture is torn down and built again. The sort is stable."""
    grouped = item.get_closest_marker("xdist_group") is not None
    return 0 if item.get_closest_marker("slow") is not None and not grouped else 1
