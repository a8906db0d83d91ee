"""The bound and the silence of the session hooks, before click or any command module loads (docs/session.md §1).

The console script (``cli.main.run``) asks :func:`is_session_hook` first; a hook invocation goes to
:func:`run_session_hook`, which runs the ordinary CLI in a daemon thread and ends the process at the deadline.
This module imports only the standard library and ``output.py``, so start-up stays as light as the plain CLI's.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Final, NoReturn

from git_memhtml.output import hold_output, release_output

RECALL_TIMEOUT_S: Final = 3.0
"""Default wall-time bound of ``session recall``, seconds from process start-up (our decision, docs/session.md §1:
a prompt hook delays every turn, so it must be short; Claude Code's own hook timeout is far longer)."""
TRACE_TIMEOUT_S: Final = 10.0
"""Default wall-time bound of ``session trace``, seconds (our decision, docs/session.md §1: it runs once a
session ends, and an unfinished scan resumes at the next one from its watermarks)."""
_VERBS: Final = {"recall": RECALL_TIMEOUT_S, "trace": TRACE_TIMEOUT_S}
_GLOBAL_WITH_VALUE: Final = ("-C", "--repo")
_GLOBAL_FLAGS: Final = ("-q", "--quiet")


def _verb_at(argv: Sequence[str]) -> int | None:
    """The index of ``recall``/``trace`` in ``argv`` when it is ``[global options] session <verb> …`` without a help
    flag; else ``None``."""
    i = 0
    while i < len(argv):
        token = argv[i]
        if token in _GLOBAL_WITH_VALUE:
            i += 2
            continue
        if token.startswith("--repo=") or (token.startswith("-C") and len(token) > 2) or token in _GLOBAL_FLAGS:
            i += 1
            continue
        break
    if argv[i:i + 1] != ["session"] or i + 1 >= len(argv) or argv[i + 1] not in _VERBS:
        return None
    return None if any(t in ("-h", "--help") for t in argv[i + 2:]) else i + 1


def is_session_hook(argv: Sequence[str]) -> bool:
    """Whether ``argv`` (without the program name) runs ``session recall`` or ``session trace`` (not its help)."""
    return _verb_at(argv) is not None


def hook_timeout(argv: Sequence[str]) -> float:
    """The time bound of the hook invocation ``argv``: its ``--timeout SECONDS`` (0.1–600), else the verb's
    default. A malformed value gives the default here; click then refuses it, silently."""
    at = _verb_at(argv)
    assert at is not None
    rest = list(argv[at + 1:])
    value: str | None = None
    for k, token in enumerate(rest):
        if token == "--timeout" and k + 1 < len(rest):
            value = rest[k + 1]
        elif token.startswith("--timeout="):
            value = token.split("=", 1)[1]
    try:
        seconds = float(value) if value is not None else _VERBS[argv[at]]
    except ValueError:
        return _VERBS[argv[at]]
    return seconds if 0.1 <= seconds <= 600 else _VERBS[argv[at]]


def run_session_hook(argv: Sequence[str], started: float) -> NoReturn:
    """Run the hook invocation ``argv`` under its bound and end the process with status 0.

    Output is held (:func:`~git_memhtml.output.hold_output`: stderr goes to the null device), the command runs in a
    daemon thread, and the main thread waits until ``started`` (a ``time.monotonic`` reading taken when the
    process began) plus :func:`hook_timeout`. The held stdout is written only when the command finished in time with
    exit code 0; then, or at the deadline, ``os._exit(0)`` ends the process without waiting for the thread.
    """
    import time

    from git_memhtml.cli.main import main

    deadline = started + hook_timeout(argv)
    hold_output()
    done = threading.Event()
    codes: list[int] = []

    def work() -> None:
        try:
            codes.append(main(list(argv)))
        except BaseException:  # silence: the hook never fails its agent's turn
            pass
        finally:
            done.set()

    threading.Thread(target=work, name="session-hook", daemon=True).start()
    if done.wait(max(0.0, deadline - time.monotonic())) and codes == [0]:
        try:
            release_output()
        except (OSError, ValueError):
            pass
    os._exit(0)
