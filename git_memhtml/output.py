"""The only writer to stdout and stderr (docs/design.md §3.8).

Human-readable text by default; ``--json`` prints exactly one envelope ``{"apiVersion": "1", "type": …,
"data": …}`` (errors: ``{"apiVersion": "1", "error": …, "code": …, "hint": …}``). Logs go to stderr.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import click

from git_memhtml.progress import NO_PROGRESS, Progress

for _chatty in ("httpx", "httpcore"):
    # httpx logs every request at INFO: whatever logging setup a host process has, a model call must not print a
    # line to the terminal; this module is the only writer to stdout and stderr. Warnings still pass.
    logging.getLogger(_chatty).setLevel(logging.WARNING)

API_VERSION = "1"


def flush_streams() -> bool:
    """Flush stdout and stderr; ``False`` when one could not be flushed (its reader closed the pipe, or the stream
    is closed), which the console script turns into a failing exit (``cli.main.run``)."""
    ok = True
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            ok = False
    return ok


REDRAW_INTERVAL_SECONDS = 0.1
"""Shortest time between two redraws of a progress bar: at most 10 a second, however fast the work ticks (tqdm's
default ``mininterval`` is the same 0.1 s; click's bar only offers a step-count throttle, ``update_min_steps``, which
cannot bound redraws per second for both fast and slow work). The last state is always drawn when the stage ends."""


def envelope(kind: str, data: Any) -> str:
    """Return the success envelope of ``data`` as one JSON document (sorted-free, UTF-8, no trailing newline)."""
    return json.dumps({"apiVersion": API_VERSION, "type": kind, "data": data}, ensure_ascii=False, indent=2)


def error_envelope(message: str, code: str, hint: str | None, **extra: Any) -> str:
    """Return the error envelope."""
    body: dict[str, Any] = {"apiVersion": API_VERSION, "error": message, "code": code, "hint": hint}
    body.update(extra)
    return json.dumps(body, ensure_ascii=False, indent=2)


def printable(text: str) -> str:
    """``text`` with every code point UTF-8 cannot encode (a lone surrogate left by a file name or argument that was
    not UTF-8) shown as ``\\xNN``/``\\udNNN``, so no output line can crash the command that writes it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_CONTROL.update({0x2028: "\\u2028", 0x2029: "\\u2029"})


def terminal_text(text: str) -> str:
    """``text`` with every control character (C0, DEL, C1, the line and paragraph separators) shown as an escape, so
    memory text printed for people can neither drive the terminal (ESC sequences) nor split a line."""
    return text.translate(_CONTROL)


_HELD: list[str] | None = None
"""While a session hook runs (:func:`hold_output`): what :func:`emit` was given, not yet written."""


def hold_output() -> None:
    """Session-hook mode (docs/session.md): from now on :func:`emit` keeps its text until :func:`release_output`,
    :func:`log` writes nothing, and the process's stderr (file descriptor 2, so C libraries too) points at the null
    device. A hook that fails or runs out of time therefore prints nothing at all."""
    global _HELD
    _HELD = []
    sys.stderr.flush()
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    os.close(null)


def release_output() -> None:
    """Write what :func:`emit` held (one flush); nothing when nothing was held."""
    global _HELD
    held, _HELD = _HELD, None
    if held:
        sys.stdout.write("".join(held))
        sys.stdout.flush()


def claim_wire() -> tuple[int, int, tuple[int, int]]:
    """Hand stdin and stdout to a wire protocol (the MCP server, docs/mcp.md "The wire"): return private duplicates
    ``(wire in, wire out)`` of fds 0 and 1 and the saved originals for :func:`release_wire`; from here fd 0 reads the
    null device and fd 1 writes to stderr, so nothing a handler or a child prints can reach the wire."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved = (os.dup(0), os.dup(1))
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out, saved


def release_wire(saved: tuple[int, int]) -> None:
    """Point fds 0 and 1 back at what :func:`claim_wire` saved, and close the saved copies."""
    for copy, fd in zip(saved, (0, 1), strict=True):
        try:
            os.dup2(copy, fd)
        finally:
            os.close(copy)


def emit(text: str) -> None:
    """Write ``text`` and a newline to stdout (held while a session hook runs: :func:`hold_output`)."""
    if _HELD is not None:
        _HELD.append(printable(text) + "\n")
        return
    sys.stdout.write(printable(text) + "\n")
    sys.stdout.flush()


def log(text: str) -> None:
    """Write one log line to stderr (below a progress bar that is on screen, which ends); nothing while a session
    hook runs."""
    if _HELD is not None:
        return
    if _OPEN is not None:
        _OPEN.close()
    sys.stderr.write(printable(text) + "\n")
    sys.stderr.flush()


def warn(text: str) -> None:
    """Write a ``warning:`` line to stderr."""
    log(f"warning: {text}")


def stderr_is_tty() -> bool:
    """Whether stderr is a terminal (progress is shown only then)."""
    return sys.stderr.isatty()


class TerminalProgress:
    """A :class:`~git_memhtml.progress.Progress` drawn on stderr with ``click.progressbar``: one bar per stage
    (label, bar, ``done/total``, percent and ETA; a stage of unknown total shows its label and count). Never writes
    to stdout. A bar left open is finished (its line ended) by the next stage, by :meth:`close`, and by :func:`log`,
    so a log line never lands in the middle of a bar.

    Redraws are throttled by time: :meth:`advance` counts every item at once but hands them to the bar at most once
    per :data:`REDRAW_INTERVAL_SECONDS` (and when the stage's total is reached), so 5,000 quick items cost a few
    dozen redraws, not 5,000 (``tests/cli/test_progress_bars.py`` measures the bytes under a pseudo-terminal).
    ``clock`` is the monotonic seconds source (``time.monotonic``)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._bar: Any = None  # click's ProgressBar is not public API; only update/render_finish are used
        self._clock = clock
        self._pending = 0
        self._done = 0
        self._total = 0
        self._drawn_at = 0.0

    def stage(self, label: str, total: int) -> None:
        """Finish the open bar and draw a new one for ``total`` items (``0``: unknown)."""
        self.close()
        global _OPEN
        if total > 0:
            bar = click.progressbar(length=total, label=label, file=sys.stderr, show_pos=True)
        else:
            bar = click.progressbar(itertools.repeat(0), label=label, file=sys.stderr, show_pos=True)
        bar.__enter__()  # draws the empty bar now
        self._bar = bar
        self._pending, self._done, self._total, self._drawn_at = 0, 0, total, self._clock()
        _OPEN = self

    def advance(self, done: int = 1) -> None:
        """Count ``done`` more items of the open stage (nothing when no stage is open); the bar is redrawn only when
        :data:`REDRAW_INTERVAL_SECONDS` have passed since the last redraw, or when the total is reached."""
        if self._bar is None or done <= 0:
            return
        self._pending += done
        self._done += done
        now = self._clock()
        if now - self._drawn_at >= REDRAW_INTERVAL_SECONDS or (self._total and self._done >= self._total):
            self._flush(now)

    def _flush(self, now: float) -> None:
        """Hand the counted items to the bar, which redraws its line."""
        if self._pending:
            self._bar.update(self._pending)
            self._pending = 0
        self._drawn_at = now

    def close(self) -> None:
        """Finish the open bar: the items not drawn yet are drawn, and its line is ended with a newline
        (idempotent)."""
        global _OPEN
        if self._bar is not None:
            self._flush(self._clock())
            bar, self._bar = self._bar, None
            bar.render_finish()
        if _OPEN is self:
            _OPEN = None


_OPEN: TerminalProgress | None = None
"""The bar on screen now, finished before a log line is written."""


def progress_for(*, show: bool) -> Progress:
    """The :class:`Progress` a command passes to long work: a :class:`TerminalProgress` when ``show`` (the caller
    says no ``--quiet`` and no ``--json``) and stderr is a terminal, else :data:`NO_PROGRESS` (piped output is
    byte-for-byte what it is without bars)."""
    return TerminalProgress() if show and stderr_is_tty() else NO_PROGRESS


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Return a plain left-aligned text table (two spaces between columns)."""
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    return "\n".join(lines)


def kv(pairs: Mapping[str, object]) -> str:
    """Return ``key: value`` lines with keys aligned."""
    if not pairs:
        return ""
    width = max(len(k) for k in pairs)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in pairs.items())
