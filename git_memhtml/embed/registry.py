"""Embedder registry (DESIGN §3.6): the names of :mod:`git_memhtml.embed.names`, each with its loader.

Providers are imported only when asked for, so ``off``/``fake`` never pay the wordllama import.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from git_memhtml.embed.base import Embedder
from git_memhtml.embed.names import DEFAULT_EMBEDDER, EMBEDDER_NAMES
from git_memhtml.errors import ConfigError

if TYPE_CHECKING:
    from git_memhtml.embed.openai import OpenAIOptions


def _load_off(_: OpenAIOptions | None) -> Embedder | None:
    return None


def _load_fake(_: OpenAIOptions | None) -> Embedder | None:
    from git_memhtml.embed.fake import FakeEmbedder  # noqa: PLC0415

    return FakeEmbedder()


def _load_wordllama(_: OpenAIOptions | None) -> Embedder | None:
    from git_memhtml.embed.wordllama import WordLlamaEmbedder  # noqa: PLC0415

    return WordLlamaEmbedder()


def _load_openai(options: OpenAIOptions | None) -> Embedder | None:
    from git_memhtml.embed.openai import OpenAIEmbedder, OpenAIOptions  # noqa: PLC0415

    return OpenAIEmbedder(options or OpenAIOptions())


LOADERS: Mapping[str, Callable[[OpenAIOptions | None], Embedder | None]] = {
    "wordllama": _load_wordllama,
    "fake": _load_fake,
    "openai": _load_openai,
    "off": _load_off,
}
"""Name → loader. Each loader imports its provider only when called, so ``off``/``fake`` never pay the
wordllama import. Checked total over :data:`EMBEDDER_NAMES` at import."""

if set(LOADERS) != set(EMBEDDER_NAMES):  # a name without a loader (or the reverse) is a programming error
    raise ImportError(f"embedder loaders {sorted(LOADERS)} do not match the names {sorted(EMBEDDER_NAMES)}")


def get_embedder(name: str | None = DEFAULT_EMBEDDER, *, openai: OpenAIOptions | None = None) -> Embedder | None:
    """Return the embedder called ``name`` (case-insensitive, trimmed; ``None``/empty → default).

    ``"off"`` returns ``None`` (lexical-only retrieval). ``"fake"`` is :class:`FakeEmbedder` at 1024 dims.
    ``"openai"`` is :class:`OpenAIEmbedder` with ``openai`` (default options when ``None``); it makes no request
    until its first ``embed`` call.

    Raises:
        ConfigError: unknown name (the message and hint list the valid choices).
    """
    key = (name or DEFAULT_EMBEDDER).strip().lower() or DEFAULT_EMBEDDER
    loader = LOADERS.get(key)
    if loader is not None:
        return loader(openai)
    choices = ", ".join(EMBEDDER_NAMES)
    raise ConfigError(
        f"unknown embedder {name!r}; valid choices: {choices}",
        hint=f"set `git config memhtml.embed <{'|'.join(EMBEDDER_NAMES)}>` or MEMHTML_EMBED to one of: {choices}",
    )
