"""Progress bars on long work (issue 12 item 5): drawn on stderr only when it is a terminal (a real
pseudo-terminal here), never with ``--quiet``/``-q`` or ``--json``, never on a pipe; stdout is the same either way."""

from __future__ import annotations

import json
import math
import os
import pty
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from git_memhtml.cli.main import main
from git_memhtml.output import REDRAW_INTERVAL_SECONDS, TerminalProgress, progress_for
from git_memhtml.progress import NO_PROGRESS

NOW = "2026-01-20T09:00:00Z"

CASES = [
    ("validate", ["validate"], "validating"),
    ("index rebuild", ["index", "rebuild"], "indexing"),
    ("sleep run", ["sleep", "run", "--dry-run", "--date", "2026-01-20"], "sleep"),
]
"""``(id, argv, the bar's label)``: one row per command that draws a bar."""


@pytest.fixture
def repo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    root = tmp_path / "memory"
    assert main(["init", str(root)]) == 0
    for n in range(6):
        assert main(["-C", str(root), "write", "--type", "semantic", "--title", f"Fact number {n}", "--claim",
                     f"The fact number {n} holds for the team."]) == 0
    capsys.readouterr()
    return root


_STILL_CLOCK = r"""
import sys
from git_memhtml import output
from git_memhtml.cli import app
from git_memhtml.cli.main import main

def progress_for(*, show):
    if show and output.stderr_is_tty():
        return output.TerminalProgress(clock=lambda: 0.0)
    return output.progress_for(show=show)

app.progress_for = progress_for
sys.exit(main(sys.argv[1:]))
"""
"""``git memhtml ARGV`` whose terminal bars run on a clock that never moves: the throttle then lets through only the
redraws that do not wait for time (a stage's first and last), whatever the machine's speed."""


def _run(argv: list[str], cwd: Path, *, tty: bool, still_clock: bool = False) -> tuple[int, bytes, bytes]:
    """Run ``git memhtml ARGV`` with stderr on a pseudo-terminal (``tty``) or a pipe, its bars on a clock that never
    moves with ``still_clock`` (:data:`_STILL_CLOCK`); return (code, out, err)."""
    env = {**os.environ, "MEMHTML_NOW": NOW, "COLUMNS": "100"}
    entry = ["-c", _STILL_CLOCK] if still_clock else ["-m", "git_memhtml"]
    command = [sys.executable, *entry, *argv]
    if not tty:
        proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, stdin=subprocess.DEVNULL, check=False)
        return proc.returncode, proc.stdout, proc.stderr
    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the child closed its end
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    child = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=slave,
                             stdin=subprocess.DEVNULL)
    os.close(slave)
    out, _ = child.communicate(timeout=300)
    reader.join(timeout=30)
    os.close(master)
    return child.returncode, out, b"".join(chunks)


@pytest.mark.parametrize(("argv", "label"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_terminal_shows_the_bar_and_stdout_does_not_change(repo: Path, argv: list[str], label: str) -> None:
    code_tty, out_tty, err_tty = _run(argv, repo, tty=True)
    code_pipe, out_pipe, err_pipe = _run(argv, repo, tty=False)
    assert code_tty == code_pipe == 0, err_tty.decode(errors="replace") + err_pipe.decode(errors="replace")
    shown = err_tty.decode("utf-8", "replace")
    assert re.search(label + r" +\[#+\] +(\d+)/\1", shown), shown  # the full bar: done/total, all done
    assert label.encode() not in err_pipe.replace(b"sleep/", b"")
    assert out_tty == out_pipe
    assert b"\x1b" not in out_tty and b"\r" not in out_tty  # nothing of the bar leaks to stdout


@pytest.mark.parametrize("silencer", [["-q"], ["--quiet"], ["--json"]])
@pytest.mark.parametrize(("argv", "label"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_quiet_and_json_show_no_bar_on_a_terminal(repo: Path, argv: list[str], label: str,
                                                  silencer: list[str]) -> None:
    args = [*argv, *silencer] if silencer == ["--json"] else [*silencer, *argv]
    code, out, err = _run(args, repo, tty=True)
    assert code == 0, err.decode(errors="replace")
    assert b"#" not in err and b"[-" not in err, err
    if silencer == ["--json"]:
        assert out.startswith(b"{")


def test_the_reporter_follows_the_terminal_and_the_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert progress_for(show=False) is NO_PROGRESS
    assert progress_for(show=True) is NO_PROGRESS  # capsys: stderr is not a terminal
    bar = TerminalProgress()  # drawn on a non-terminal, click prints the label only: still nothing on stdout
    bar.stage("counting", 3)
    bar.advance(2)
    bar.advance(0)
    bar.stage("unknown", 0)
    bar.advance()
    bar.close()
    bar.close()
    captured = capsys.readouterr()
    assert captured.out == ""


def _ops(tmp_path: Path, count: int) -> Path:
    lines = [
        json.dumps({"op": "write", "type": "semantic", "title": f"Batch fact {n}",
                    "claim": f"The batch fact {n} holds."})
        for n in range(count)
    ]
    stream = tmp_path / "ops.jsonl"
    stream.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return stream


def _fresh(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    assert main(["init", str(root)]) == 0
    return root


def test_apply_shows_its_stages_and_the_catch_up_on_a_terminal(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``apply`` draws its rendering stage and the index catch-up after the commit (``indexing``) on a terminal; the
    same batch through a pipe into an identical repository prints the same stdout and no bar."""
    stream = _ops(tmp_path, 12)
    on_tty, on_pipe = _fresh(tmp_path, "a"), _fresh(tmp_path, "b")
    capsys.readouterr()
    code_tty, out_tty, err_tty = _run(["apply", "--file", str(stream)], on_tty, tty=True)
    code_pipe, out_pipe, err_pipe = _run(["apply", "--file", str(stream)], on_pipe, tty=False)
    assert code_tty == code_pipe == 0, err_tty.decode(errors="replace") + err_pipe.decode(errors="replace")
    shown = err_tty.decode("utf-8", "replace")
    assert re.search(r"rendering +\[#+\] +12/12", shown), shown
    assert re.search(r"indexing +\[#+\] +12/12", shown), shown
    assert b"[#" not in err_pipe and b"rendering" not in err_pipe
    assert out_tty == out_pipe


@pytest.mark.parametrize("silencer", [["-q"], ["--json"]])
def test_apply_with_quiet_or_json_draws_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                silencer: list[str]) -> None:
    """Neither the batch nor the catch-up after its commit draws under ``-q`` or ``--json``."""
    stream = _ops(tmp_path, 8)
    root = _fresh(tmp_path, "m")
    capsys.readouterr()
    argv = ["apply", "--file", str(stream)]
    code, out, err = _run([*argv, *silencer] if silencer == ["--json"] else [*silencer, *argv], root, tty=True)
    assert code == 0, err.decode(errors="replace")
    assert b"[#" not in err and b"[-" not in err, err
    assert out.startswith(b"{") == (silencer == ["--json"])


_TICKS = r"""
import itertools, sys
from git_memhtml.output import TerminalProgress
total, tick = int(sys.argv[1]), float(sys.argv[2])
readings = itertools.count()
bar = TerminalProgress(clock=lambda: next(readings) * tick)  # each reading of the bar's clock is `tick` s later
bar.stage("ticking", total)
for _ in range(total):
    bar.advance()
bar.stage("unknown", 0)
for _ in range(total):
    bar.advance()
bar.close()
"""
"""A known total, then as many items on an unknown one, on a :class:`TerminalProgress` whose clock moves ``tick``
seconds per reading (one reading per stage and per item): a fake clock, so what is drawn is fixed."""


def _ticks_on_a_terminal(total: int, tick: float, cwd: Path) -> bytes:
    """Run :data:`_TICKS` with stderr on a pseudo-terminal; return what it drew."""
    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    child = subprocess.Popen([sys.executable, "-c", _TICKS, str(total), str(tick)], stderr=slave,
                             stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL, cwd=cwd,
                             env={**os.environ, "COLUMNS": "100"})
    os.close(slave)
    assert child.wait(timeout=120) == 0
    reader.join(timeout=30)
    os.close(master)
    return b"".join(chunks)


def _schedule(total: int, tick: float) -> list[int]:
    """The counts a stage of ``total`` items ``tick`` seconds of the clock apart draws: the empty bar, one redraw
    each time :data:`REDRAW_INTERVAL_SECONDS` have passed since the last, and the last count."""
    step = math.ceil(REDRAW_INTERVAL_SECONDS / tick)
    return sorted({0, *range(step, total, step), total})


def _drawn(shown: str, total: int) -> tuple[list[int], list[int]]:
    """The counts drawn on the known total (``n/total``) and on the unknown one (``unknown [...] n``), in order (each
    redraw once)."""
    known, unknown = shown.split("unknown", 1)
    return ([int(n) for n in re.findall(rf"(\d+)/{total}", known)],
            [int(n) for n in re.findall(r"\] +(\d+)", unknown)])


def test_redraws_are_bounded_per_second_not_per_item(tmp_path: Path) -> None:
    """5,000 quick items (a millisecond apart on the bar's clock) on a known total and 5,000 on an unknown one are
    drawn once per tenth of a second of that clock, 50 counts a stage, not 10,000 redraws (click redraws on every
    ``update``): the bytes stay far below 20 KB, and the finished bar still shows 5000/5000."""
    tick = 1 / 1024  # a power of two: every reading and every difference of readings is exact
    err = _ticks_on_a_terminal(5000, tick, tmp_path)
    assert len(err) < 20_000, len(err)
    shown = err.decode("utf-8", "replace")
    assert re.search(r"ticking +\[#+\] +5000/5000", shown), shown[-500:]
    known, unknown = _drawn(shown, 5000)
    assert known == unknown == _schedule(5000, tick) and len(known) == 50


def test_slow_work_still_moves_the_bar(tmp_path: Path) -> None:
    """Items 16 ms apart on the bar's clock: the bar is redrawn while the work runs, every seventh item (the first
    count past a tenth of a second), so the user sees it move."""
    tick = 1 / 64
    known, _ = _drawn(_ticks_on_a_terminal(600, tick, tmp_path).decode("utf-8", "replace"), 600)
    assert known == _schedule(600, tick) == [0, *range(7, 600, 7), 600]


def test_validate_over_many_files_draws_a_bounded_bar(repo: Path) -> None:
    """The real command: ``validate`` over 1,506 files on a terminal hands its per-file progress to the throttled bar,
    not to click directly (1,507 redraws before the throttle): on a bar clock that never moves it draws only the
    empty bar and the finished one, which shows 1506/1506."""
    sample = next((repo / "areas").rglob("fact-number-0*.html"))
    folder = repo / "areas" / "copies"
    folder.mkdir()
    text = sample.read_text(encoding="utf-8")
    for n in range(1500):
        (folder / f"copy-{n}.html").write_text(text, encoding="utf-8")
    code, _, err = _run(["validate"], repo, tty=True, still_clock=True)
    assert code == 0, err[-2000:]
    shown = err.decode("utf-8", "replace")
    assert re.findall(r"validating +\[[#-]*\] +(\d+)/1506", shown) == ["0", "1506"], shown[-2000:]
