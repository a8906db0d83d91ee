"""Hook tests run the installed executables: put this interpreter's script folder first on PATH, so that
``git-memhtml`` and ``git-memhtml-hook`` are the ones of the environment under test (not a version-manager shim)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def scripts_first_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Prepend the folder of ``sys.executable`` to PATH."""
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
