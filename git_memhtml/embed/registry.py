"""Embedder registry (DESIGN §3.6): ``wordllama`` (default), ``fake``, ``off``.

Providers are imported only when asked for, so ``off``/``fake`` never pay the wordllama import.
"""

from __future__ import annotations

from git_memhtml.embed.base import Embedder
from git_memhtml.errors import ConfigError

DEFAULT_EMBEDDER = "wordllama"
"""Default provider (DESIGN §3.6)."""
EMBEDDER_NAMES: tuple[str, ...] = ("wordllama", "fake", "off")
"""Valid names of ``memhtml.embed`` / ``MEMHTML_EMBED``."""


def get_embedder(name: str | None = DEFAULT_EMBEDDER) -> Embedder | None:
    """Return the embedder called ``name`` (case-insensitive, trimmed; ``None``/empty → default).

    ``"off"`` returns ``None`` (lexical-only retrieval). ``"fake"`` is :class:`FakeEmbedder` at 1024 dims.

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
    choices = ", ".join(EMBEDDER_NAMES)
    raise ConfigError(
        f"unknown embedder {name!r}; valid choices: {choices}",
        hint=f"set `git config memhtml.embed <{'|'.join(EMBEDDER_NAMES)}>` or MEMHTML_EMBED to one of: {choices}",
    )
