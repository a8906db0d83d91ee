"""Bad bytes are a usage error (issue 8 item 7): an argument or an input stream that is not UTF-8 exits 2 and
names the argument or ``file:line``, and nothing is written. Each row is a real ``git-memhtml`` process whose argv
and stdin are raw bytes, as a shell passes them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from git_memhtml.cli.common import init_memory as init_repo

ROOT = Path(__file__).resolve().parents[2]
GOOD_OP = b'{"type": "semantic", "title": "Good", "claim": "Deploys take two minutes."}\n'

# (id, argv after the program name, stdin bytes, files to create {name: bytes}, expected stderr substring)
ROWS: list[tuple[str, list[bytes], bytes, dict[str, bytes], str]] = [
    ("arg-title-invalid-byte", [b"write", b"--type", b"semantic", b"--title", b"T\xff", b"--claim", b"A claim."],
     b"", {}, "argument 5 ('T\\xff') is not valid UTF-8"),
    ("arg-claim-overlong", [b"write", b"--type", b"semantic", b"--title", b"T", b"--claim", b"A \xc0\xaf claim."],
     b"", {}, "argument 7 ('A \\xc0\\xaf claim.') is not valid UTF-8"),
    ("arg-search-query", [b"search", b"check\xfeout"], b"", {}, "argument 2 ('check\\xfeout') is not valid UTF-8"),
    ("arg-encoded-surrogate", [b"search", b"x\xed\xa0\x80"], b"", {}, "argument 2 ('x\\xed\\xa0\\x80') is not valid"),
    ("arg-tag", [b"write", b"--type", b"semantic", b"--title", b"T", b"--claim", b"A claim.", b"--tag", b"\xff"],
     b"", {}, "argument 9 ('\\xff') is not valid UTF-8"),
    ("apply-stdin", [b"apply"], GOOD_OP + b'{"type": "semantic", "title": "B\xe9", "claim": "x."}\n', {},
     "<stdin>:2:33: not UTF-8 (invalid byte 0xe9)"),
    ("apply-file", [b"apply", b"--file", b"ops.jsonl"], b"",
     {"ops.jsonl": GOOD_OP + GOOD_OP + b'{"type": "semantic", "title": "\xff", "claim": "x."}\n'},
     "ops.jsonl:3:32: not UTF-8 (invalid byte 0xff)"),
    ("apply-json-surrogate-escape", [b"apply"], b'{"type": "semantic", "title": "\\ud800", "claim": "x."}\n', {},
     "<stdin>:1: title '\\ud800': not UTF-8 text (a lone surrogate"),
    ("article-html-file", [b"write", b"--type", b"semantic", b"--title", b"T", b"--article-html", b"a.html"], b"",
     {"a.html": b"<p><mark>Claim.</mark></p>\n<p>caf\xe9</p>"}, "a.html:2:7: not UTF-8 (invalid byte 0xe9)"),
    ("article-html-stdin", [b"write", b"--type", b"semantic", b"--title", b"T", b"--article-html", b"-"],
     b"<p><mark>Cl\xffaim.</mark></p>", {}, "<stdin>:1:12: not UTF-8 (invalid byte 0xff)"),
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    init_repo(root)
    return root


@pytest.mark.parametrize(("argv", "stdin", "files", "needle"),
                         [pytest.param(*row[1:], id=row[0]) for row in ROWS])
def test_bad_bytes_exit_2_naming_the_source(
    repo: Path, argv: list[bytes], stdin: bytes, files: dict[str, bytes], needle: str
) -> None:
    for name, data in files.items():
        (repo / name).write_bytes(data)
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, check=True).stdout
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([os.fsencode(sys.executable), b"-m", b"git_memhtml", *argv], input=stdin,
                          capture_output=True, cwd=repo, env=env, timeout=120, check=False)
    err = done.stderr.decode("utf-8")
    assert done.returncode == 2, err
    assert needle in err and "hint:" in err, err
    assert "internal error" not in err
    after = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, check=True).stdout
    assert after == head


def test_validate_path_argument_stays_a_finding(repo: Path) -> None:
    """validate's file names are bytes on disk: an undecodable one is its own finding (exit 1), not a usage error."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([os.fsencode(sys.executable), b"-m", b"git_memhtml", b"validate", b"areas/bad\xfe.html"],
                          capture_output=True, cwd=repo, env=env, timeout=120, check=False)
    assert done.returncode == 1
    finding, summary = done.stdout.decode("utf-8").splitlines()  # the report, then its summary (docs/cli.md)
    assert finding == "areas/bad\\xfe.html: file name is not UTF-8"
    assert summary.startswith("validate failed: ")
