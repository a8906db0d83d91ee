"""Deterministic feature-hashing embedder for tests and the discrimination gate (docs/gate.md §8.3)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from git_memhtml.embed.base import FloatMatrix, l2_normalise, space_of

FAKE_DIM = 1024
"""Default dimension (docs/gate.md §8.3)."""

_TOKEN = re.compile(r"[a-z0-9]+")
"""Tokens of the lowercased text, ASCII letters and digits only (docs/gate.md §8.3)."""


@dataclass(frozen=True)
class FakeEmbedder:
    """Feature hashing: per token ``sha256(utf8(token))``, +1.0 at ``uint32BE(b[0:4]) % dim``, +0.5 at
    ``uint32BE(b[4:8]) % dim``; rows L2-normalised, a text without tokens gives a zero row.

    The same function embeds documents and queries. ``dim`` defaults to 1024 (docs/gate.md §8.3); tests may
    use a smaller one.
    """

    dim: int = FAKE_DIM
    provider: str = "fake"
    model: str = "hash"

    @property
    def space(self) -> str:
        """``"fake:hash@<dim>"``."""
        return space_of(self.provider, self.model, self.dim)

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Embed ``texts`` → ``(n, dim)`` float32, unit rows (zero rows for token-free texts)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in _TOKEN.findall(text.lower()):
                digest = hashlib.sha256(token.encode("utf-8")).digest()
                out[row, int.from_bytes(digest[0:4], "big") % self.dim] += 1.0
                out[row, int.from_bytes(digest[4:8], "big") % self.dim] += 0.5
        return l2_normalise(out)
