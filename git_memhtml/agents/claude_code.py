"""Claude Code: what an install writes (docs/agents.md "Claude Code").

- MCP server: ``mcpServers.git-memhtml`` (``type: stdio``, ``command``, ``args``) in ``~/.claude.json`` for
  ``--scope user``, in ``<project>/.mcp.json`` for ``--scope project``;
- hooks: ``hooks.UserPromptSubmit`` (recall) and ``hooks.SessionEnd`` (trace), one matcher group each holding one
  ``type: command`` hook, in ``~/.claude/settings.json`` or ``<project>/.claude/settings.json``;
- instructions: a marked block in ``~/.claude/CLAUDE.md`` or ``<project>/CLAUDE.md``.
"""

from __future__ import annotations

from pathlib import Path

from git_memhtml.agents.instructions import instruction_text
from git_memhtml.agents.model import SERVER_NAME, AgentScope, Block, Element, Launch, Member, WantedFile


def hook_group(line: str) -> dict[str, object]:
    """One matcher group of Claude Code's (and Codex's) hook format holding one command hook."""
    return {"hooks": [{"type": "command", "command": line}]}


def wanted(scope: AgentScope, base: Path, launch: Launch) -> tuple[WantedFile, ...]:
    """The files of ``scope`` under ``base`` (``$HOME`` or the project folder)."""
    server = {"type": "stdio", "command": launch.exe, "args": launch.mcp_argv()[1:]}
    mcp = base / (".claude.json" if scope == "user" else ".mcp.json")
    settings = base / ".claude" / "settings.json"
    notes = base / ".claude" / "CLAUDE.md" if scope == "user" else base / "CLAUDE.md"
    return (
        WantedFile(mcp, "json", (Member(("mcpServers",), SERVER_NAME, server),)),
        WantedFile(settings, "json", (
            Element(("hooks", "UserPromptSubmit"), hook_group(launch.hook_line("recall"))),
            Element(("hooks", "SessionEnd"), hook_group(launch.hook_line("trace"))),
        )),
        WantedFile(notes, "markdown", (Block(instruction_text(launch.repo)),)),
    )
