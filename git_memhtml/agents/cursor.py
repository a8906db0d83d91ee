"""Cursor: what an install writes (docs/agents.md "Cursor").

- MCP server: ``mcpServers.git-memhtml`` (``command``, ``args``) in ``~/.cursor/mcp.json`` or
  ``<project>/.cursor/mcp.json``;
- hooks: ``hooks.beforeSubmitPrompt`` (recall) and ``hooks.sessionEnd`` (trace), each ``{"command": …}``, in
  ``~/.cursor/hooks.json`` or ``<project>/.cursor/hooks.json`` (with ``"version": 1`` when the file has none);
- instructions: ``<project>/.cursor/rules/git-memhtml.mdc`` (``alwaysApply: true``) for ``--scope project``. Cursor
  keeps user rules in its settings, not in a file, so ``--scope user`` writes no instructions.
"""

from __future__ import annotations

from pathlib import Path

from git_memhtml.agents.instructions import instruction_text
from git_memhtml.agents.model import SERVER_NAME, AgentScope, Element, Launch, Member, WantedFile, WholeFile

RULE_NAME = "git-memhtml.mdc"


def rule_text(repo: str) -> str:
    """The ``.mdc`` rule: front matter that applies it to every request, then the instructions."""
    return ("---\ndescription: Use the git-memhtml long-term memory\nglobs:\nalwaysApply: true\n---\n"
            + instruction_text(repo))


def wanted(scope: AgentScope, base: Path, launch: Launch) -> tuple[WantedFile, ...]:
    """The files of ``scope`` under ``base`` (``$HOME`` or the project folder)."""
    folder = base / ".cursor"
    server = {"command": launch.exe, "args": launch.mcp_argv()[1:]}
    files = [
        WantedFile(folder / "mcp.json", "json", (Member(("mcpServers",), SERVER_NAME, server),)),
        WantedFile(folder / "hooks.json", "json", (
            Member((), "version", 1, if_absent=True),
            Element(("hooks", "beforeSubmitPrompt"), {"command": launch.hook_line("recall")}),
            Element(("hooks", "sessionEnd"), {"command": launch.hook_line("trace")}),
        )),
    ]
    if scope == "project":
        files.append(WantedFile(folder / "rules" / RULE_NAME, "text", (WholeFile(rule_text(launch.repo)),)))
    return tuple(files)
