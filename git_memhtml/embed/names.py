"""The embedder names: the one declaration that the registry, the settings model and the weight defaults share.

Adding an embedder is its module under ``embed/`` plus one entry here and one loader in
:mod:`git_memhtml.embed.registry` (docs/architecture.md "Where a change goes"). This module imports nothing
heavy, so :mod:`git_memhtml.config` can type its ``embed`` setting with it.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

EmbedderName = Literal["wordllama", "fake", "openai", "off"]
"""Valid values of ``memhtml.embed`` / ``MEMHTML_EMBED`` (DESIGN §3.6), in the order messages list them."""

EMBEDDER_NAMES: Final[tuple[str, ...]] = get_args(EmbedderName)
"""The same names as a tuple, for messages and choices."""

DEFAULT_EMBEDDER: Final[EmbedderName] = "wordllama"
"""Default provider: its weights ship in its wheel and it runs offline on the CPU (DESIGN §3.6)."""
