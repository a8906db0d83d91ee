"""Scripted model answers, for tests and benches: the script, and an in-process client that plays it.

A *script* maps a schema name (the pydantic class a phase asks with, ``MergePartition``) to a *responder*: a callable
that gets the request (:class:`ScriptedRequest`) and returns a :class:`Reply`, or a sequence of replies played in
order (the last one repeats). A reply is one of:

- :class:`Answer`: the JSON object the model emits, with the usage to report;
- :class:`Malformed`: text that is not JSON;
- :class:`Status`: an HTTP status (429 with ``Retry-After``, 500 …), answered instead of a body;
- :class:`Stall`: no answer for ``seconds`` (a timeout for any shorter client timeout), then ``then``;
- :class:`Refusal`: the provider declines (a ``refusal`` stop reason / a ``content_filter`` finish).

:class:`ScriptedClient` plays a script in-process, a real implementation of
:class:`~git_memhtml.llm.contract.ModelClient` that decodes with the request's schema exactly as the wire clients
do; the loopback HTTP server that speaks both dialects plays the same scripts over the wire
(``git_memhtml.llm.scripted_server``). Neither is used outside tests and benches.

:func:`offered_keys` and :func:`blocks` read the member keys and texts back out of a batch prompt, so a responder
can answer with the keys it was given (or, hostile, with others).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from git_memhtml.errors import LlmContractViolation, ModelUnavailable, ProviderRefused
from git_memhtml.llm.contract import Dialect, ModelAnswer, ModelRequest, T, Usage


@dataclass(frozen=True)
class Answer:
    """The model emits ``value`` (a JSON object), spending ``input_tokens`` and ``output_tokens``."""

    value: Mapping[str, Any]
    input_tokens: int = 100
    output_tokens: int = 20


@dataclass(frozen=True)
class Malformed:
    """The model emits ``text``, which is not JSON."""

    text: str = '{"groups": [ {"memberKeys": ["m1", '


@dataclass(frozen=True)
class Status:
    """The server answers HTTP ``code`` (with ``Retry-After: retry_after`` seconds when given) and ``body``."""

    code: int
    retry_after: float | None = None
    body: str = '{"error": {"message": "scripted status"}}'


@dataclass(frozen=True)
class Stall:
    """The server waits ``seconds`` before it plays ``then``."""

    seconds: float
    then: Reply | None = None


@dataclass(frozen=True)
class Refusal:
    """The provider declines to answer."""

    message: str = "I can't help with that."


Reply = Answer | Malformed | Status | Stall | Refusal


@dataclass(frozen=True)
class ScriptedRequest:
    """One request as the script sees it.

    Attributes:
        dialect: which wire it came over (``openai`` for the in-process client).
        schema_name: the tool / ``json_schema`` name: the request schema's class name.
        system / prompt: the system prompt and the user message.
        index: how many requests for this schema came before this one (0 for the first).
        body: the decoded JSON request body (empty in-process).
    """

    dialect: Dialect
    schema_name: str
    system: str
    prompt: str
    index: int
    body: Mapping[str, Any] = field(default_factory=dict)


Responder = Callable[[ScriptedRequest], Reply]
Script = Mapping[str, Responder | Sequence[Reply]]


class Player:
    """Plays a script: keeps the per-schema request counts and the request log (thread-compatible via a lock the
    HTTP server holds)."""

    def __init__(self, script: Script) -> None:
        self.script = dict(script)
        self.requests: list[ScriptedRequest] = []
        self._counts: dict[str, int] = {}

    def request(self, dialect: Dialect, schema_name: str, system: str, prompt: str,
                body: Mapping[str, Any] | None = None) -> ScriptedRequest:
        """Log and return the next request for ``schema_name``."""
        index = self._counts.get(schema_name, 0)
        self._counts[schema_name] = index + 1
        req = ScriptedRequest(dialect, schema_name, system, prompt, index, body or {})
        self.requests.append(req)
        return req

    def reply(self, req: ScriptedRequest) -> Reply:
        """The scripted reply to ``req``; an unscripted schema is a 500 naming it."""
        entry = self.script.get(req.schema_name)
        if entry is None:
            return Status(500, body=f'{{"error": {{"message": "no script for {req.schema_name}"}}}}')
        if callable(entry):
            return entry(req)
        replies = list(entry)
        if not replies:
            return Status(500, body='{"error": {"message": "empty script"}}')
        return replies[min(req.index, len(replies) - 1)]


_BLOCK = re.compile(r"<<<begin (?P<label>[a-z]+)_(?P<key>[a-z]+\d+) (?P<fence>[0-9a-f]{12})>>>\n(?P<text>.*?)\n"
                    r"<<<end (?P=label)_(?P=key) (?P=fence)>>>", re.DOTALL)


def blocks(prompt: str) -> dict[str, str]:
    """``{key: text}`` of every member block of a batch prompt, in order."""
    return {m.group("key"): m.group("text") for m in _BLOCK.finditer(prompt)}


def offered_keys(prompt: str) -> list[str]:
    """The member keys a batch prompt offers, in order (``["m1", "m2", …]``; arc-synthesis offers ``a1…`` and
    ``e1…``)."""
    return list(blocks(prompt))


class ScriptedClient:
    """An in-process :class:`~git_memhtml.llm.contract.ModelClient` that plays a script.

    It sends an :class:`Answer` through JSON text and decodes it with the request's schema (``LlmContractViolation``
    when either fails: a NaN, a set or bytes cannot arrive over a wire), turns
    :class:`Malformed` into ``LlmContractViolation``, :class:`Refusal` and a 4xx :class:`Status` other than 429 into
    ``ProviderRefused``, 429/5xx into ``ModelUnavailable`` (no retries in-process), and a :class:`Stall` longer than
    ``timeout`` seconds into ``ModelUnavailable`` without waiting.
    """

    def __init__(self, script: Script, *, timeout: float = 30.0) -> None:
        self.player = Player(script)
        self.timeout = timeout

    @property
    def requests(self) -> list[ScriptedRequest]:
        """Every request played so far, in order."""
        return self.player.requests

    def describe(self) -> str:
        """``scripted (in-process)``."""
        return "scripted (in-process)"

    def call(self, request: ModelRequest[T]) -> ModelAnswer[T]:
        """Play the next reply for ``request.name`` and decode it like a wire client would."""
        started = time.monotonic()
        req = self.player.request("openai", request.name, request.system, request.prompt)
        reply: Reply | None = self.player.reply(req)
        while isinstance(reply, Stall):
            if reply.seconds >= self.timeout:
                raise ModelUnavailable(f"scripted model timed out after {self.timeout:g} s",
                                       hint="raise memhtml.llmtimeout")
            reply = reply.then
        if reply is None:
            raise ModelUnavailable("scripted model sent nothing", hint="check the script")
        if isinstance(reply, Refusal):
            raise ProviderRefused(f"the provider refused: {reply.message}", hint="rephrase the prompt override")
        if isinstance(reply, Status):
            if 400 <= reply.code < 500 and reply.code != 429:
                raise ProviderRefused(f"HTTP {reply.code}", hint="check memhtml.llmmodel and the key")
            raise ModelUnavailable(f"HTTP {reply.code}", hint="retry later")
        if isinstance(reply, Malformed):
            raise LlmContractViolation(f"answer is not JSON: {reply.text[:80]!r}", hint="check the model")
        try:  # through JSON text, as a wire client receives it: what JSON cannot carry cannot arrive
            decoded = json.loads(json.dumps(dict(reply.value), allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise LlmContractViolation(f"answer is not JSON: {exc}", hint="check the script") from exc
        try:
            value = request.schema.model_validate(decoded)
        except ValidationError as exc:
            raise LlmContractViolation(f"answer fails {request.name}: {exc.error_count()} errors",
                                       hint="check the model") from exc
        return ModelAnswer(value, Usage(reply.input_tokens, reply.output_tokens), 1, time.monotonic() - started)
