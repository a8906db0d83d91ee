"""The model a command binds: ``memhtml.llm*`` → an :class:`~git_memhtml.llm.client.HttpModelClient`, and the
``--max-llm-calls N`` budget (docs/models.md §1.5, §2).

The one place that reads the model's API key: from the invocation's environment snapshot (:attr:`App.env`), out of
the variable ``memhtml.llmkeyenv`` names. Used by ``sleep run``, ``sleep resume``, ``doctor --model`` and ``demo``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from git_memhtml.cli.app import App
from git_memhtml.config import llm_key_env, llm_settings
from git_memhtml.output import warn

if TYPE_CHECKING:
    from git_memhtml.llm.client import HttpModelClient
    from git_memhtml.sleep.engine.run import ModelBinding

F = TypeVar("F", bound=Callable[..., Any])


def max_llm_calls_option(fn: F) -> F:
    """``--max-llm-calls N`` (N >= 0; a negative N is a usage error, exit 2)."""
    return click.option(
        "--max-llm-calls", "max_llm_calls", type=click.IntRange(min=0), default=None, metavar="N",
        help="Model calls the whole run may make, shared by every phase (0: none; batches past it are counted "
             "budgetSkipped). Default: no limit.")(fn)


def model_client(app: App) -> HttpModelClient | None:
    """The configured model client, or ``None`` with ``memhtml.llm = off``.

    Raises:
        ConfigError: no model set, a bad URL, or no key for a public server (see ``config.py:llm_settings``).
    """
    from git_memhtml.llm.client import HttpModelClient

    settings = app.settings().settings
    name = llm_key_env(settings)
    key = app.env.get(name) if name else None
    bound = llm_settings(settings, key=key or None)
    return None if bound is None else HttpModelClient(bound)


def bind_model(app: App, max_calls: int | None) -> ModelBinding:
    """The run's :class:`ModelBinding`: the configured client and the ``--max-llm-calls`` budget (``NO_MODEL`` when
    ``memhtml.llm = off``; a budget given then has nothing to limit and says so once)."""
    from git_memhtml.sleep.engine.run import NO_MODEL, ModelBinding

    client = model_client(app)
    if client is None:
        if max_calls is not None:
            warn("--max-llm-calls has nothing to limit: no model is bound (memhtml.llm = off)")
        return NO_MODEL
    return ModelBinding(client, max_calls, max_prompt=app.settings().settings.llm_max_prompt)
