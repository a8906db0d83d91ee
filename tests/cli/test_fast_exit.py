"""The console script ends with ``os._exit`` after flushing both streams (``cli.main.run``, docs/cli.md "Start-up"):
what it prints still arrives whole through a pipe, its exit code is :func:`main`'s, and a reader that closed the
pipe turns a success into exit 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from git_memhtml.cli.main import main


@pytest.fixture
def memory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    root = tmp_path / "memory"
    assert main(["init", str(root)]) == 0
    for n in range(40):  # an answer larger than two stdio buffers (8 KiB each)
        assert main(["-C", str(root), "write", "--type", "semantic", "--title", f"Team fact {n}", "--claim",
                     f"The team fact number {n} holds " + "and is long " * 30]) == 0
    capsys.readouterr()
    return root


def _cli(root: Path, *args: str, stdout: int = subprocess.PIPE) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "git_memhtml", *args], stdout=stdout, stderr=subprocess.PIPE,
                          cwd=root, env=os.environ.copy(), check=False)


def test_the_output_arrives_whole_and_equals_the_in_process_answer(memory: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    proc = _cli(memory, "list", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert main(["-C", str(memory), "list", "--json"]) == 0
    assert proc.stdout.decode() == capsys.readouterr().out
    assert len(proc.stdout) > 16384 and len(json.loads(proc.stdout)["data"]["files"]) == 40


@pytest.mark.parametrize(("args", "code"), [(["search", "nothing-matches-this-zz"], 0), (["show", "no/such.html"], 2),
                                            (["search", ""], 2)])
def test_the_exit_code_is_main_s(memory: Path, args: list[str], code: int) -> None:
    assert main(["-C", str(memory), *args]) == code
    assert _cli(memory, *args).returncode == code


def test_a_reader_that_closed_the_pipe_makes_a_success_exit_1(memory: Path) -> None:
    read, write = os.pipe()
    os.close(read)  # nobody reads: the first flush gets EPIPE
    try:
        proc = _cli(memory, "list", "--json", stdout=write)
    finally:
        os.close(write)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert b"Traceback" not in proc.stderr
