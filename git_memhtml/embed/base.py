"""The embedder interface (``docs/architecture.md`` § embed/, docs/design.md §3.6).

An embedder turns texts into L2-normalised float32 rows. The index records the vector *space*
``"<provider>:<model>@<dim>"`` and refuses to mix spaces (``EmbedModelMismatch``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

FloatMatrix = npt.NDArray[np.float32]
"""Shape ``(n, dim)``, dtype float32."""


@runtime_checkable
class Embedder(Protocol):
    """A text embedder.

    Attributes:
        provider: registry name of the provider (``wordllama``, ``fake``, ``openai``).
        model: model id inside the provider.
        dim: number of dimensions of every row.
    """

    @property
    def provider(self) -> str:
        """Registry name of the provider."""
        ...

    @property
    def model(self) -> str:
        """Model id inside the provider."""
        ...

    @property
    def dim(self) -> int:
        """Dimensions of every row."""
        ...

    @property
    def space(self) -> str:
        """The vector space ``"<provider>:<model>@<dim>"`` recorded in ``index_state``."""
        ...

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Embed ``texts`` → array ``(len(texts), dim)`` float32, rows L2-normalised (a zero row stays zero).

        Raises:
            ModelUnavailable: the provider cannot load or answer.
        """
        ...


def space_of(provider: str, model: str, dim: int) -> str:
    """Return the space string ``"<provider>:<model>@<dim>"`` (docs/design.md §3.6)."""
    return f"{provider}:{model}@{dim}"


def l2_normalise(matrix: npt.ArrayLike) -> FloatMatrix:
    """Return ``matrix`` as float32 ``(n, dim)`` with every non-zero row scaled to unit L2 norm.

    Zero rows (and rows whose norm is not finite) come back as zeros; never divides by zero.
    """
    arr = np.asarray(matrix, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    norms = np.linalg.norm(arr.astype(np.float64), axis=1, keepdims=True)
    safe = np.where((norms > 0) & np.isfinite(norms), norms, 1.0)
    out = (arr / safe).astype(np.float32)
    out[~np.isfinite(norms[:, 0]) | (norms[:, 0] == 0)] = 0.0
    return out
