"""The ``anthropic`` dialect: the Messages API with one forced tool (docs/models.md §1.1).

One request::

    POST <memhtml.llmurl>/v1/messages
    x-api-key: <key>                       (only when a key is set)
    anthropic-version: 2023-06-01
    {"model": …, "max_tokens": 1..128000,
     "system": "…" | [{"type": "text", "text": "…", "cache_control": {"type": "ephemeral"}}],   (when non-empty)
     "messages": [{"role": "user", "content": "…"}],
     "tools": [{"name": <schema class>, "description"?: <schema docstring>, "input_schema": <wire schema>}],
     "tool_choice": {"type": "tool", "name": <schema class>}}

The system prompt is sent as one cache-eligible block when :attr:`ModelRequest.cache_system` (the batches of a
phase share it); the effort is not sent (it is not a field every model takes). The answer is the ``tool_use``
block *named* for the schema, wherever it stands among the content blocks; its ``input`` is validated.
``stop_reason: max_tokens`` is a truncated answer; ``stop_reason: refusal`` a refusal. Input tokens are
``usage.input_tokens`` plus the cache's ``cache_creation_input_tokens`` and ``cache_read_input_tokens`` (the
prompt tokens the model read, however they were billed); output tokens are ``usage.output_tokens``.
"""

from __future__ import annotations

import json
from typing import Any

from git_memhtml.errors import LlmContractViolation, ProviderRefused
from git_memhtml.llm.answer import CONTRACT_HINT, count, validate
from git_memhtml.llm.contract import MAX_TOKENS_CLAMP, ModelRequest, T, Usage
from git_memhtml.llm.defaults import ANTHROPIC_KEY_ENV, ANTHROPIC_URL
from git_memhtml.llm.schema import wire_name, wire_schema
from git_memhtml.transport import preview

DEFAULT_URL = ANTHROPIC_URL
DEFAULT_KEY_ENV = ANTHROPIC_KEY_ENV
"""The defaults of ``memhtml.llmurl`` / ``memhtml.llmkeyenv`` for this dialect (:mod:`git_memhtml.llm.defaults`)."""
API_VERSION = "2023-06-01"
"""The ``anthropic-version`` header: the Messages API version this module speaks."""
PATH = "/v1/messages"
"""Appended to the base URL (``/messages`` only when it already ends in ``/v1``; kept when it ends so)."""


def endpoint(url: str) -> str:
    """``https://api.anthropic.com`` → ``…/v1/messages``; ``…/v1`` → ``…/v1/messages``; a full endpoint is kept."""
    base = url.strip().rstrip("/")
    if base.endswith(PATH):
        return base
    return base + "/messages" if base.endswith("/v1") else base + PATH


def headers(key: str | None) -> dict[str, str]:
    """``anthropic-version``, and ``x-api-key`` when a key is set."""
    out = {"anthropic-version": API_VERSION}
    if key:
        out["x-api-key"] = key
    return out


def encode(request: ModelRequest[T], model: str) -> dict[str, Any]:
    """The request body of ``request`` for ``model``."""
    schema = wire_schema(request.schema)
    tool: dict[str, Any] = {"name": wire_name(request.schema)}
    description = schema.get("description")
    if isinstance(description, str) and description.strip():
        tool["description"] = description
    tool["input_schema"] = schema
    body: dict[str, Any] = {"model": model, "max_tokens": max(1, min(MAX_TOKENS_CLAMP, request.max_tokens))}
    if request.system:
        body["system"] = ([{"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}]
                          if request.cache_system else request.system)
    body["messages"] = [{"role": "user", "content": request.prompt}]
    body["tools"] = [tool]
    body["tool_choice"] = {"type": "tool", "name": request.name}
    return body


def decode(body: Any, request: ModelRequest[T]) -> tuple[T, Usage]:
    """The validated answer and usage of a 2xx ``body`` (parsed JSON).

    Raises:
        ProviderRefused: ``stop_reason: refusal``.
        LlmContractViolation: truncated, no ``tool_use`` block of that name, an input off the schema, or a reply
            that is not a message at all.
    """
    if not isinstance(body, dict) or not isinstance(body.get("content"), list):
        raise LlmContractViolation(f"the reply to {request.name} is not a Messages API message: "
                                   f"{preview(json.dumps(body))}",
                                   hint="memhtml.llmurl must point at an Anthropic Messages API server")
    stop = body.get("stop_reason")
    blocks = [b for b in body["content"] if isinstance(b, dict)]
    text = " ".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    if stop == "refusal":
        raise ProviderRefused(f"the model refused {request.name}: {preview(text) if text else 'stop_reason refusal'}",
                              hint="a memory may trip the provider's policy; check the prompt override or the model "
                                   "(memhtml.llmmodel)")
    if stop == "max_tokens":
        raise LlmContractViolation(f"the answer to {request.name} was cut short at max_tokens {request.max_tokens}",
                                   hint=CONTRACT_HINT)
    named = [b for b in blocks if b.get("type") == "tool_use" and b.get("name") == request.name]
    if not named:
        raise LlmContractViolation(f"the answer to {request.name} has no tool_use block named {request.name} "
                                   f"(stop_reason {stop!r}): {preview(text) if text else '(no text)'}",
                                   hint=CONTRACT_HINT)
    value = validate(named[0].get("input"), request)
    usage: dict[str, Any] = body["usage"] if isinstance(body.get("usage"), dict) else {}
    read = (count(usage.get("input_tokens")) + count(usage.get("cache_creation_input_tokens"))
            + count(usage.get("cache_read_input_tokens")))
    return value, Usage(read, count(usage.get("output_tokens")))
