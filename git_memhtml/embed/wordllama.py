"""The default embedder: WordLlama ``l2_supercat`` at 256 dims, offline on the CPU (docs/design.md §3.6).

The import of ``wordllama`` happens on first use only. The wheel's own directory is passed as ``cache_dir`` with
``disable_download=True``: the default ``load()`` looks for the bundled tokenizer in the wrong folder and would
fetch it from the network (docs/embedders.md §1). ``embed()`` pads a batch to its longest text and never
truncates, so one long text can cost gigabytes (docs/embedders.md §1 "long-text hazard"): texts are cut into
pieces of at most :data:`PIECE_CHARS` characters (a piece's vector is the mean of its pieces' vectors,
re-normalised), and batches are formed from length-sorted pieces.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from git_memhtml.embed.base import FloatMatrix, l2_normalise, space_of
from git_memhtml.errors import ModelUnavailable

WORDLLAMA_CONFIG = "l2_supercat"
"""Bundled default model (docs/embedders.md §1)."""
WORDLLAMA_DIM = 256
"""Dimensions of the bundled model (docs/embedders.md §1)."""
PIECE_CHARS = 2000
"""Longest text handed to wordllama in one row; index chunks are ≤ 1800 chars (docs/index.md §3.8), so only
queries or foreign callers are ever split."""
BATCH_SIZE = 64
"""Rows per wordllama call (docs/embedders.md §1: batch 64 ≈ batch 256 in throughput)."""
_HINT = "run `git config memhtml.embed off` or set MEMHTML_EMBED=off to search lexically only"


def _split(text: str) -> list[str]:
    """Cut ``text`` into pieces of ≤ PIECE_CHARS characters, preferring whitespace boundaries."""
    if len(text) <= PIECE_CHARS:
        return [text]
    pieces: list[str] = []
    rest = text
    while len(rest) > PIECE_CHARS:
        cut = rest.rfind(" ", 0, PIECE_CHARS)
        if cut <= 0:
            cut = PIECE_CHARS
        pieces.append(rest[:cut])
        rest = rest[cut:].lstrip()
    if rest:
        pieces.append(rest)
    return pieces


@dataclass
class WordLlamaEmbedder:
    """WordLlama embedder (``provider="wordllama"``, ``model="l2_supercat"``, ``dim=256``).

    The model loads lazily on the first ``embed`` call (about 0.5 s, 32 MB).

    Raises:
        ModelUnavailable: (from ``embed``/``load``) wordllama cannot be imported or its bundled files are missing.
    """

    provider: str = "wordllama"
    model: str = WORDLLAMA_CONFIG
    dim: int = WORDLLAMA_DIM
    _model: Any = field(default=None, repr=False, compare=False)

    @property
    def space(self) -> str:
        """``"wordllama:l2_supercat@256"``."""
        return space_of(self.provider, self.model, self.dim)

    def load(self) -> Any:
        """Load (once) and return the wordllama inference object. Raises ``ModelUnavailable``."""
        if self._model is None:
            try:
                import wordllama  # noqa: PLC0415 - deferred on purpose, import costs ~0.3 s

                self._model = wordllama.WordLlama.load(
                    config=self.model,
                    cache_dir=Path(wordllama.__file__).parent,
                    dim=self.dim,
                    disable_download=True,
                )
            except Exception as exc:
                raise ModelUnavailable(
                    f"cannot load the wordllama model {self.model!r}: {type(exc).__name__}: {exc}",
                    hint=_HINT,
                ) from exc
        return self._model

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Embed ``texts`` → ``(n, 256)`` float32 unit rows (zero rows for empty texts).

        Raises:
            ModelUnavailable: the model cannot load or the call fails.
        """
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        model = self.load()
        owners: list[int] = []
        pieces: list[str] = []
        for i, text in enumerate(texts):
            for piece in _split(text):
                if piece.strip():
                    owners.append(i)
                    pieces.append(piece)
        order = sorted(range(len(pieces)), key=lambda j: len(pieces[j]))
        try:
            for start in range(0, len(order), BATCH_SIZE):
                batch = order[start : start + BATCH_SIZE]
                vecs = np.asarray(
                    model.embed([pieces[j] for j in batch], norm=True, return_np=True, batch_size=BATCH_SIZE),
                    dtype=np.float32,
                )
                for row, j in zip(vecs, batch, strict=True):
                    out[owners[j]] += row
        except Exception as exc:
            raise ModelUnavailable(f"wordllama embedding failed: {type(exc).__name__}: {exc}", hint=_HINT) from exc
        return l2_normalise(out)
