"""Settings and where each value came from (docs/design.md §3.5).

Precedence, lowest first: built-in default → ``git config memhtml.<key>`` (repository, then global, as git
resolves it) → ``MEMHTML_<KEY>`` environment variable → command-line flag.

This module and ``git_memhtml/cli/`` are the only places that read the process environment
(docs/architecture.md "Environment and configuration"): :func:`live_env` is the default environment of library
callers that pass none, :func:`home_dir` the user's home.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from git_memhtml.embed.providers import DEFAULT_EMBEDDER, EmbedderName
from git_memhtml.errors import ConfigError

Source = Literal["default", "git-config", "env", "flag"]


def live_env() -> Mapping[str, str]:
    """A read-only live view of the process environment: the default of every function that takes an ``env`` and
    was given none (library callers, tests that set variables with ``monkeypatch.setenv``). The CLI passes its own
    snapshot instead (``git_memhtml.cli.app.App.env``)."""
    return MappingProxyType(os.environ)


def home_dir(env: Mapping[str, str]) -> Path:
    """The user's home folder: ``HOME`` from ``env`` when set and non-empty, else the account's (``Path.home()``,
    which asks the password database)."""
    return Path(env.get("HOME") or Path.home())


class Settings(BaseModel):
    """The effective configuration.

    Attributes:
        embed: embedder name: ``wordllama`` (default, offline), ``fake`` (deterministic hashing), ``openai`` (any
            OpenAI-compatible ``/v1/embeddings`` endpoint), ``off``.
        embed_url / embed_model / embed_dim / embed_key_env / embed_timeout / embed_batch: the ``openai``
            embedder's endpoint (base URL or full ``…/embeddings``), model, dimension, the *name* of the
            environment variable holding the API key (never the key), seconds per request and texts per request
            (defaults mirror ``git_memhtml.embed.openai``; docs/retrieval.md).
        llm: model binding for the eight model phases; only ``off`` exists in this version (docs/design.md §3.7).
        weight_fts / weight_vector / weight_recency / weight_salience: RRF arm weights (docs/retrieval.md §4;
        docs/design.md §3.13).
        hooks: ``0`` turns the index hooks off (docs/design.md §3.9).
        mmr_lambda: relevance weight of the MMR pass of ``search``/``recall``. Default 0.9, not the original's 0.5:
            with relevance ``1/fusion position`` λ 0.5 cut LoCoMo turn recall@10 from 0.781 to 0.573 while 0.9 costs
            0.006 (docs/retrieval-tuning.md); ``1`` keeps the fused order.
        gate_max_lost: unexplained losses of the run gate a ``sleep merge`` tolerates (default 0: any memory the run
            makes harder to find without a pointer refuses the merge; docs/gate.md §9.3).
        lock_timeout: seconds a writer waits for the repository-wide write lock before refusing (default 10,
            ``gitrepo.lock.DEFAULT_LOCK_TIMEOUT_S``; docs/store.md "The write lock").
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    embed: EmbedderName = DEFAULT_EMBEDDER
    embed_url: str = Field("https://api.openai.com/v1", min_length=1)
    embed_model: str = Field("text-embedding-3-small", min_length=1)
    embed_dim: int = Field(1536, ge=1)
    embed_key_env: str = Field("OPENAI_API_KEY", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    embed_timeout: float = Field(30.0, gt=0.0)
    embed_batch: int = Field(96, ge=1)
    llm: Literal["off"] = "off"
    weight_fts: float = Field(1.0, ge=0.0, le=100.0, allow_inf_nan=False)
    weight_vector: float = Field(1.0, ge=0.0, le=100.0, allow_inf_nan=False)
    weight_recency: float = Field(0.5, ge=0.0, le=100.0, allow_inf_nan=False)
    weight_salience: float = Field(0.4, ge=0.0, le=100.0, allow_inf_nan=False)
    hooks: Literal["0", "1"] = "1"
    mmr_lambda: float = Field(0.9, ge=0.0, le=1.0)
    lock_timeout: float = Field(10.0, ge=0.0, le=3600.0, allow_inf_nan=False)
    gate_max_lost: int = Field(0, ge=0, le=1_000_000)


KEYS: tuple[str, ...] = tuple(Settings.model_fields)


@dataclass(frozen=True)
class ResolvedSettings:
    """Settings plus the source of each value (``{key: source}``)."""

    settings: Settings
    sources: Mapping[str, Source]


def _git_key(key: str) -> str:
    return "memhtml." + key.replace("_", "")


def git_key(key: str) -> str:
    """The git config key of a :class:`Settings` field: ``weight_fts`` → ``memhtml.weightfts``."""
    return _git_key(key)


def env_var(key: str) -> str:
    """The environment variable of a :class:`Settings` field: ``weight_fts`` → ``MEMHTML_WEIGHT_FTS``."""
    return "MEMHTML_" + key.upper()


TRUNK_KEY = "memhtml.trunk"
"""The git config key of the sleep trunk (read by ``git_memhtml.sleep.engine.trunk``; no environment variable)."""


def resolve_settings(
    *,
    git_config: Callable[[str], str | None],
    env: Mapping[str, str],
    flags: Mapping[str, object | None] | None = None,
) -> ResolvedSettings:
    """Resolve every key through the four sources; raises :class:`ConfigError` naming the bad key and source.

    Args:
        git_config: lookup of a git config key (``memhtml.weightfts`` style names: dots, no underscores).
        env: the process environment (``MEMHTML_EMBED``, ``MEMHTML_WEIGHT_FTS`` …).
        flags: values given on the command line (``None`` means not given).
    """
    values: dict[str, object] = {}
    sources: dict[str, Source] = dict.fromkeys(KEYS, "default")
    for key in KEYS:
        raw = git_config(_git_key(key))
        if raw is not None:
            values[key], sources[key] = raw.strip().lower() if key in ("embed", "llm") else raw.strip(), "git-config"
        env_raw = env.get("MEMHTML_" + key.upper())
        if env_raw is not None and env_raw.strip() != "":
            values[key] = env_raw.strip().lower() if key in ("embed", "llm") else env_raw.strip()
            sources[key] = "env"
        if flags and flags.get(key) is not None:
            values[key], sources[key] = flags[key], "flag"
    try:
        settings = Settings(**values)  # type: ignore[arg-type]
    except ValidationError as exc:
        first = exc.errors()[0]
        key = str(first["loc"][0]) if first["loc"] else "?"
        shown = "<not shown: it must name a variable, not hold a key>" if key == "embed_key_env" else repr(
            values.get(key))
        source = sources.get(key, "default")
        fixes = {
            "env": f"unset MEMHTML_{key.upper()} (or set it to a valid value)",
            "git-config": f"git config --unset {_git_key(key)} (or git config {_git_key(key)} <valid value>)",
            "flag": "pass a valid value",
        }
        raise ConfigError(
            f"invalid setting {key}={shown} (from {source}): {first['msg']}",
            hint=fixes.get(source, f"git config {_git_key(key)} <value>"),
        ) from exc
    return ResolvedSettings(settings, sources)
