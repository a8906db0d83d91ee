"""OpenCode: what an install writes (docs/agents.md "OpenCode").

- MCP server: ``mcp.git-memhtml`` (``type: local``, ``command`` as one array, ``enabled: true``) in
  ``$XDG_CONFIG_HOME/opencode/opencode.json`` (default ``~/.config``) for ``--scope user``,
  ``<project>/opencode.json`` for ``--scope project``. An ``opencode.jsonc`` beside it refuses the install: we do
  not edit JSON with comments;
- hooks: none. OpenCode's hooks are plugins (JavaScript modules it loads), not configured commands, and we do not
  write code into an agent;
- instructions: a marked block in ``$XDG_CONFIG_HOME/opencode/AGENTS.md`` or ``<project>/AGENTS.md``.
"""

from __future__ import annotations

from pathlib import Path

from git_memhtml.agents.instructions import instruction_text
from git_memhtml.agents.model import SERVER_NAME, AgentScope, Block, Launch, Member, WantedFile


def wanted(scope: AgentScope, base: Path, launch: Launch) -> tuple[WantedFile, ...]:
    """The files of ``scope``; ``base`` is the OpenCode config folder (user) or the project folder (project)."""
    server = {"type": "local", "command": launch.mcp_argv(), "enabled": True}
    return (
        WantedFile(base / "opencode.json", "json", (Member(("mcp",), SERVER_NAME, server),),
                   refuse_beside=("opencode.jsonc",)),
        WantedFile(base / "AGENTS.md", "markdown", (Block(instruction_text(launch.repo)),)),
    )
