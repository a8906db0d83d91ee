"""The one place child processes start: the ``git`` binary, and the forge client (``gh``) that reads git remotes.

Every ``git`` child of the package is started by :func:`run_git`, with the environment of :func:`git_child_env`:
the caller's base environment (the CLI's snapshot, or :func:`git_memhtml.config.live_env` for library callers)
minus :data:`SCRUBBED_ENV`, plus :data:`GIT_CHILD_SETTINGS`. :func:`run_program` starts any other executable
(``gh``) in a work tree with the base environment minus :data:`SCRUBBED_ENV` and nothing added.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Literal, TypeVar, overload

SCRUBBED_ENV: tuple[str, ...] = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE",
)
"""Variables that point ``git`` at another repository, work tree, index or ref namespace than the folder it is run
in. Git exports them to hooks (``GIT_DIR`` for a linked worktree, ``GIT_INDEX_FILE`` during rebase and ``commit
<paths>``; githooks(5), docs/git.md §1.10 "Worktrees"); the list is git(1) "ENVIRONMENT VARIABLES", "The Git
Repository" section, minus the ones that only tune a repository already found. Removed from every child we start;
author and committer variables are kept (they are the caller's identity)."""

GIT_CHILD_SETTINGS: Mapping[str, str] = {
    "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "MEMHTML_HOOKS": "0",
}
"""Set on every ``git`` child: never prompt for credentials (a command of ours must not hang); no optional locks
(``git status`` does not race our index writes); git's messages untranslated, so errors we quote read the same
everywhere; ``MEMHTML_HOOKS=0``: every command of ours catches the index up after its own git operations, so the
installed hooks must not race it (docs/hooks.md)."""

T = TypeVar("T", str, bytes)


@dataclass(frozen=True)
class ChildOutput(Generic[T]):
    """What a finished child left: its exit code (negative: killed by that signal), stdout and stderr."""

    returncode: int
    stdout: T
    stderr: T


def scrub_git_env(environ: MutableMapping[str, str]) -> str | None:
    """Remove :data:`SCRUBBED_ENV` from ``environ`` in place; return the ``GIT_DIR`` it held (``None`` if none)."""
    git_dir = environ.get("GIT_DIR")
    for key in SCRUBBED_ENV:
        environ.pop(key, None)
    return git_dir


def scrubbed(base: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``base`` without :data:`SCRUBBED_ENV`."""
    return {k: v for k, v in base.items() if k not in SCRUBBED_ENV}


def git_child_env(base: Mapping[str, str]) -> dict[str, str]:
    """The environment of a ``git`` child: ``base`` without :data:`SCRUBBED_ENV`, with :data:`GIT_CHILD_SETTINGS`."""
    env = scrubbed(base)
    env.update(GIT_CHILD_SETTINGS)
    return env


@overload
def run_git(args: Sequence[str], *, cwd: Path | None, env: Mapping[str, str], input: str | None = None,
            text: Literal[True] = True) -> ChildOutput[str]: ...
@overload
def run_git(args: Sequence[str], *, cwd: Path | None, env: Mapping[str, str], input: bytes | None = None,
            text: Literal[False]) -> ChildOutput[bytes]: ...
def run_git(args: Sequence[str], *, cwd: Path | None, env: Mapping[str, str], input: str | bytes | None = None,
            text: bool = True) -> ChildOutput[str] | ChildOutput[bytes]:
    """Run ``git [-C cwd] <args>`` and wait; never raises for a non-zero exit (the caller decides).

    Args:
        args: git's arguments after ``git`` (and ``-C``). cwd: the work tree to run in, or ``None`` for a command
            that needs no repository (``git config --file``, ``git merge-file``).
        env: the base environment (the CLI's snapshot): :func:`git_child_env` of it is the child's.
        input: bytes (or text when ``text``) written to the child's stdin; ``None``: stdin is inherited.
        text: decode stdout and stderr as text (the locale's encoding, universal newlines) or return bytes.

    Raises:
        OSError: the ``git`` binary cannot be started.
    """
    argv = ["git", *(["-C", str(cwd)] if cwd is not None else []), *args]
    proc = subprocess.run(argv, capture_output=True, text=text, env=git_child_env(env), input=input, check=False)
    return ChildOutput(proc.returncode, proc.stdout, proc.stderr)


def run_program(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float) -> ChildOutput[str]:
    """Run another executable (``argv[0]``, e.g. ``gh``) in ``cwd`` with ``env`` minus :data:`SCRUBBED_ENV`, for at
    most ``timeout`` seconds; output is text. Never raises for a non-zero exit.

    Raises:
        OSError: it cannot be started; :class:`TimeoutError` (an ``OSError``) when it ran out of time (killed).
    """
    try:
        proc = subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True, timeout=timeout,
                              env=scrubbed(env), check=False)
    except subprocess.TimeoutExpired as exc:
        raise TimeoutError(str(exc)) from exc
    return ChildOutput(proc.returncode, proc.stdout, proc.stderr)
