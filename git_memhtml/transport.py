"""The one HTTP choke point of the package: JSON over ``POST`` with bounded retries (docs/models.md §1.4).

Every outbound request (the ``openai`` embedder, the two model dialects) goes through :class:`Transport`, the only
module that imports httpx (tests/architecture/archrules.py ``CHOKE_POINTS``). It owns:

- a per-request timeout (seconds, connect and read alike);
- a bounded number of attempts (:attr:`RetryPolicy.max_attempts`, first try included);
- retries on :data:`RETRY_STATUSES` only (rate limit, transient server errors), waiting
  ``backoff * 2**(attempt-1)`` seconds plus a jitter of up to ``jitter`` times that, or exactly what the server's
  ``Retry-After`` says (delta seconds or an HTTP date), never more than :attr:`RetryPolicy.max_backoff`;
- transport failures (refused connection, DNS, timeout, reset) raised at once as :class:`TransportFailure`, a
  :class:`~git_memhtml.errors.ModelUnavailable` naming the URL, with the caller's hint. They are not retried: a
  server that is down stays down for the seconds a retry would wait, and a timeout already cost ``timeout``.

The sleep function, the random source and the wall clock (for ``Retry-After`` dates) are injected, so retries are
deterministic under test. What a status *means* (refusal, bad key, exhausted retries) is the caller's: the
transport hands back the last response with the attempts it took.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from types import TracebackType
from typing import Any

import httpx

from git_memhtml.errors import ModelUnavailable

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504, 529})
"""Statuses worth another attempt: rate limited (429), transient server failures (500, 502, 503, 504) and
Anthropic's *overloaded* (529). 501 and 505 say the server will never do it, so they are final."""

MAX_BODY_BYTES = 32 * 1024 * 1024
"""Largest answer body read (32 MiB; our decision): a model's answer or a batch of embeddings is far smaller, and a
server that sends more is refused rather than held in memory."""

PREVIEW_CHARS = 800
"""Longest excerpt of a response body quoted in an error message."""


@dataclass(frozen=True)
class RetryPolicy:
    """How hard one request tries.

    Attributes:
        max_attempts: attempts per request, the first included (>= 1).
        backoff: seconds before the second attempt; doubles for each further one.
        max_backoff: the longest single wait, ``Retry-After`` included (a server asking for an hour gets this).
        jitter: fraction of the computed delay added at random (``0`` waits exactly; ``0.25`` adds up to a quarter),
            so clients that failed together do not retry together. ``Retry-After`` is honoured without jitter.
    """

    max_attempts: int = 4
    backoff: float = 0.5
    max_backoff: float = 10.0
    jitter: float = 0.0

    def delay(self, attempt: int, retry_after: float | None, rand: Callable[[], float]) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based)."""
        if retry_after is not None:
            return min(self.max_backoff, retry_after)
        base = self.backoff * 2.0 ** (attempt - 1)
        return float(min(self.max_backoff, base + base * self.jitter * rand()))


@dataclass(frozen=True)
class HttpResult:
    """The last response of a request.

    Attributes:
        url: the URL posted to.
        status: its HTTP status.
        text: its body, decoded as text.
        attempts: how many attempts it took (1 without a retry).
        seconds: wall time of the whole request, waits included.
    """

    url: str
    status: int
    text: str
    attempts: int
    seconds: float

    @property
    def retried_out(self) -> bool:
        """A retryable status on the last allowed attempt: the retries are exhausted."""
        return self.status in RETRY_STATUSES

    def json(self) -> Any:
        """The body parsed as JSON; raises ``ValueError`` when it is not (nesting deeper than the decoder goes
        included: an answer must never crash its caller with ``RecursionError``)."""
        try:
            return json.loads(self.text)
        except RecursionError as exc:
            raise ValueError("JSON nested too deep") from exc

    def preview(self, secret: str | None = None) -> str:
        """The body on one line, at most :data:`PREVIEW_CHARS` characters, with ``secret`` (the API key) masked
        wherever the server echoed it."""
        return preview(self.text, secret)


def preview(text: str, secret: str | None = None, *, limit: int = PREVIEW_CHARS) -> str:
    """``text`` on one line, clipped to ``limit`` characters (``…`` marks the cut), ``secret`` replaced by
    ``***``; ``(empty body)`` for nothing."""
    flat = " ".join(text.split())
    if secret:
        flat = flat.replace(secret, "***")
    if not flat:
        return "(empty body)"
    return flat if len(flat) <= limit else flat[:limit] + "…"


class TransportFailure(ModelUnavailable):
    """The request never got a response: refused, unresolvable, reset or timed out.

    Attributes:
        timed_out: it was the timeout (else a connection failure).
        reason: ``timed out after 30 s`` or ``ConnectError: …``, without the URL.
    """

    def __init__(self, message: str, *, hint: str | None, timed_out: bool, reason: str) -> None:
        super().__init__(message, hint=hint)
        self.timed_out = timed_out
        self.reason = reason


@dataclass
class Transport:
    """A client session posting JSON; use as a context manager (one connection pool per ``with``).

    Attributes:
        label: what the URL is, for messages (``embedding endpoint``, ``model endpoint``).
        timeout: seconds per attempt.
        headers: sent with every request (``Content-Type: application/json`` is added).
        policy: retries.
        timeout_hint / unreachable_hint: the hint of a :class:`TransportFailure` (name the setting to check).
        sleep / rand / now: injected ``time.sleep``, ``random.random`` and ``time.time``.
        secret: the API key in :attr:`headers`, masked ``***`` in every failure message (an HTTP library may quote
            a header it refuses).
    """

    label: str
    timeout: float
    headers: Mapping[str, str] = field(default_factory=dict)
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    timeout_hint: str | None = None
    unreachable_hint: str | None = None
    sleep: Callable[[float], None] = time.sleep
    rand: Callable[[], float] = random.random
    now: Callable[[], float] = time.time
    secret: str | None = field(default=None, repr=False)
    _client: httpx.Client | None = field(default=None, init=False, repr=False)

    def __enter__(self) -> Transport:
        self._client = httpx.Client(timeout=self.timeout, headers={"Content-Type": "application/json",
                                                                   **self.headers})
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def post_json(self, url: str, payload: Any) -> HttpResult:
        """POST ``payload`` as JSON to ``url``, retrying per :attr:`policy`; return the last response.

        Raises:
            TransportFailure: no response at all (not retried).
        """
        if self._client is None:
            with self:
                return self.post_json(url, payload)
        started = time.monotonic()
        attempts = max(1, self.policy.max_attempts)
        for attempt in range(1, attempts + 1):
            try:
                response, text = self._exchange(self._client, url, json.dumps(payload).encode())
            except httpx.TimeoutException as exc:
                reason = f"timed out after {self.timeout:g} s"
                raise TransportFailure(f"{self.label} {url} {reason}", hint=self.timeout_hint, timed_out=True,
                                       reason=reason) from exc
            except httpx.HTTPError as exc:
                reason = preview(f"{type(exc).__name__}: {exc}", self.secret)
                raise TransportFailure(f"{self.label} {url} is unreachable: {reason}", hint=self.unreachable_hint,
                                       timed_out=False, reason=reason) from exc
            if response.status_code in RETRY_STATUSES and attempt < attempts:
                wait = self.policy.delay(attempt, retry_after(response.headers.get("retry-after"), self.now()),
                                         self.rand)
                self.sleep(wait)
                continue
            return HttpResult(url, response.status_code, text, attempt, time.monotonic() - started)
        raise AssertionError("unreachable")  # pragma: no cover - the loop always returns or raises

    def _exchange(self, client: httpx.Client, url: str, body: bytes) -> tuple[httpx.Response, str]:
        """One attempt: the response and its body text, read within :attr:`timeout` seconds in all and at most
        :data:`MAX_BODY_BYTES` bytes.

        httpx's timeout bounds each read, not the answer: a server dripping one byte a second would hold the call
        forever. So the body is streamed and the attempt ends at its deadline, or when the answer outgrows the cap.

        Raises:
            TransportFailure: the whole answer took longer than :attr:`timeout` (``timed_out``), or was too large.
            httpx.HTTPError: as the client raises it (the caller turns it into a ``TransportFailure``).
        """
        deadline = time.monotonic() + self.timeout
        with client.stream("POST", url, content=body) as response:
            data = bytearray()
            for chunk in response.iter_bytes():
                data += chunk
                if len(data) > MAX_BODY_BYTES:
                    reason = f"answered more than {MAX_BODY_BYTES} bytes"
                    raise TransportFailure(f"{self.label} {url} {reason}", hint=self.unreachable_hint,
                                           timed_out=False, reason=reason)
                if time.monotonic() > deadline:
                    reason = f"timed out after {self.timeout:g} s (the whole answer)"
                    raise TransportFailure(f"{self.label} {url} {reason}", hint=self.timeout_hint, timed_out=True,
                                           reason=reason)
            return response, bytes(data).decode(response.charset_encoding or "utf-8", "replace")


def retry_after(raw: str | None, now: float) -> float | None:
    """Seconds a ``Retry-After`` header asks for: delta seconds (``"2"``, ``"0.5"``) or an HTTP date (seconds from
    ``now``, a Unix time), never negative; ``None`` when absent or unreadable."""
    if raw is None or not raw.strip():
        return None
    text = raw.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        return max(0.0, when.timestamp() - now)
    return max(0.0, seconds) if seconds == seconds and seconds != float("inf") else None
