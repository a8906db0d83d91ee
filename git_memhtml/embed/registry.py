"""Embedder registry (docs/design.md §3.6): ``wordllama`` (default), ``fake``, ``openai``, ``off``.

Providers are imported only when asked for, so ``off``/``fake`` never pay the wordllama import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from git_memhtml.embed.base import Embedder
from git_memhtml.errors import ConfigError

if TYPE_CHECKING:
    from git_memhtml.embed.openai import OpenAIOptions

DEFAULT_EMBEDDER = "wordllama"
"""Default provider (docs/design.md §3.6)."""
EMBEDDER_NAMES: tuple[str, ...] = ("wordllama", "fake", "openai", "off")
"""Valid names of ``memhtml.embed`` / ``MEMHTML_EMBED``."""


def get_embedder(name: str | None = DEFAULT_EMBEDDER, *, openai: OpenAIOptions | None = None) -> Embedder | None:
    """Return the embedder called ``name`` (case-insensitive, trimmed; ``None``/empty → default).

    ``"off"`` returns ``None`` (lexical-only retrieval). ``"fake"`` is :class:`FakeEmbedder` at 1024 dims.
    ``"openai"`` is :class:`OpenAIEmbedder` with ``openai`` (default options when ``None``); it makes no request
    until its first ``embed`` call.

    Raises:
        ConfigError: unknown name (the message and hint list the valid choices).
    """
    key = (name or DEFAULT_EMBEDDER).strip().lower() or DEFAULT_EMBEDDER
    if key == "off":
        return None
    if key == "fake":
        from git_memhtml.embed.fake import FakeEmbedder  # noqa: PLC0415

        return FakeEmbedder()
    if key == "wordllama":
        from git_memhtml.embed.wordllama import WordLlamaEmbedder  # noqa: PLC0415

        return WordLlamaEmbedder()
    if key == "openai":
        from git_memhtml.embed.openai import OpenAIEmbedder, OpenAIOptions  # noqa: PLC0415

        return OpenAIEmbedder(openai or OpenAIOptions())
    choices = ", ".join(EMBEDDER_NAMES)
    raise ConfigError(
        f"unknown embedder {name!r}; valid choices: {choices}",
        hint=f"set `git config memhtml.embed <{'|'.join(EMBEDDER_NAMES)}>` or MEMHTML_EMBED to one of: {choices}",
    )
