"""The embedder providers: their names and loaders, declared once for the registry, the settings model and the
weight defaults.

Adding an embedder is its module under ``embed/`` plus its name and its loader here (docs/architecture.md
"Where a change goes"). Loaders import their provider only when called and the provider types are imported only
for type checking, so this module stays light enough for :mod:`git_memhtml.config` to type its ``embed`` setting
with it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final, Literal, get_args

if TYPE_CHECKING:
    from git_memhtml.embed.base import Embedder
    from git_memhtml.embed.openai import OpenAIOptions

EmbedderName = Literal["wordllama", "fake", "openai", "off"]
"""Valid values of ``memhtml.embed`` / ``MEMHTML_EMBED`` (docs/design.md §3.6), in the order messages list them."""

EMBEDDER_NAMES: Final[tuple[str, ...]] = get_args(EmbedderName)
"""The same names as a tuple, for messages and choices."""

DEFAULT_EMBEDDER: Final[EmbedderName] = "wordllama"
"""Default provider: its weights ship in its wheel and it runs offline on the CPU (docs/design.md §3.6)."""


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
