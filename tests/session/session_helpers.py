"""Helpers of the session hook tests: run the real console entry in a subprocess, timed."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENTRY = "import sys; sys.argv[0] = 'git-memhtml'; from git_memhtml.cli.main import run; run()"
MARGIN_S = 3.0
"""Wall-time slack over a hook's bound: interpreter start-up on a loaded two-core box (generous on purpose)."""


@dataclass(frozen=True)
class HookRun:
    """One hook process: exit code, stdout and stderr bytes, wall seconds."""

    code: int
    out: bytes
    err: bytes
    seconds: float


def run_hook(repo: Path | str, verb: str, agent: str, stdin: bytes, *extra: str,
             env: Mapping[str, str] | None = None) -> HookRun:
    """``git-memhtml -C repo session VERB --agent AGENT EXTRA…`` with ``stdin``, as an agent's hook runs it."""
    child = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", ENTRY, "-C", str(repo), "session", verb, "--agent", agent, *extra],
                          input=stdin, capture_output=True, env=child, check=False, timeout=60)
    return HookRun(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)


def cli(*args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real CLI in a subprocess (text output)."""
    child = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run([sys.executable, "-c", ENTRY, *args], capture_output=True, text=True, env=child,
                          check=False, timeout=120)
