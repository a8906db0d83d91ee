"""Helpers of the session hook tests: run the real console entry in a subprocess, as an agent's hook does.

No test reads how long a hook took (a busy machine must never fail one): a hook's bound is shown by what it does
while something holds it up for longer than :data:`HANG_GUARD_S` (a lock, a stalled embedder) — it still ends,
silent — and by ``test_session_recall.py``'s start-up-age test, which moves the deadline instead of waiting for it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENTRY = "import sys; sys.argv[0] = 'git-memhtml'; from git_memhtml.cli.main import run; run()"
HANG_GUARD_S = 60.0
"""How long a hook process may run before the test gives up on it: a hang guard, not a measure. The hooks' own
bounds (3 s recall, 10 s trace) end them twenty times sooner, so it fires only when a bound is broken; a hook held
up by a lock without its bound would run on past it (about 110 s of busy retries before it gives up)."""

ROOMY: tuple[str, str] = ("--timeout", "600")
"""A bound no busy machine reaches, for the tests about what a finished hook prints or indexes: a hook that outruns
its default bound (3 s of a loaded two-core box is little) prints and indexes nothing, which says nothing about the
pack or the index. The bound itself is the subject of the tests that hold a hook up."""


@dataclass(frozen=True)
class HookRun:
    """One hook process: exit code, stdout and stderr bytes."""

    code: int
    out: bytes
    err: bytes


def run_hook(repo: Path | str, verb: str, agent: str, stdin: bytes, *extra: str,
             env: Mapping[str, str] | None = None) -> HookRun:
    """``git-memhtml -C repo session VERB --agent AGENT EXTRA…`` with ``stdin``, as an agent's hook runs it; the test
    fails, naming the hook, when it has not ended after :data:`HANG_GUARD_S`."""
    child = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    try:
        proc = subprocess.run([sys.executable, "-c", ENTRY, "-C", str(repo), "session", verb, "--agent", agent,
                               *extra], input=stdin, capture_output=True, env=child, check=False,
                              timeout=HANG_GUARD_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"session {verb} {' '.join(extra)} never ended: its bound did not stop it ({HANG_GUARD_S:g} s "
                    "hang guard)")
    return HookRun(proc.returncode, proc.stdout, proc.stderr)


def cli(*args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real CLI in a subprocess (text output)."""
    child = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run([sys.executable, "-c", ENTRY, *args], capture_output=True, text=True, env=child,
                          check=False, timeout=120)
