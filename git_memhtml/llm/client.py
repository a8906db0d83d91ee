"""The HTTP model client: one :class:`~git_memhtml.llm.contract.ModelClient` over both dialects (docs/models.md §1).

:class:`LlmSettings` is the resolved binding (``memhtml.llm*``, built by ``config.py:llm_settings`` with the key the
CLI read from the variable ``memhtml.llmkeyenv`` names); :class:`HttpModelClient` encodes each request in its
dialect, posts it through the package's one HTTP choke point (:mod:`git_memhtml.transport`: timeout, retries with
backoff, jitter and ``Retry-After``), maps the status, and decodes the answer.

Status mapping: 2xx is decoded; 400/401/403/404 (and any other 4xx but 429) is :class:`ProviderRefused`, with a hint
naming the setting to check; 429 and 5xx still failing after ``max_attempts`` attempts, and every transport failure,
is :class:`ModelUnavailable` naming the URL. The key is a header and nothing else: it is never in
:meth:`HttpModelClient.describe`, an error message (a server echoing it is masked), or a ``repr``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from git_memhtml.errors import ModelUnavailable, ProviderRefused
from git_memhtml.llm import anthropic, openai
from git_memhtml.llm.contract import Dialect, ModelAnswer, ModelRequest, T
from git_memhtml.llm.defaults import DEFAULT_MAX_ATTEMPTS, DEFAULT_TIMEOUT_SECONDS
from git_memhtml.transport import HttpResult, RetryPolicy, Transport

BACKOFF_SECONDS = 1.0
"""First retry delay, doubling (1, 2, 4 s), unless ``Retry-After`` says otherwise."""
MAX_BACKOFF_SECONDS = 30.0
"""Longest single wait between two attempts, ``Retry-After`` included (a provider's minute-long rate window is cut
to this and the attempt spent)."""
JITTER = 0.25
"""Up to a quarter of the computed backoff added at random."""

_DIALECTS = {"openai": openai, "anthropic": anthropic}


@dataclass(frozen=True)
class LlmSettings:
    """A resolved model binding.

    Attributes:
        dialect: ``openai`` or ``anthropic``.
        url: the base URL (or the full endpoint).
        model: the model id sent in every request.
        key: the API key read from the environment (``None``: no auth header). Not shown by ``repr``.
        key_env: the name of the variable it came from (hints only).
        timeout: seconds per HTTP attempt.
        max_attempts: attempts per call on 429/5xx (>= 1).
    """

    dialect: Dialect
    url: str
    model: str
    key: str | None = field(default=None, repr=False)
    key_env: str = "OPENAI_API_KEY"
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    max_attempts: int = DEFAULT_MAX_ATTEMPTS

    @property
    def endpoint(self) -> str:
        """The URL requests are posted to."""
        return str(_DIALECTS[self.dialect].endpoint(self.url))


@dataclass
class HttpModelClient:
    """A :class:`~git_memhtml.llm.contract.ModelClient` speaking ``settings.dialect`` over HTTP.

    ``sleep`` and ``rand`` (the backoff's wait and jitter) are injected for tests; ``backoff`` is the first retry
    delay in seconds. One connection pool serves every call of the client (opening an HTTP client costs more than a
    loopback call); :meth:`close` releases it, and so does leaving a ``with`` block.
    """

    settings: LlmSettings
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    rand: Callable[[], float] = field(default=random.random, repr=False)
    backoff: float = BACKOFF_SECONDS
    _transport: Transport | None = field(default=None, init=False, repr=False)

    def __enter__(self) -> HttpModelClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool (the next call opens a new one)."""
        if self._transport is not None:
            self._transport.__exit__(None, None, None)
            self._transport = None

    def _open(self) -> Transport:
        if self._transport is None:
            s = self.settings
            policy = RetryPolicy(max_attempts=max(1, s.max_attempts), backoff=self.backoff,
                                 max_backoff=MAX_BACKOFF_SECONDS, jitter=JITTER)
            self._transport = Transport(
                "model endpoint", s.timeout, _DIALECTS[s.dialect].headers(s.key), policy, sleep=self.sleep,
                rand=self.rand, timeout_hint=f"raise memhtml.llmtimeout (now {s.timeout:g} s) or check the server",
                unreachable_hint=(f"check that the server behind memhtml.llmurl ({s.url}) is running, or set "
                                  "`git config memhtml.llm off`"), secret=s.key).__enter__()
        return self._transport

    def describe(self) -> str:
        """``<dialect> <model> at <endpoint>`` (never the key)."""
        return f"{self.settings.dialect} {self.settings.model} at {self.settings.endpoint}"

    def call(self, request: ModelRequest[T]) -> ModelAnswer[T]:
        """Post ``request`` and decode the answer (see the module docstring for the errors)."""
        s = self.settings
        wire = _DIALECTS[s.dialect]
        started = time.monotonic()
        result = self._open().post_json(s.endpoint, wire.encode(request, s.model))
        if result.status >= 300:
            raise self._status_error(result, request)
        try:
            body: Any = result.json()
        except ValueError as exc:
            raise ModelUnavailable(f"model endpoint {s.endpoint} answered HTTP {result.status} with a body that is "
                                   f"not JSON: {result.preview(s.key)}",
                                   hint=f"memhtml.llmurl must point at an {s.dialect}-dialect server") from exc
        value, usage = wire.decode(body, request)
        return ModelAnswer(value, usage, result.attempts, time.monotonic() - started)

    def _status_error(self, result: HttpResult, request: ModelRequest[Any]) -> ModelUnavailable:
        s = self.settings
        status = result.status
        head = f"model endpoint {s.endpoint} answered HTTP {status} to {request.name}"
        body = result.preview(s.key)
        if 400 <= status < 500 and status != 429:
            if status in (401, 403):
                hint = (f"put a valid API key in ${s.key_env} (memhtml.llmkeyenv names the variable; keys never go "
                        "into git config)")
            elif status == 404:
                hint = f"check memhtml.llmurl ({s.url}) and memhtml.llmmodel ({s.model})"
            else:
                hint = (f"check memhtml.llmmodel ({s.model}): the server must support "
                        + ("a strict json_schema response_format" if s.dialect == "openai" else "forced tool use"))
            return ProviderRefused(f"{head}: {body}", hint=hint)
        if result.retried_out:
            return ModelUnavailable(f"{head} after {result.attempts} attempts: {body}",
                                    hint="the server is rate limited or failing; try again later, or lower "
                                         "--max-llm-calls")
        return ModelUnavailable(f"{head}: {body}", hint=f"check memhtml.llmurl ({s.url})")
