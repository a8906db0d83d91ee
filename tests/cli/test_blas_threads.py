"""BLAS gets one thread except for the commands with matrix-matrix products (``cli/blas.py``, docs/cli.md
"Start-up"): a table of command lines, the user's own setting wins, and a real process started by the console
script's rule imports numpy with no BLAS worker thread."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from git_memhtml.cli.blas import BLAS_THREAD_VARIABLES, limit_blas_threads

ROWS: list[tuple[list[str], str | None]] = [
    (["search", "the team fact"], "1"),
    (["recall", "x", "--json"], "1"),
    (["-C", "/tmp/m", "apply", "--file", "ops.jsonl"], "1"),
    (["index", "rebuild"], "1"),
    (["sleep", "run"], None),
    (["-C", "/tmp/m", "sleep", "run", "--date", "2026-02-01"], None),
    (["demo"], None),
    (["search", "sleep"], None),  # a query spelled like a matrix command only keeps the default
    ([], "1"),
]
"""``(command line, OPENBLAS_NUM_THREADS afterwards; None: left unset)``."""


@pytest.mark.parametrize(("args", "want"), ROWS, ids=[" ".join(r[0]) or "(none)" for r in ROWS])
def test_the_command_line_decides(args: list[str], want: str | None) -> None:
    environ: dict[str, str] = {}
    limit_blas_threads(args, environ)
    assert environ.get("OPENBLAS_NUM_THREADS") == want


@pytest.mark.parametrize("name", BLAS_THREAD_VARIABLES)
def test_a_variable_the_user_set_stands(name: str) -> None:
    environ = {name: "2"}
    limit_blas_threads(["search", "x"], environ)
    assert environ == {name: "2"}


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: OpenBLAS starts no worker thread either way")
@pytest.mark.parametrize(("args", "single"), [(["search", "x"], True), (["sleep", "run"], False)])
def test_numpy_starts_its_threads_as_decided(args: list[str], single: bool) -> None:
    code = ("import os, sys\n"
            "from git_memhtml.cli.blas import limit_blas_threads\n"
            f"limit_blas_threads({args!r}, os.environ)\n"
            "import numpy\n"
            "print(len(os.listdir('/proc/self/task')))\n")
    env = {k: v for k, v in os.environ.items() if k not in BLAS_THREAD_VARIABLES}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (int(proc.stdout) == 1) is single
