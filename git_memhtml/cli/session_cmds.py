"""``git memhtml session recall|trace --agent AGENT``: what an agent's hooks run (docs/session.md).

An agent runs ``git-memhtml -C <memory repo> session recall --agent claude-code`` with its hook event on stdin.
The console script sends such an invocation to ``cli/session_entry.py:run_session_hook`` before anything else
runs, which holds it to a hard time bound and to silence on failure: stdout and stderr stay empty and the exit
status is 0 on any failure (no repository, a locked index, a stalled embedder, a malformed event), and the process
ends by the deadline even when a thread is stuck in C code.
"""

from __future__ import annotations

from typing import Final

import click

from git_memhtml.cli.app import utc_now
from git_memhtml.cli.common import app_of
from git_memhtml.cli.session_entry import RECALL_TIMEOUT_S, TRACE_TIMEOUT_S
from git_memhtml.output import emit
from git_memhtml.session.events import AGENTS, MAX_EVENT_BYTES

SESSION_BUDGET: Final = 8000
"""Default character budget of a hook's pack (our decision, docs/session.md §3: under the 10,000 characters an
agent takes whole as hook context, with room for the framing)."""


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
    from git_memhtml.service.retrieval import mmr_lambda
    from git_memhtml.session.events import parse_event
    from git_memhtml.session.run import session_recall

    del timeout  # the bound is kept by run_session_hook, which read it from the command line
    app = app_of(ctx)
    try:
        event = parse_event(_stdin(), agent)
        text = session_recall(app.repo(), event, budget=budget, embedder=app.embedder(), weights=app.weights(),
                              now=utc_now(), mmr_lambda=mmr_lambda(app))
    except Exception:  # a hook prints nothing on failure
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
    except Exception:
        return 0
    return 0
