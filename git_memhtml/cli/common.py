"""Shared click options and rendering helpers for the command modules."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click

from git_memhtml.cli.app import App
from git_memhtml.document.model import entity_problem
from git_memhtml.errors import UsageError
from git_memhtml.output import emit, envelope

F = TypeVar("F", bound=Callable[..., Any])

json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON envelope on stdout.")


def writes(*, on_head: bool = True) -> Callable[[F], F]:
    """Mark a command that commits: :meth:`App.before_write` runs before its body (identity, merge-driver and
    detached-HEAD checks). ``on_head=False`` for commands that commit on a branch of their own (``sleep run``)."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            app_of(click.get_current_context()).before_write(on_head=on_head)
            return fn(*args, **kwargs)

        setattr(wrapper, "__memhtml_writes__", True)
        return wrapper  # type: ignore[return-value]

    return decorate


def app_of(ctx: click.Context) -> App:
    """Return the :class:`App` of the invocation."""
    obj = ctx.find_object(App)
    assert obj is not None
    return obj


def respond(as_json: bool, kind: str, data: Any, human: Callable[[], str]) -> None:
    """Print ``data`` as one envelope of ``kind`` with ``--json``, else the human text."""
    if as_json:
        emit(envelope(kind, data))
    else:
        text = human()
        if text:
            emit(text)


def check_entity_flag(value: str | None, flag: str = "--entity") -> str | None:
    """Return the scope flag ``value`` unchanged when it is ``type:name`` (or absent), else raise.

    The one rule of :func:`git_memhtml.document.model.entity_problem`, shared by ``search``, ``recall`` and
    ``list`` (and by write/apply's model validator), so a value one door accepts no other refuses.

    Raises:
        UsageError: (exit 2) naming ``flag``.
    """
    problem = None if value is None else entity_problem(value)
    if problem is not None:
        raise UsageError(f"{flag} {value!r} {problem}", hint=f"e.g. {flag} person:Priya")
    return value
