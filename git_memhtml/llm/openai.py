"""The ``openai`` dialect: chat completions with a strict ``json_schema`` response format (docs/models.md §1.1).

Spoken by OpenAI and by the OpenAI-compatible servers (vLLM, Ollama, llama.cpp's ``llama-server``). One request::

    POST <memhtml.llmurl>/chat/completions
    Authorization: Bearer <key>            (only when a key is set)
    {"model": …, "messages": [{"role": "system", …}?, {"role": "user", …}],
     "max_completion_tokens": 1..128000,
     "response_format": {"type": "json_schema",
                         "json_schema": {"name": <schema class>, "strict": true, "schema": <wire schema>}}}

``max_completion_tokens`` is OpenAI's current name (reasoning models refuse the older ``max_tokens``); a server that
does not know it ignores it and applies its own limit. ``reasoning_effort`` is never sent: OpenAI refuses it for
models that do not reason, and the local servers differ, so no request carries one.

The answer is ``choices[0].message.content``, parsed as JSON and validated. ``finish_reason: length`` is a
truncated answer (a contract violation); a ``message.refusal`` or ``finish_reason: content_filter`` is a
refusal. Usage is ``usage.prompt_tokens`` / ``usage.completion_tokens``.
"""

from __future__ import annotations

import json
from typing import Any

from git_memhtml.errors import LlmContractViolation, ProviderRefused
from git_memhtml.llm.answer import CONTRACT_HINT, count, parse_json, validate
from git_memhtml.llm.contract import MAX_TOKENS_CLAMP, ModelRequest, T, Usage
from git_memhtml.llm.defaults import OPENAI_KEY_ENV, OPENAI_URL
from git_memhtml.llm.schema import wire_name, wire_schema
from git_memhtml.transport import preview

DEFAULT_URL = OPENAI_URL
DEFAULT_KEY_ENV = OPENAI_KEY_ENV
"""The defaults of ``memhtml.llmurl`` / ``memhtml.llmkeyenv`` for this dialect (:mod:`git_memhtml.llm.defaults`)."""
PATH = "/chat/completions"
"""Appended to the base URL unless it already ends with it."""


def endpoint(url: str) -> str:
    """``http://host:11434/v1`` → ``http://host:11434/v1/chat/completions`` (kept when it already ends so)."""
    base = url.strip().rstrip("/")
    return base if base.endswith(PATH) else base + PATH


def headers(key: str | None) -> dict[str, str]:
    """``Authorization: Bearer <key>``, or nothing when no key is set (local servers need none)."""
    return {"Authorization": f"Bearer {key}"} if key else {}


def encode(request: ModelRequest[T], model: str) -> dict[str, Any]:
    """The request body of ``request`` for ``model``."""
    messages = [{"role": "system", "content": request.system}] if request.system else []
    messages.append({"role": "user", "content": request.prompt})
    return {
        "model": model,
        "messages": messages,
        "max_completion_tokens": max(1, min(MAX_TOKENS_CLAMP, request.max_tokens)),
        "response_format": {"type": "json_schema", "json_schema": {
            "name": wire_name(request.schema), "strict": True, "schema": wire_schema(request.schema)}},
    }


def decode(body: Any, request: ModelRequest[T]) -> tuple[T, Usage]:
    """The validated answer and usage of a 2xx ``body`` (parsed JSON).

    Raises:
        ProviderRefused: a refusal, or the content filter.
        LlmContractViolation: truncated, no content, content that is not JSON of the schema, or a reply that is
            not a chat completion at all.
    """
    if not isinstance(body, dict):
        raise LlmContractViolation(f"the reply to {request.name} is not a chat completion object",
                                   hint="memhtml.llmurl must point at an OpenAI-compatible /v1 endpoint")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise LlmContractViolation(f"the reply to {request.name} has no choices: {preview(json.dumps(body))}",
                                   hint="memhtml.llmurl must point at an OpenAI-compatible /v1 endpoint")
    choice = choices[0]
    message: dict[str, Any] = choice["message"] if isinstance(choice.get("message"), dict) else {}
    finish = choice.get("finish_reason")
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal.strip():
        raise ProviderRefused(f"the model refused {request.name}: {preview(refusal)}",
                              hint="a memory may trip the provider's policy; check the prompt override or the model "
                                   "(memhtml.llmmodel)")
    if finish == "content_filter":
        raise ProviderRefused(f"the provider's content filter stopped the answer to {request.name}",
                              hint="a memory may trip the provider's policy; check the model (memhtml.llmmodel)")
    content = message.get("content")
    if finish == "length":
        raise LlmContractViolation(f"the answer to {request.name} was cut short at max_completion_tokens "
                                   f"{request.max_tokens}: {preview(str(content or ''))}", hint=CONTRACT_HINT)
    if not isinstance(content, str) or not content.strip():
        raise LlmContractViolation(f"the answer to {request.name} has no content (finish_reason {finish!r})",
                                   hint=CONTRACT_HINT)
    value = validate(parse_json(content, request, where="message content"), request)
    usage: dict[str, Any] = body["usage"] if isinstance(body.get("usage"), dict) else {}
    return value, Usage(count(usage.get("prompt_tokens")), count(usage.get("completion_tokens")))
