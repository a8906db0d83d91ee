"""``git memhtml mcp``: serve the memory to an agent over MCP on stdin/stdout (docs/mcp.md)."""

from __future__ import annotations

import click

from git_memhtml.cli.app import utc_now
from git_memhtml.cli.common import app_of


@click.command("mcp")
@click.pass_context
def mcp_cmd(ctx: click.Context) -> int:
    """Serve the memory's tools over MCP on stdio (JSON-RPC on stdout, logs on stderr) until stdin closes."""
    from git_memhtml.mcp.server import serve

    app = app_of(ctx)
    app.json = True  # no progress bar: stderr may be a terminal, but stdout belongs to the protocol
    app.repo()  # not a repository: refused here, before the first client message
    serve(app, app.index, utc_now)  # an index that cannot be opened is the first call's tool error, with its hint
    return 0
