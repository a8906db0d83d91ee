"""Codex CLI: what an install writes (docs/agents.md "Codex").

- MCP server: the table ``[mcp_servers.git-memhtml]`` (``command``, ``args``) appended as a marked block to
  ``$CODEX_HOME/config.toml`` (default ``~/.codex``) for ``--scope user``, ``<project>/.codex/config.toml`` for
  ``--scope project`` (Codex reads a project's file only once the project is trusted);
- hooks: ``hooks.UserPromptSubmit`` (recall) and ``hooks.Stop`` (trace: Codex has no session-end event; ``Stop``
  ends each turn) in ``hooks.json`` beside that ``config.toml``, in Claude Code's matcher-group shape;
- instructions: a marked block in ``$CODEX_HOME/AGENTS.md`` or ``<project>/AGENTS.md``.
"""

from __future__ import annotations

from pathlib import Path

from git_memhtml.agents.claude_code import hook_group
from git_memhtml.agents.instructions import instruction_text
from git_memhtml.agents.model import SERVER_NAME, AgentScope, Block, Element, Launch, TomlTable, WantedFile


def wanted(scope: AgentScope, base: Path, launch: Launch) -> tuple[WantedFile, ...]:
    """The files of ``scope``; ``base`` is the Codex home (user) or the project folder (project)."""
    home = base if scope == "user" else base / ".codex"
    notes = base / "AGENTS.md"
    table = TomlTable(("mcp_servers", SERVER_NAME), {"command": launch.exe, "args": launch.mcp_argv()[1:]})
    return (
        WantedFile(home / "config.toml", "toml", (table,)),
        WantedFile(home / "hooks.json", "json", (
            Element(("hooks", "UserPromptSubmit"), hook_group(launch.hook_line("recall"))),
            Element(("hooks", "Stop"), hook_group(launch.hook_line("trace"))),
        )),
        WantedFile(notes, "markdown", (Block(instruction_text(launch.repo)),)),
    )
