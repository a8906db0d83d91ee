"""The default embedder: WordLlama ``l2_supercat`` at 256 dims, offline on the CPU (docs/design.md §3.6).

The model loads on first use only, and without importing the ``wordllama`` package when its bundled files are
where this version of it puts them (:class:`LeanWordLlama`): ``import wordllama`` costs ~0.45 s of CPU (its
package init imports its training configs, clustering and splitting algorithms, and calls
``logging.basicConfig``), while what inference needs is its tokenizer (``tokenizers``), its embedding matrix
(``safetensors``) and a mean pool, ~0.1 s (docs/embedders.md §1 "Loading"). The vectors are those of
``WordLlamaInference.embed`` bit for bit (``tests/embed/test_wordllama_lean.py``); when the files are not found,
the package's own loader is used. The wheel's own directory is passed as ``cache_dir`` with
``disable_download=True``: the default ``load()`` looks for the bundled tokenizer in the wrong folder and would
fetch it from the network (docs/embedders.md §1). ``embed()`` pads a batch to its longest text and never
truncates, so one long text can cost gigabytes (docs/embedders.md §1 "long-text hazard"): texts are cut into
pieces of at most :data:`PIECE_CHARS` characters (a piece's vector is the mean of its pieces' vectors,
re-normalised), and batches are formed from length-sorted pieces.
"""

from __future__ import annotations

import importlib.util
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
WEIGHTS_FILE = "weights/{config}_{dim}.safetensors"
TOKENIZER_FILE = "tokenizers/{config}_tokenizer_config.json"
"""Where the wordllama wheel keeps a bundled model's weights and tokenizer, relative to its package folder
(``WordLlama.get_filename`` and the config's ``tokenizer_config``; checked against the package's own resolver by
test)."""
TENSOR_KEY = "embedding.weight"
"""The tensor of the weights file that holds the ``(vocabulary, dim)`` embedding matrix (wordllama's default)."""


def wordllama_folder() -> Path | None:
    """The installed ``wordllama`` package folder, found without importing it (``None`` when not installed)."""
    try:
        spec = importlib.util.find_spec("wordllama")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


class LeanWordLlama:
    """WordLlama inference from the bundled files, without the ``wordllama`` package: the tokenizer with padding
    and no truncation, the float32 embedding matrix, a masked mean of the token rows, and (``norm``) division by
    the row norm — the operations of ``wordllama.inference.WordLlamaInference.embed`` in the same order and dtypes.

    Raises:
        OSError / ValueError / KeyError: (from the constructor) a file is missing or is not what it should be.
    """

    def __init__(self, weights: Path, tokenizer: Path) -> None:
        from safetensors import safe_open  # noqa: PLC0415 - loaded with the model
        from tokenizers import Tokenizer  # noqa: PLC0415

        # Kept as stored (float16 in the wheel): only the rows a batch uses are widened to float32, which is exact,
        # so they equal the rows of the package's widened matrix, and a cold query skips widening 8 M values.
        with safe_open(str(weights), framework="np", device="cpu") as f:
            self.embedding = np.ascontiguousarray(f.get_tensor(TENSOR_KEY))
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.enable_padding()
        self.tokenizer.no_truncation()

    def embed(self, texts: list[str], *, norm: bool = False, batch_size: int = 64) -> FloatMatrix:
        """``(len(texts), dim)`` float32 mean-pooled rows (unit rows with ``norm``), as the package's ``embed`` with
        its default ``return_np=True``."""
        out = np.empty((len(texts), self.embedding.shape[1]), dtype=np.float32)
        for i in range(0, len(texts), batch_size):
            encoded = self.tokenizer.encode_batch(texts[i : i + batch_size], is_pretokenized=False,
                                                  add_special_tokens=False)
            ids = np.array([e.ids for e in encoded], dtype=np.int32)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
            np.clip(ids, 0, self.embedding.shape[0] - 1, out=ids)
            rows = self.embedding[ids].astype(np.float32, copy=False)
            total = np.maximum(mask.sum(axis=1, keepdims=True), 1.0).astype(np.float32)
            pooled = np.sum(rows * mask[..., np.newaxis], axis=1, dtype=np.float32) / total
            if norm:
                pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
            out[i : i + pooled.shape[0]] = pooled
        return out


def lean_files(config: str, dim: int) -> tuple[Path, Path] | None:
    """``(weights, tokenizer)`` of the bundled model ``config`` at ``dim``, or ``None`` when either is missing."""
    folder = wordllama_folder()
    if folder is None:
        return None
    weights = folder / WEIGHTS_FILE.format(config=config, dim=dim)
    tokenizer = folder / TOKENIZER_FILE.format(config=config)
    return (weights, tokenizer) if weights.is_file() and tokenizer.is_file() else None


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
        """Load (once) and return the inference object: :class:`LeanWordLlama` over the bundled files, else the
        package's ``WordLlama.load``. Raises ``ModelUnavailable``."""
        if self._model is None:
            files = lean_files(self.model, self.dim)
            if files is not None:
                try:
                    self._model = LeanWordLlama(*files)
                except Exception as exc:
                    raise ModelUnavailable(
                        f"cannot load the wordllama model {self.model!r} from {files[0].parent.parent}: "
                        f"{type(exc).__name__}: {exc}", hint=_HINT) from exc
                return self._model
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
                    model.embed([pieces[j] for j in batch], norm=True, batch_size=BATCH_SIZE),
                    dtype=np.float32,
                )
                for row, j in zip(vecs, batch, strict=True):
                    out[owners[j]] += row
        except Exception as exc:
            raise ModelUnavailable(f"wordllama embedding failed: {type(exc).__name__}: {exc}", hint=_HINT) from exc
        return l2_normalise(out)
