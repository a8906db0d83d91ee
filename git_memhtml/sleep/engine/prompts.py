"""Prompts are configuration: package resources a repository may override (docs/models.md §3).

Each model call has a named prompt, ``<name>.md`` under ``git_memhtml/resources/prompts/`` (``dedup-merge``,
``dedup-merge.task`` …: the system prompt, and the instruction that closes the user message). A repository overrides
one by committing ``.memhtml/prompts/<name>.md``; the run reads it from the run's work tree, so the override in
force is the one on the run's base commit, reviewable in git like any change.

Substitution is literal and single-pass: ``{key}`` becomes the value given for ``key``; a placeholder with no value
(``{unknown}``, a JSON brace) passes through unchanged, and a substituted value is never scanned again, so a value
that contains ``{other}`` stays as it is.

An override changes only words. The rails that check every proposal are code (``sleep/phases/``), and no prompt, no
setting and no answer reaches them.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

from git_memhtml.errors import ConfigError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.tree.paths import tree_file_problem

OVERRIDE_DIR = ".memhtml/prompts"
"""Where a repository keeps its prompt overrides (our decision, docs/models.md §3)."""

MAX_PROMPT_BYTES = 64 * 1024
"""Largest override read; a larger file is refused (a prompt, not a corpus)."""

_NAME = re.compile(r"^[a-z][a-z0-9-]*(?:\.[a-z][a-z0-9-]*)?$")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def shipped_prompt(name: str) -> str:
    """The prompt ``name`` as the package ships it.

    Raises:
        ValueError: ``name`` is not a prompt name (``[a-z][a-z0-9-]*`` with an optional ``.part``) or none ships.
    """
    if not _NAME.fullmatch(name):
        raise ValueError(f"not a prompt name: {name!r}")
    resource = resources.files("git_memhtml").joinpath("resources", "prompts", f"{name}.md")
    if not resource.is_file():
        raise ValueError(f"no prompt named {name!r} ships with git-memhtml")
    return resource.read_text(encoding="utf-8")


def override_path(name: str) -> str:
    """``.memhtml/prompts/<name>.md``: the tree path of ``name``'s override."""
    return f"{OVERRIDE_DIR}/{name}.md"


def load_prompt(repo: GitRepo, name: str, values: Mapping[str, str] | None = None) -> str:
    """The prompt ``name`` in force in ``repo``'s work tree, with ``{key}`` placeholders filled from ``values``.

    Raises:
        ValueError: no prompt of that name ships (a programming error: the phases name their prompts).
        ConfigError: the override exists but is a symlink or not a regular file, is larger than
            :data:`MAX_PROMPT_BYTES`, or is not UTF-8 (the error names the file and says how to fix it).
    """
    text = shipped_prompt(name)
    path = override_path(name)
    target = repo.root / path
    problem = tree_file_problem(repo.root, path)  # a symlink on the way, even a dangling one, is refused
    if problem is not None:
        raise ConfigError(f"{path}: {problem}", hint=f"make {path} a plain file, or remove it", path=path)
    if os.path.lexists(target):
        data = _read_plain(target, path)
        if len(data) > MAX_PROMPT_BYTES:
            raise ConfigError(f"{path}: more than {MAX_PROMPT_BYTES} bytes",
                              hint="shorten the override", path=path)
        try:
            text = data.decode("utf-8-sig")  # a byte-order mark some editors write is not prompt text
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: not UTF-8 (byte {exc.start})", hint="save the override as UTF-8",
                              path=path) from exc
    return fill(text, values or {})


def _read_plain(target: Path, path: str) -> bytes:
    """At most :data:`MAX_PROMPT_BYTES` + 1 bytes of ``target``, opened without following a final symlink and
    without blocking, and read only if it is a regular file once open (a swap after the check is refused too).

    Raises:
        ConfigError: it cannot be opened as a plain file.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror or exc})", hint=f"make {path} a plain file, or "
                          "remove it", path=path) from exc
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ConfigError(f"{path}: not a regular file", hint=f"make {path} a plain file, or remove it",
                              path=path)
        return handle.read(MAX_PROMPT_BYTES + 1)


def stated(value: float) -> str:
    """A constant as a prompt states it: ``0.92``, ``0.7``, ``100`` (``{key}`` values come from the constants the
    code enforces, so a prompt never promises another number than the rails apply; docs/models.md §10)."""
    return f"{value:g}"


def fill(text: str, values: Mapping[str, str]) -> str:
    """Replace each ``{key}`` of ``text`` whose key is in ``values``, once, left to right; others pass through."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)
