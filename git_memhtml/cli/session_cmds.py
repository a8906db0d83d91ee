"""``git memhtml session recall|trace --agent AGENT``: what an agent's hooks run (docs/session.md).

An agent runs ``git-memhtml -C <memory repo> session recall --agent claude-code`` with its hook event on stdin.
The console script sends such an invocation to :func:`run_session_hook` before anything else runs, which holds
it to a hard time bound and to silence on failure: stdout and stderr stay empty and the exit status is 0 on any
failure (no repository, a locked index, a stalled embedder, a malformed event), and the process ends by the
deadline even when a thread is stuck in C code.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Final, NoReturn

import click

from git_memhtml.cli.app import utc_now
from git_memhtml.cli.common import app_of
from git_memhtml.output import emit, hold_output, release_output
from git_memhtml.session.events import AGENTS, MAX_EVENT_BYTES

RECALL_TIMEOUT_S: Final = 3.0
"""Default wall-time bound of ``session recall``, seconds from process start-up (our decision, docs/session.md §1:
a prompt hook delays every turn, so it must be short; Claude Code's own hook timeout is far longer)."""
TRACE_TIMEOUT_S: Final = 10.0
"""Default wall-time bound of ``session trace``, seconds (our decision, docs/session.md §1: it runs once a
session ends, and an unfinished scan resumes at the next one from its watermarks)."""
SESSION_BUDGET: Final = 8000
"""Default character budget of a hook's pack (our decision, docs/session.md §3: under the 10,000 characters an
agent takes whole as hook context, with room for the framing)."""
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
        except BaseException:  # silence: the hook never fails its agent's turn  # noqa: BLE001
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


def _stdin() -> bytes:
    """The hook event: at most one byte over :data:`MAX_EVENT_BYTES` of stdin (more is refused by the parser)."""
    from git_memhtml.cli.inputs import stdin_bytes

    return stdin_bytes(MAX_EVENT_BYTES + 1)


@click.group("session")
def session_group() -> None:
    """Run by an agent's hooks: recall memories for a prompt, index a finished session's transcript.

    Each runs under a hard time bound, never writes a memory, and on any failure prints nothing and exits 0.
    """


@session_group.command("recall")
@click.option("--agent", required=True, type=click.Choice(AGENTS), help="The agent whose hook event is on stdin.")
@click.option("--budget", type=click.IntRange(1, 1_000_000), default=SESSION_BUDGET, show_default=True,
              help="Characters the disclosed memory texts may use.")
@click.option("--timeout", type=click.FloatRange(0.1, 600), default=RECALL_TIMEOUT_S, show_default=True,
              help="Seconds from start-up after which the hook ends, printing nothing.")
@click.pass_context
def recall_cmd(ctx: click.Context, agent: str, budget: int, timeout: float) -> int:
    """Print the recall pack of the prompt in the hook event on stdin, framed as memory data for AGENT."""
    from git_memhtml.cli.retrieval_cmds import mmr_lambda_of
    from git_memhtml.session.events import parse_event
    from git_memhtml.session.run import session_recall

    del timeout  # the bound is kept by run_session_hook, which read it from the command line
    app = app_of(ctx)
    try:
        event = parse_event(_stdin(), agent)
        text = session_recall(app.repo(), event, budget=budget, embedder=app.embedder(), weights=app.weights(),
                              now=utc_now(), mmr_lambda=mmr_lambda_of(app))
    except Exception:  # a hook prints nothing on failure  # noqa: BLE001
        return 0
    if text:
        emit(text)
    return 0


@session_group.command("trace")
@click.option("--agent", required=True, type=click.Choice(AGENTS), help="The agent whose hook event is on stdin.")
@click.option("--timeout", type=click.FloatRange(0.1, 600), default=TRACE_TIMEOUT_S, show_default=True,
              help="Seconds from start-up after which the hook ends, printing nothing.")
@click.pass_context
def trace_cmd(ctx: click.Context, agent: str, timeout: float) -> int:
    """Index the finished session's transcript (transcript_path of the event on stdin, else every transcript under
    the roots) so trace search finds it. Prints nothing."""
    from git_memhtml.config import trace_roots
    from git_memhtml.session.events import parse_event
    from git_memhtml.session.run import session_trace

    del timeout  # kept by run_session_hook
    app = app_of(ctx)
    try:
        event = parse_event(_stdin(), agent)
        claude_root, codex_root = trace_roots(app.settings().settings, app.env)
        session_trace(app.repo(), event, claude_root=claude_root, codex_root=codex_root, now=utc_now())
    except Exception:  # noqa: BLE001
        return 0
    return 0
