"""What an agent install wants written, as values (docs/agents.md).

Each agent module (``claude_code``, ``codex``, ``cursor``, ``opencode``) turns a scope, its base folder and the
:class:`Launch` into :class:`WantedFile` rows; :mod:`git_memhtml.agents.install` plans, writes and records them.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

AgentName = Literal["claude-code", "codex", "cursor", "opencode"]
AGENT_NAMES: tuple[AgentName, ...] = ("claude-code", "codex", "cursor", "opencode")
"""The agents ``git memhtml agent install`` knows (issue 14)."""

AgentScope = Literal["user", "project"]
SCOPES: tuple[AgentScope, ...] = ("user", "project")

SERVER_NAME = "git-memhtml"
"""The name of our MCP server entry in every agent's configuration."""

MARKDOWN_COMMENT = ("<!-- ", " -->")
TOML_COMMENT = ("# ", "")


@dataclass(frozen=True)
class Launch:
    """How an agent starts us: the executable (absolute when found on ``PATH``), the memory repository (absolute)
    and the agent's name for ``session … --agent``."""

    exe: str
    repo: str
    agent: AgentName

    def mcp_argv(self) -> list[str]:
        """``[exe, "-C", repo, "mcp"]``: the stdio MCP server."""
        return [self.exe, "-C", self.repo, "mcp"]

    def hook_line(self, verb: Literal["recall", "trace"]) -> str:
        """A shell command line for a session hook (``session recall`` before a prompt, ``session trace`` after a
        session); every word is shell-quoted, so a path with spaces, quotes or newlines stays one word."""
        return shlex.join([self.exe, "-C", self.repo, "session", verb, "--agent", self.agent])


@dataclass(frozen=True)
class Member:
    """Ensure the object at ``path`` holds ``key: value`` (missing parent objects are created with it). With
    ``if_absent`` a key already there is left as it is (Cursor's ``version``); otherwise it is a conflict."""

    path: tuple[str, ...]
    key: str
    value: Any
    if_absent: bool = False


@dataclass(frozen=True)
class Element:
    """Ensure the array at ``path`` ends with ``value`` (missing parents and the array are created with it)."""

    path: tuple[str, ...]
    value: Any


@dataclass(frozen=True)
class TomlTable:
    """Append the table ``[<path>]`` holding ``values`` (strings or lists of strings) as a marked block."""

    path: tuple[str, ...]
    values: dict[str, str | list[str]]


@dataclass(frozen=True)
class Block:
    """Append ``body`` as a marked Markdown block."""

    body: str


@dataclass(frozen=True)
class WholeFile:
    """Create a file that must not exist yet, holding ``text``."""

    text: str


Want = Member | Element | TomlTable | Block | WholeFile


@dataclass(frozen=True)
class WantedFile:
    """One configuration file and what we want in it. ``fmt`` is ``json``, ``toml``, ``markdown`` or ``text``;
    ``refuse_beside`` names sibling files whose presence refuses the install (e.g. ``opencode.jsonc``, which we do
    not edit)."""

    path: Path
    fmt: Literal["json", "toml", "markdown", "text"]
    wants: tuple[Want, ...]
    refuse_beside: tuple[str, ...] = ()
