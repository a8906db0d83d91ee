"""The only writer to stdout and stderr (docs/design.md §3.8).

Human-readable text by default; ``--json`` prints exactly one envelope ``{"apiVersion": "1", "type": …,
"data": …}`` (errors: ``{"apiVersion": "1", "error": …, "code": …, "hint": …}``). Logs go to stderr.
"""

from __future__ import annotations

import itertools
import json
import logging
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import click

from git_memhtml.progress import NO_PROGRESS, Progress

for _chatty in ("httpx", "httpcore"):
    # httpx logs every request at INFO: whatever logging setup a host process has, a model call must not print a
    # line to the terminal; this module is the only writer to stdout and stderr. Warnings still pass.
    logging.getLogger(_chatty).setLevel(logging.WARNING)

API_VERSION = "1"


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


def emit(text: str) -> None:
    """Write ``text`` and a newline to stdout."""
    sys.stdout.write(printable(text) + "\n")
    sys.stdout.flush()


def log(text: str) -> None:
    """Write one log line to stderr (below a progress bar that is on screen, which ends)."""
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
    so a log line never lands in the middle of a bar."""

    def __init__(self) -> None:
        self._bar: Any = None  # click's ProgressBar is not public API; only update/render_finish are used

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
        _OPEN = self

    def advance(self, done: int = 1) -> None:
        """Move the open bar ``done`` items on (nothing when no stage is open)."""
        if self._bar is not None and done > 0:
            self._bar.update(done)

    def close(self) -> None:
        """Finish the open bar: its line is ended with a newline (idempotent)."""
        global _OPEN
        if self._bar is not None:
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
