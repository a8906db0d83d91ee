"""Embedder registry (docs/design.md §3.6): :func:`get_embedder` over the providers of
:mod:`git_memhtml.embed.providers`.

Providers are imported only when asked for, so ``off``/``fake`` never pay the wordllama import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from git_memhtml.embed.base import Embedder
from git_memhtml.embed.providers import DEFAULT_EMBEDDER, EMBEDDER_NAMES, LOADERS
from git_memhtml.errors import ConfigError

if TYPE_CHECKING:
    from git_memhtml.embed.openai import OpenAIOptions


def get_embedder(name: str | None = DEFAULT_EMBEDDER, *, openai: OpenAIOptions | None = None,
                 fake_dim: int | None = None) -> Embedder | None:
    """Return the embedder called ``name`` (case-insensitive, trimmed; ``None``/empty → default).

    ``"off"`` returns ``None`` (lexical-only retrieval). ``"fake"`` is :class:`FakeEmbedder` at 1024 dims, or at
    ``fake_dim`` when given (a user's explicit ``memhtml.embeddim``: the bench corpora are ``fake:hash@256``).
    ``"openai"`` is :class:`OpenAIEmbedder` with ``openai`` (default options when ``None``); it makes no request
    until its first ``embed`` call.

    Raises:
        ConfigError: unknown name (the message and hint list the valid choices).
    """
    key = (name or DEFAULT_EMBEDDER).strip().lower() or DEFAULT_EMBEDDER
    if key == "fake" and fake_dim is not None:
        from git_memhtml.embed.fake import FakeEmbedder  # noqa: PLC0415 - providers load only when asked for

        return FakeEmbedder(dim=fake_dim)
    loader = LOADERS.get(key)
    if loader is not None:
        return loader(openai)
    choices = ", ".join(EMBEDDER_NAMES)
    raise ConfigError(
        f"unknown embedder {name!r}; valid choices: {choices}",
        hint=f"set `git config memhtml.embed <{'|'.join(EMBEDDER_NAMES)}>` or MEMHTML_EMBED to one of: {choices}",
    )
