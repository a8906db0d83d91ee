"""An embedder for any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, Ollama, vLLM, llama.cpp; docs/design.md
§3.6).

Requests go through the package's one HTTP choke point, :mod:`git_memhtml.transport`.
Texts go out in batches of :attr:`OpenAIOptions.batch`;
each request has a timeout; HTTP 429 and 5xx are retried with exponential backoff (``Retry-After`` honoured up to
:data:`MAX_BACKOFF_SECONDS`); every other failure raises :class:`ModelUnavailable` naming the URL, the HTTP status
and a hint. A transport failure (connection refused, DNS, timeout) is not retried and marks the endpoint *down* for
the rest of the process, so one unreachable endpoint costs one timeout per command, not one per call: callers
(search, index update) then degrade to the lexical arms.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from git_memhtml.embed.base import FloatMatrix, l2_normalise, space_of
from git_memhtml.errors import ModelUnavailable
from git_memhtml.transport import RETRY_STATUSES, HttpResult, RetryPolicy, Transport, TransportFailure, preview

DEFAULT_URL = "https://api.openai.com/v1"
"""Base URL used when ``memhtml.embedurl`` is not set (``/embeddings`` is appended)."""
DEFAULT_MODEL = "text-embedding-3-small"
"""Model used when ``memhtml.embedmodel`` is not set."""
DEFAULT_DIM = 1536
"""Native dimension of :data:`DEFAULT_MODEL`; must match the model, it is checked on every answer."""
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
"""Name of the environment variable holding the API key (``memhtml.embedkeyenv``); keys never live in config."""
DEFAULT_TIMEOUT_SECONDS = 30.0
"""Per-request timeout (``memhtml.embedtimeout``)."""
DEFAULT_BATCH = 96
"""Texts per request (docs/index.md §3.8: the original sends batches of 96)."""
MAX_ATTEMPTS = 4
"""Attempts per batch on HTTP 429/5xx (1 try + 3 retries); an implementation choice."""
BACKOFF_SECONDS = 0.5
"""First retry delay; doubles per retry (0.5, 1, 2 s) unless ``Retry-After`` says otherwise."""
MAX_BACKOFF_SECONDS = 10.0
"""Longest single wait between two attempts, ``Retry-After`` included."""


def endpoint_url(url: str) -> str:
    """Return the embeddings endpoint of ``url``: kept when it already ends in ``/embeddings``, else
    ``<url>/embeddings`` (so ``http://localhost:11434/v1`` and ``…/v1/embeddings`` both work)."""
    base = url.strip().rstrip("/")
    return base if base.endswith("/embeddings") else base + "/embeddings"


@dataclass(frozen=True)
class OpenAIOptions:
    """Resolved configuration of the ``openai`` embedder (``git config memhtml.*`` / ``MEMHTML_*``).

    Attributes:
        url: base URL or full embeddings endpoint.
        model: the ``model`` field of every request.
        dim: dimensions the model returns (checked; recorded in the index space).
        api_key: the key read from the environment variable named by ``key_env`` (``None``: no header sent).
        key_env: that variable's name (used in hints only).
        timeout: seconds per request.
        batch: texts per request (≥ 1).
        backoff: first retry delay in seconds (doubling).
    """

    url: str = DEFAULT_URL
    model: str = DEFAULT_MODEL
    dim: int = DEFAULT_DIM
    api_key: str | None = None
    key_env: str = DEFAULT_KEY_ENV
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    batch: int = DEFAULT_BATCH
    backoff: float = BACKOFF_SECONDS


@dataclass
class _Health:
    """Mutable per-process memory of a transport failure (the embedder value itself stays immutable)."""

    down: str | None = None
    failure: ModelUnavailable | None = None


@dataclass(frozen=True)
class OpenAIEmbedder:
    """OpenAI-compatible HTTP embedder; ``space`` = ``openai:<model>@<dim>``.

    Raises (from ``embed``):
        ModelUnavailable: unreachable endpoint, timeout, non-2xx status after retries, malformed answer, or
            vectors of another dimension than ``options.dim``. The message names the URL and the status.
    """

    options: OpenAIOptions = field(default_factory=OpenAIOptions)
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False, compare=False)
    _health: _Health = field(default_factory=_Health, repr=False, compare=False)

    @property
    def provider(self) -> str:
        """``"openai"`` (the wire dialect, whatever the server)."""
        return "openai"

    @property
    def model(self) -> str:
        """The configured model id."""
        return self.options.model

    @property
    def dim(self) -> int:
        """The configured dimension."""
        return self.options.dim

    @property
    def space(self) -> str:
        """``"openai:<model>@<dim>"``."""
        return space_of(self.provider, self.model, self.dim)

    @property
    def url(self) -> str:
        """The embeddings endpoint requests go to."""
        return endpoint_url(self.options.url)

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Embed ``texts`` → ``(n, dim)`` float32 unit rows; empty/blank texts get zero rows without a request.

        Raises:
            ModelUnavailable: see the class docstring.
        """
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        todo = [i for i, t in enumerate(texts) if t.strip()]
        if not todo:
            return out
        try:
            return self._embed(texts, out, todo)
        except ModelUnavailable as exc:
            self._health.failure = exc
            raise

    @property
    def last_failure(self) -> ModelUnavailable | None:
        """The error of this process's last failed :meth:`embed` (``None``: none failed). A caller that swallows
        the error to degrade (search's query vector) reads it here to say why."""
        return self._health.failure

    def _embed(self, texts: Sequence[str], out: FloatMatrix, todo: list[int]) -> FloatMatrix:
        if self._health.down is not None:
            raise ModelUnavailable(f"embedding endpoint {self.url} is unreachable: {self._health.down}",
                                   hint=self._unreachable_hint())
        headers = {}
        if self.options.api_key:
            headers["Authorization"] = f"Bearer {self.options.api_key}"
        size = max(1, self.options.batch)
        policy = RetryPolicy(max_attempts=MAX_ATTEMPTS, backoff=self.options.backoff, max_backoff=MAX_BACKOFF_SECONDS)
        with Transport("embedding endpoint", self.options.timeout, headers, policy, sleep=self.sleep,
                       timeout_hint=(f"raise memhtml.embedtimeout (now {self.options.timeout:g}) or check the "
                                     "server"),
                       unreachable_hint=self._unreachable_hint(), secret=self.options.api_key) as transport:
            for start in range(0, len(todo), size):
                rows = todo[start : start + size]
                vecs = self._batch(transport, [texts[i] for i in rows])
                out[rows] = vecs
        return l2_normalise(out)

    def _unreachable_hint(self) -> str:
        return (f"check that the server behind memhtml.embedurl ({self.url}) is running, or set "
                "`git config memhtml.embed off` to search lexically only")

    def _batch(self, transport: Transport, texts: list[str]) -> FloatMatrix:
        payload = {"model": self.model, "input": texts}
        try:
            response = transport.post_json(self.url, payload)
        except TransportFailure as exc:
            self._health.down = exc.reason
            raise
        status = response.status
        if status >= 400:
            retried = status in RETRY_STATUSES
            raise ModelUnavailable(f"embedding endpoint {self.url} answered HTTP {status}"
                                   + (f" after {response.attempts} attempts" if retried else "")
                                   + self._no_key_note(status)
                                   + f": {preview(response.text, limit=200)}", hint=self._status_hint(status))
        return self._decode(response, len(texts))

    def _no_key_note(self, status: int) -> str:
        """``""`` when a key was sent; else what the error message adds: that no key was set, and for a refusal
        (401/403) how to set one. The message carries it, not only the hint, because the index reports an
        embedder failure by its message alone (``IndexReport.embed_error``)."""
        if self.options.api_key:
            return ""
        variable = self.options.key_env
        if status in (401, 403):
            return (f" and no API key was set (${variable} is unset or empty): export {variable}=<key>, or name "
                    "another variable with git config memhtml.embedkeyenv")
        return f" (no API key was sent: ${variable} is unset or empty)"

    def _status_hint(self, status: int) -> str:
        if status in (401, 403) and not self.options.api_key:
            return (f"put an API key in ${self.options.key_env} (export {self.options.key_env}=<key>; "
                    "memhtml.embedkeyenv or MEMHTML_EMBED_KEY_ENV names the variable, keys never go into git config); "
                    "a keyless local server needs none, so check "
                    f"memhtml.embedurl ({self.options.url})")
        if status in (401, 403):
            return (f"put a valid API key in ${self.options.key_env} (memhtml.embedkeyenv names the variable; "
                    "keys never go into git config)")
        if status == 404:
            return f"check memhtml.embedurl ({self.options.url}) and memhtml.embedmodel ({self.model})"
        if status in RETRY_STATUSES:
            return "the server is overloaded or failing; try again later or lower memhtml.embedbatch"
        return f"check memhtml.embedmodel ({self.model}) and the server's documentation"

    def _decode(self, response: HttpResult, count: int) -> FloatMatrix:
        try:
            body: Any = response.json()
            items = body["data"]
            if not isinstance(items, list) or len(items) != count:
                raise ValueError(f"expected {count} embeddings, got "
                                 f"{len(items) if isinstance(items, list) else type(items).__name__}")
            ordered = sorted(items, key=lambda item: int(item.get("index", 0)))
            matrix = np.asarray([item["embedding"] for item in ordered], dtype=np.float64)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ModelUnavailable(
                f"embedding endpoint {self.url} sent a malformed answer (HTTP {response.status}): "
                f"{type(exc).__name__}: {exc}",
                hint="memhtml.embedurl must point at an OpenAI-compatible /v1/embeddings endpoint",
            ) from exc
        if matrix.ndim != 2 or matrix.shape[1] != self.dim:
            got = matrix.shape[1] if matrix.ndim == 2 else "ragged"
            raise ModelUnavailable(
                f"embedding endpoint {self.url} returned {got}-dimensional vectors for model {self.model}, "
                f"expected {self.dim}",
                hint=f"set `git config memhtml.embeddim {got}` (then `git memhtml index rebuild`)",
            )
        if not np.all(np.isfinite(matrix)):
            raise ModelUnavailable(f"embedding endpoint {self.url} returned non-finite numbers",
                                   hint="check the model served at memhtml.embedurl")
        return matrix.astype(np.float32)
