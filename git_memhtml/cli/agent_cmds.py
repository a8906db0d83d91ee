"""``git memhtml agent install|uninstall``: connect a coding agent to this memory (docs/agents.md).

Thin commands over :mod:`git_memhtml.agents.install`; the environment (``HOME``, ``PATH``, ``XDG_STATE_HOME``,
``XDG_CONFIG_HOME``, ``CODEX_HOME``) is read here and handed down.
"""

from __future__ import annotations

import shutil
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from git_memhtml.agents.model import AGENT_NAMES, SCOPES, AgentName, AgentScope
from git_memhtml.cli.common import app_of, json_option, respond
from git_memhtml.config import home_dir, xdg_dir
from git_memhtml.output import warn

if TYPE_CHECKING:
    from git_memhtml.agents.install import AgentReport, Places

EXECUTABLE = "git-memhtml"
"""The console script the agent starts (``pyproject.toml`` ``[project.scripts]``)."""


def _places(ctx: click.Context, project: Path | None) -> Places:
    from git_memhtml.agents.install import Places

    env = app_of(ctx).env
    home = home_dir(env)
    state = xdg_dir(env, "XDG_STATE_HOME", home / ".local" / "state")
    return Places(home=home, project=(project or Path.cwd()).resolve(), state_home=state, env=env)


def _human(report: AgentReport) -> str:
    lines = [f"{report.agent} ({report.scope}): {report.action}"]
    lines += [f"  {f.action}: {f.path}" for f in report.files]
    lines.append(f"  receipt: {report.receipt}")
    return "\n".join(lines)


scope_option = click.option("--scope", type=click.Choice(SCOPES), default="user", show_default=True,
                            help="user: the agent's files under your home; project: under the project folder.")
project_option = click.option("--project", type=click.Path(file_okay=False, exists=True, path_type=Path),
                              default=None, help="The project folder for --scope project (default: the current "
                                                 "folder).")
agent_argument = click.argument("agent", type=click.Choice(AGENT_NAMES))


@click.group("agent")
def agent_group() -> None:
    """Connect a coding agent (Claude Code, Codex, Cursor, OpenCode) to this memory, or disconnect it."""


@agent_group.command("install")
@agent_argument
@scope_option
@project_option
@json_option
@click.pass_context
def agent_install_cmd(ctx: click.Context, agent: str, scope: str, project: Path | None, as_json: bool) -> int:
    """Write the MCP server entry, session hooks and memory instructions into AGENT's own configuration.

    The memory is the repository of -C (default: the current folder). A receipt records every byte written, so
    uninstall removes exactly that; running install again changes nothing.
    """
    from git_memhtml.agents.install import check_memory_repo, install
    from git_memhtml.agents.model import Launch

    app = app_of(ctx)
    root = app.repo().root
    check_memory_repo(root)
    exe = shutil.which(EXECUTABLE, path=app.env.get("PATH")) or EXECUTABLE
    launch = Launch(exe=str(Path(exe).resolve()) if exe != EXECUTABLE else exe, repo=str(root.resolve()),
                    agent=cast(AgentName, agent))
    report = install(cast(AgentName, agent), cast(AgentScope, scope), launch, _places(ctx, project))
    respond(as_json, "agent.install", asdict(report), lambda: _human(report))
    return 0


@agent_group.command("uninstall")
@agent_argument
@scope_option
@project_option
@json_option
@click.pass_context
def agent_uninstall_cmd(ctx: click.Context, agent: str, scope: str, project: Path | None, as_json: bool) -> int:
    """Remove exactly what install wrote for AGENT: files unchanged since are put back byte for byte; from files
    edited since, only our unchanged entries are removed (an edited entry is left and reported)."""
    from git_memhtml.agents.install import uninstall

    report = uninstall(cast(AgentName, agent), cast(AgentScope, scope), _places(ctx, project))
    for line in report.warnings:
        warn(line)
    respond(as_json, "agent.uninstall", asdict(report), lambda: _human(report))
    return 0
