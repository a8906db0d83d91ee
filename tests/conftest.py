"""Hermetic test environment: temporary HOME, fixed git identity and dates, no inherited git state."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
"""Real inputs (LoCoMo, transcripts) laid beside the project; never copied into it."""

FIXED_DATE = "2026-01-15T12:00:00+00:00"


def _pin_environment(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """Point HOME and XDG at ``home``, pin git identity and dates, scrub GIT_* and MEMHTML_*."""
    for key in list(os.environ):
        if key.startswith(("GIT_", "MEMHTML_")):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
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
    _pin_environment(patch, tmp_path_factory.mktemp("session-home"))
    yield
    patch.undo()


@pytest.fixture(autouse=True)
def hermetic_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Point HOME and XDG at a temporary folder, pin git identity and dates, scrub GIT_* and MEMHTML_*."""
    _pin_environment(monkeypatch, tmp_path_factory.mktemp("home"))
    yield
