"""``git memhtml config``: every setting by its git config key, its value and where it came from (docs/design.md §3.5).

One row per key of the README's configuration table: each :class:`~git_memhtml.config.Settings` field under its
git key (``memhtml.weightfts``) with its environment variable, plus ``memhtml.trunk`` (git config only).
"""

from __future__ import annotations

from typing import Any

import click

from git_memhtml.cli.app import App
from git_memhtml.cli.common import app_of, json_option, respond
from git_memhtml.config import KEYS, TRUNK_KEY, env_var, git_key, llm_defaults
from git_memhtml.errors import MemhtmlError
from git_memhtml.output import table


@click.command("config")
@json_option
@click.pass_context
def config_cmd(ctx: click.Context, as_json: bool) -> int:
    """List effective settings by git config key: default < git config memhtml.<key> < MEMHTML_<KEY>."""
    app = app_of(ctx)
    resolved = app.settings()
    values = resolved.settings.values()
    weights = app.weights()  # unset weight_* keys take the embedder's default (docs/retrieval-tuning.md)
    by_dialect = llm_defaults(resolved.settings)  # unset llmurl / llmkeyenv take the dialect's default
    data: dict[str, dict[str, Any]] = {}
    for key in KEYS:
        value: Any = values[key]
        source: str = resolved.sources[key]
        if key.startswith("weight_") and source == "default":
            value, source = getattr(weights, key.removeprefix("weight_")), f"default ({resolved.settings.embed})"
        elif key in by_dialect and source == "default" and by_dialect[key] is not None:
            value, source = by_dialect[key], f"default ({resolved.settings.llm})"
        data[git_key(key)] = {"value": value, "source": source, "env": env_var(key), "setting": key}
    data[TRUNK_KEY] = _trunk_row(app)
    respond(as_json, "config.effective", data, lambda: table(
        ["git config", "value", "source", "environment"],
        [[k, "" if v["value"] is None else v["value"], v["source"], v["env"] or "-"] for k, v in data.items()]))
    return 0


def _trunk_row(app: App) -> dict[str, Any]:
    """``memhtml.trunk``: the configured branch (source git-config), else the branch runs would use (default)."""
    from git_memhtml.sleep.engine.trunk import TRUNK, trunk_name

    try:
        repo = app.repo()
    except MemhtmlError:
        return {"value": TRUNK, "source": "default", "env": None, "setting": None}
    configured = repo.config_get(TRUNK_KEY)
    if configured:
        return {"value": configured, "source": "git-config", "env": None, "setting": None}
    try:
        value = trunk_name(repo)
    except MemhtmlError:
        value = TRUNK
    return {"value": value, "source": "default", "env": None, "setting": None}


