"""``git memhtml config``: the effective settings and where each came from (DESIGN §3.5)."""

from __future__ import annotations

import click

from git_memhtml.cli.common import app_of, json_option, respond
from git_memhtml.output import table


@click.command("config")
@json_option
@click.pass_context
def config_cmd(ctx: click.Context, as_json: bool) -> int:
    """List effective settings: default < git config memhtml.<key> < MEMHTML_<KEY>."""
    app = app_of(ctx)
    resolved = app.settings()
    values = resolved.settings.model_dump()
    data = {k: {"value": v, "source": resolved.sources[k]} for k, v in values.items()}
    weights = app.weights()  # unset weight_* keys take the embedder's default (docs/retrieval-tuning.md)
    for arm in ("fts", "vector", "recency", "salience"):
        key = f"weight_{arm}"
        if key in data and data[key]["source"] == "default":
            data[key] = {"value": getattr(weights, arm), "source": f"default ({resolved.settings.embed})"}
    respond(as_json, "config.effective", data,
            lambda: table(["key", "value", "source"], [[k, v["value"], v["source"]] for k, v in data.items()]))
    return 0


COMMANDS = [config_cmd]
