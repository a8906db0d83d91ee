"""Settings and where each value came from (docs/design.md §3.5).

Precedence, lowest first: built-in default → ``git config memhtml.<key>`` (repository, then global, as git
resolves it) → ``MEMHTML_<KEY>`` environment variable → command-line flag.

This module and ``git_memhtml/cli/`` are the only places that read the process environment
(docs/architecture.md "Environment and configuration"): :func:`live_env` is the default environment of library
callers that pass none, :func:`home_dir` the user's home.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal, get_args
from urllib.parse import urlsplit

from git_memhtml.embed.providers import DEFAULT_EMBEDDER, EMBEDDER_NAMES, EmbedderName
from git_memhtml.errors import ConfigError
from git_memhtml.llm.defaults import (
    ANTHROPIC_KEY_ENV,
    ANTHROPIC_URL,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_MAX_PROMPT_TOKENS,
    DEFAULT_TIMEOUT_SECONDS,
    MAX_MAX_PROMPT_TOKENS,
    MIN_MAX_PROMPT_TOKENS,
    OPENAI_KEY_ENV,
    OPENAI_URL,
)

if TYPE_CHECKING:  # the model layer (httpx) loads only when a model is bound (issue 12 item 4)
    from git_memhtml.llm.client import LlmSettings

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


def xdg_dir(env: Mapping[str, str], name: str, default: Path) -> Path:
    """The folder named by the XDG variable ``name`` (``XDG_CONFIG_HOME``, ``XDG_STATE_HOME`` …) in ``env``, else
    ``default``. A relative value is ignored, as the XDG Base Directory specification requires: it would name a
    different folder from every working directory, so what one run wrote another could not find."""
    value = env.get(name) or ""
    return Path(value) if os.path.isabs(value) else default


KEY_ENV_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
"""What a ``*keyenv`` setting must look like: the name of an environment variable (POSIX portable), never a key."""

SECRET_KEYS = ("embed_key_env", "llm_key_env")
"""Settings whose invalid value is never echoed: a user who put a key there must not see it printed."""


@dataclass(frozen=True)
class _Field:
    """How one setting is checked (issue 12 item 4: a plain table, so resolving settings imports no pydantic).

    Attributes:
        kind: ``str``, ``int`` or ``float``: the type a value is converted to (git config and the environment give
            strings: ``"1.5"``, ``" 10 "``; a flag may give the typed value).
        nullable: ``None`` (unset) is a valid value (the defaults themselves are :class:`Settings`'s).
        choices: the only values allowed (compared after conversion), empty for any.
        ge / gt / le: inclusive lower, exclusive lower and inclusive upper bounds of a number.
        pattern: a regular expression a string must match in full.
        min_length: the shortest string allowed.
    """

    kind: type
    nullable: bool = False
    choices: tuple[str, ...] = ()
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    pattern: str | None = None
    min_length: int | None = None


LlmName = Literal["off", "openai", "anthropic"]
"""Valid values of ``memhtml.llm`` (docs/models.md §1)."""
HooksFlag = Literal["0", "1"]
"""Valid values of ``memhtml.hooks``."""

FIELDS: Mapping[str, _Field] = {
    "embed": _Field(str, choices=EMBEDDER_NAMES),
    "embed_url": _Field(str, min_length=1),
    "embed_model": _Field(str, min_length=1),
    "embed_dim": _Field(int, ge=1),
    "embed_key_env": _Field(str, pattern=KEY_ENV_PATTERN),
    "embed_timeout": _Field(float, gt=0.0),
    "embed_batch": _Field(int, ge=1),
    "llm": _Field(str, choices=get_args(LlmName)),
    "llm_url": _Field(str, nullable=True, min_length=1),
    "llm_model": _Field(str, nullable=True, min_length=1),
    "llm_key_env": _Field(str, nullable=True, pattern=KEY_ENV_PATTERN),
    "llm_timeout": _Field(float, gt=0.0, le=3600.0),
    "llm_attempts": _Field(int, ge=1, le=10),
    "llm_max_prompt": _Field(int, ge=MIN_MAX_PROMPT_TOKENS, le=MAX_MAX_PROMPT_TOKENS),
    "weight_fts": _Field(float, ge=0.0, le=100.0),
    "weight_vector": _Field(float, ge=0.0, le=100.0),
    "weight_recency": _Field(float, ge=0.0, le=100.0),
    "weight_salience": _Field(float, ge=0.0, le=100.0),
    "hooks": _Field(str, choices=get_args(HooksFlag)),
    "mmr_lambda": _Field(float, ge=0.0, le=1.0),
    "lock_timeout": _Field(float, ge=0.0, le=3600.0),
    "gate_max_lost": _Field(int, ge=0, le=1_000_000),
    "trace_root": _Field(str, min_length=1),
    "codex_root": _Field(str, min_length=1),
}
"""Every setting's type and bounds, in the order ``git memhtml config`` lists them (the defaults are
:class:`Settings`'s; a test checks both name the same keys in the same order)."""


class InvalidValue(ValueError):
    """A value a :class:`_Field` refuses; ``key`` names the setting, ``reason`` says why (never the value)."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason


_INT_TEXT = r"[+-]?[0-9]{1,18}"
"""An integer setting as text: ASCII decimal digits, at most 18 (every bound is far below 10^18)."""
_FLOAT_TEXT = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?"
"""A number setting as text: ASCII decimal with an optional exponent (``1.5``, ``.5``, ``2e-3``)."""


def _bound(n: float) -> str:
    return f"{n:g}" if isinstance(n, float) else str(n)


def check_value(key: str, raw: object) -> object:
    """Convert ``raw`` to setting ``key``'s type and check it against :data:`FIELDS`; return the converted value.

    Numbers must be finite (``inf``/``nan`` are refused for every number: no setting means anything by them); a
    boolean is no number; an int setting takes ``"10"`` or ``10``, never ``"1.5"``. ``None`` is allowed only where
    the setting is ``nullable``.

    Raises:
        InvalidValue: the reason, in words (the caller adds the key, the value when it may be shown, the source).
        KeyError: ``key`` is no setting.
    """
    spec = FIELDS[key]
    if raw is None:
        if spec.nullable:
            return None
        raise InvalidValue(key, "a value is required")
    value: object
    if spec.kind is str:
        if not isinstance(raw, str):
            raise InvalidValue(key, "must be a string")
        value = raw
        if spec.min_length is not None and len(raw) < spec.min_length:
            raise InvalidValue(key, f"must be at least {spec.min_length} character long")
        if spec.pattern is not None and re.fullmatch(spec.pattern, raw) is None:
            raise InvalidValue(key, f"must match {spec.pattern}")
        if spec.choices and raw not in spec.choices:
            raise InvalidValue(key, "must be one of " + ", ".join(spec.choices))
        return value
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise InvalidValue(key, "must be an integer" if spec.kind is int else "must be a finite decimal number")
    if (spec.kind is int and isinstance(raw, str) and re.fullmatch(r"[+-]?[0-9]+", raw.strip())
            and re.fullmatch(_INT_TEXT, raw.strip()) is None):
        # an integer, too long to read: say which bound it breaks ("must be an integer" was false)
        bound = spec.ge if raw.strip().startswith("-") else spec.le
        side = "≥" if raw.strip().startswith("-") else "≤"
        raise InvalidValue(key, f"must be {side} {_bound(bound)}" if bound is not None else
                           "must be an integer of at most 18 digits")
    if isinstance(raw, str) and re.fullmatch(_INT_TEXT if spec.kind is int else _FLOAT_TEXT, raw.strip()) is None:
        # Python's int()/float() also take "1_000", "٣" (any Unicode digit) and "infinity": git config values
        # are read as plain ASCII decimals only
        raise InvalidValue(key, "must be an integer" if spec.kind is int else "must be a finite decimal number")
    try:
        if spec.kind is int:
            if isinstance(raw, float):
                if not raw.is_integer():
                    raise ValueError(raw)
                number: float = int(raw)
            else:
                number = int(raw)
        else:
            number = float(raw)
    except (ValueError, OverflowError):
        wanted = "an integer" if spec.kind is int else "a finite decimal number"
        raise InvalidValue(key, f"must be {wanted}") from None
    if not math.isfinite(number):
        raise InvalidValue(key, "must be a finite number")
    if spec.ge is not None and number < spec.ge:
        raise InvalidValue(key, f"must be ≥ {_bound(spec.ge)}")
    if spec.gt is not None and number <= spec.gt:
        raise InvalidValue(key, f"must be > {_bound(spec.gt)}")
    if spec.le is not None and number > spec.le:
        raise InvalidValue(key, f"must be ≤ {_bound(spec.le)}")
    return number


@dataclass(frozen=True)
class Settings:
    """The effective configuration.

    Attributes:
        embed: embedder name: ``wordllama`` (default, offline), ``fake`` (deterministic hashing), ``openai`` (any
            OpenAI-compatible ``/v1/embeddings`` endpoint), ``off``.
        embed_url / embed_model / embed_dim / embed_key_env / embed_timeout / embed_batch: the ``openai``
            embedder's endpoint (base URL or full ``…/embeddings``), model, dimension, the *name* of the
            environment variable holding the API key (never the key), seconds per request and texts per request
            (defaults mirror ``git_memhtml.embed.openai``; docs/retrieval.md).
        llm: the model the model phases call: ``off`` (default: none), ``openai`` (chat completions with a strict
            ``json_schema``: OpenAI, vLLM, Ollama, llama.cpp) or ``anthropic`` (the Messages API; docs/models.md §1).
        llm_url / llm_model / llm_key_env / llm_timeout / llm_attempts: its base URL (default by dialect, see
            :func:`llm_defaults`), model id (no default: required once ``llm`` is on), the *name* of the
            environment variable holding its key (default by dialect), seconds per HTTP attempt and attempts per
            call on 429/5xx (docs/models.md §1.5).
        llm_max_prompt: tokens one model request may send, counted by ``sleep/engine/tokens.py`` (default 4,000,
            Ollama's usual context; ``llm/defaults.py:DEFAULT_MAX_PROMPT_TOKENS``): the phases split batches and cut
            members to stay under it (docs/models.md §11).
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
        trace_root / codex_root: the folders ``git memhtml trace index`` reads Claude Code transcripts
            (``<root>/projects/…``) and Codex CLI rollouts (``<root>/sessions/…``) from; a leading ``~`` is the
            user's home (:func:`trace_roots`; docs/traces.md §1).
    """

    embed: EmbedderName = DEFAULT_EMBEDDER
    embed_url: str = "https://api.openai.com/v1"
    embed_model: str = "text-embedding-3-small"
    embed_dim: int = 1536
    embed_key_env: str = "OPENAI_API_KEY"
    embed_timeout: float = 30.0
    embed_batch: int = 96
    llm: LlmName = "off"
    llm_url: str | None = None
    llm_model: str | None = None
    llm_key_env: str | None = None
    llm_timeout: float = DEFAULT_TIMEOUT_SECONDS
    llm_attempts: int = DEFAULT_MAX_ATTEMPTS
    llm_max_prompt: int = DEFAULT_MAX_PROMPT_TOKENS
    weight_fts: float = 1.0
    weight_vector: float = 1.0
    weight_recency: float = 0.5
    weight_salience: float = 0.4
    hooks: HooksFlag = "1"
    mmr_lambda: float = 0.9
    lock_timeout: float = 10.0
    gate_max_lost: int = 0
    trace_root: str = "~/.claude"
    codex_root: str = "~/.codex"

    def __post_init__(self) -> None:
        """Check every value against :data:`FIELDS` (converting ``"1.5"`` to ``1.5``); raises :class:`InvalidValue`."""
        for key in FIELDS:
            object.__setattr__(self, key, check_value(key, getattr(self, key)))

    def values(self) -> dict[str, object]:
        """``{key: value}`` of every setting, in :data:`FIELDS` order."""
        return {key: getattr(self, key) for key in FIELDS}


KEYS: tuple[str, ...] = tuple(FIELDS)


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
    except InvalidValue as exc:
        key = exc.key
        shown = "<not shown: it must name a variable, not hold a key>" if key in SECRET_KEYS else repr(
            values.get(key))
        source = sources.get(key, "default")
        fixes = {
            "env": f"unset MEMHTML_{key.upper()} (or set it to a valid value)",
            "git-config": f"git config --unset {_git_key(key)} (or git config {_git_key(key)} <valid value>)",
            "flag": "pass a valid value",
        }
        named = {"env": f"MEMHTML_{key.upper()}", "git-config": _git_key(key)}.get(source, key)
        raise ConfigError(
            f"invalid setting {named}={shown} (from {source}): {exc.reason}",
            hint=fixes.get(source, f"git config {_git_key(key)} <value>"),
        ) from exc
    return ResolvedSettings(settings, sources)


def trace_roots(settings: Settings, env: Mapping[str, str]) -> tuple[Path, Path]:
    """``(claude_code_root, codex_root)``: :attr:`Settings.trace_root` and :attr:`Settings.codex_root` with a
    leading ``~`` or ``~/`` replaced by :func:`home_dir` of ``env`` (``~user`` forms are not expanded: they name
    another account's home, which a setting has no business reading)."""

    def expand(value: str) -> Path:
        if value == "~" or value.startswith("~/"):
            return home_dir(env) / value[2:]
        return Path(value)

    return expand(settings.trace_root), expand(settings.codex_root)


LLM_DEFAULTS: Mapping[str, Mapping[str, str]] = {
    "openai": {"llm_url": OPENAI_URL, "llm_key_env": OPENAI_KEY_ENV},
    "anthropic": {"llm_url": ANTHROPIC_URL, "llm_key_env": ANTHROPIC_KEY_ENV},
}
"""The defaults of ``memhtml.llmurl`` and ``memhtml.llmkeyenv`` per dialect (the provider's public API and the
variable its own clients read); with ``memhtml.llm = off`` neither has one."""


def llm_defaults(settings: Settings) -> dict[str, str | None]:
    """``{"llm_url": …, "llm_key_env": …}`` in force: the configured value, else the dialect's default (``None``
    with ``memhtml.llm = off`` and nothing configured)."""
    defaults = LLM_DEFAULTS.get(settings.llm, {})
    return {key: getattr(settings, key) or defaults.get(key) for key in ("llm_url", "llm_key_env")}


def llm_key_env(settings: Settings) -> str | None:
    """The name of the variable holding the model's key (``None`` with ``memhtml.llm = off`` and none set)."""
    return llm_defaults(settings)["llm_key_env"]


def llm_settings(settings: Settings, *, key: str | None) -> LlmSettings | None:
    """The model binding of ``settings`` (``None`` for ``memhtml.llm = off``), with ``key``, the value the CLI read
    from the variable :func:`llm_key_env` names (``None`` or empty: unset).

    The key is stripped of surrounding whitespace; one with inner spaces, control or non-ASCII characters is
    refused (it cannot be a header value). A missing key is accepted for a server on this machine or a private
    network (Ollama and llama.cpp need none): no auth header is sent. Anywhere else a missing key is refused before
    any request (docs/models.md §1.5).

    Raises:
        ConfigError: no ``memhtml.llmmodel``; a ``memhtml.llmurl`` that is not an ``http(s)://host`` URL or carries
            credentials; no key for a public server; a key no header can carry. Each names the setting and how to
            fix it, and none shows the key.
    """
    if settings.llm == "off":
        return None
    dialect = settings.llm
    effective = llm_defaults(settings)
    url, key_env = str(effective["llm_url"]), str(effective["llm_key_env"])
    if not settings.llm_model:
        example = "gpt-4o-mini" if dialect == "openai" else "claude-sonnet-4-5"
        raise ConfigError(f"memhtml.llm is {dialect} but memhtml.llmmodel is not set (a model has no default)",
                          hint=f"git config memhtml.llmmodel <model id> (e.g. {example}), or set MEMHTML_LLM_MODEL")
    host = _url_host(url)
    key = (key or "").strip() or None  # a trailing newline from `export K=$(cat file)` is not part of the key
    if key is not None and not all(33 <= ord(c) <= 126 for c in key):
        raise ConfigError(f"${key_env} holds characters an HTTP header cannot carry (spaces, control characters or "
                          "non-ASCII); the value is not shown",
                          hint=f"export {key_env}=<the key exactly as the provider issued it>")
    if key is None and not _is_local(host):
        raise ConfigError(f"memhtml.llm is {dialect} at {url}, but ${key_env} holds no API key",
                          hint=f"export {key_env}=<key>, or name another variable with "
                               "git config memhtml.llmkeyenv <VARIABLE> (a local server needs none)")
    from git_memhtml.llm.client import LlmSettings  # noqa: PLC0415 - the model layer loads only when one is bound

    return LlmSettings(dialect=dialect, url=url, model=settings.llm_model, key=key, key_env=key_env,
                       timeout=settings.llm_timeout, max_attempts=settings.llm_attempts)


def _url_host(url: str) -> str:
    """The host of ``memhtml.llmurl``; raises :class:`ConfigError` for anything but a plain ``http(s)://host`` URL."""
    hint = "git config memhtml.llmurl http://localhost:11434/v1 (an http:// or https:// base URL, no credentials)"
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
        _ = parts.port  # raises ValueError on a bad port
    except ValueError as exc:
        raise ConfigError(f"memhtml.llmurl={url!r} is not a URL: {exc}", hint=hint) from exc
    if parts.scheme not in ("http", "https") or not host:
        raise ConfigError(f"memhtml.llmurl={url!r} is not an http(s)://host URL", hint=hint)
    if parts.username is not None or parts.password is not None:
        raise ConfigError("memhtml.llmurl carries credentials (user:password@); they are not shown",
                          hint="put the key in the variable memhtml.llmkeyenv names; " + hint)
    if parts.query or parts.fragment:
        raise ConfigError(f"memhtml.llmurl={url!r} has a query or fragment", hint=hint)
    return host


def _is_local(host: str) -> bool:
    """``localhost``, a loopback address, or a private/link-local address literal (a server of this machine or
    network, which may need no key)."""
    if host.lower() == "localhost" or host.lower().endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local
