"""Shared click options and rendering helpers for the command modules."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from git_memhtml.cli.app import App
from git_memhtml.output import emit, envelope

if TYPE_CHECKING:
    from git_memhtml.gitrepo import GitRepo
    from git_memhtml.store.repo_init import InitReport

F = TypeVar("F", bound=Callable[..., Any])

def _note_json(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    """Record ``--json`` on the invocation's :class:`App` as well, so work it does on the command's behalf (the
    index catch-up after a commit) never draws a progress bar under a JSON answer."""
    app = ctx.find_object(App)
    if value and app is not None:
        app.json = True
    return value


json_option = click.option("--json", "as_json", is_flag=True, callback=_note_json,
                           help="Print one JSON envelope on stdout.")


def writes(*, on_head: bool = True) -> Callable[[F], F]:
    """Mark a command that commits: :meth:`App.before_write` runs before its body (identity, merge-driver and
    detached-HEAD checks). ``on_head=False`` for commands that commit on a branch of their own (``sleep run``)."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            app_of(click.get_current_context()).before_write(on_head=on_head)
            return fn(*args, **kwargs)

        setattr(wrapper, "__memhtml_writes__", True)  # noqa: B010 - mypy cannot see a new attribute on the wrapper
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
    from git_memhtml.service.memories import check_entity

    return check_entity(value, flag)


def init_memory(path: Path, *, env: Mapping[str, str] | None = None) -> InitReport:
    """``git memhtml init``: :func:`git_memhtml.store.repo_init.init_repo` with the hook configuration wired in
    (:func:`wire_merge_driver`). Same arguments, result and errors as ``init_repo``."""
    from git_memhtml.store.repo_init import init_repo

    return init_repo(path, env=env, configure=wire_merge_driver)


def wire_merge_driver(repo: GitRepo) -> None:
    """``init``'s hook configuration step: the merge-driver include in ``<common-dir>/memhtml/gitconfig``
    (:func:`git_memhtml.hooks.gitconfig.ensure_config`, owner ``init``). Wired here, at the edge, so that
    ``store`` never imports ``hooks`` (docs/architecture.md)."""
    from git_memhtml.hooks.gitconfig import ensure_config, local_place

    ensure_config(local_place(repo.common_dir), "init", env=repo.env)
