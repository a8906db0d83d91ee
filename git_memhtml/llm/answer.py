"""Decoding the model's answer, shared by both dialects (docs/models.md §1.3).

The answer must be a JSON object that validates against the request's schema with extra fields forbidden; anything
else is a :class:`~git_memhtml.errors.LlmContractViolation` whose message quotes at most
:data:`~git_memhtml.transport.PREVIEW_CHARS` characters of what came back.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from git_memhtml.errors import LlmContractViolation
from git_memhtml.llm.contract import ModelRequest, T
from git_memhtml.transport import preview

CONTRACT_HINT = ("the model at memhtml.llmurl did not follow the schema; use a model that supports structured output "
                 "(memhtml.llmmodel), or retry")
"""Hint of every contract violation."""


def parse_json(text: str, request: ModelRequest[T], *, where: str) -> Any:
    """``text`` parsed as JSON.

    Raises:
        LlmContractViolation: it is not JSON (``where`` says which part of the reply it was).
    """
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than the decoder goes
        raise LlmContractViolation(f"the answer to {request.name} is not JSON ({where}): {preview(text)}",
                                   hint=CONTRACT_HINT) from exc


def validate(value: Any, request: ModelRequest[T]) -> T:
    """``value`` validated against ``request.schema``.

    Raises:
        LlmContractViolation: not an object, or it fails the schema (the first three errors are named).
    """
    if not isinstance(value, dict):
        raise LlmContractViolation(f"the answer to {request.name} is a {type(value).__name__}, not an object: "
                                   f"{preview(json.dumps(value))}", hint=CONTRACT_HINT)
    try:
        return request.schema.model_validate(value)
    except ValidationError as exc:
        shown = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}"
                          for e in exc.errors()[:3])
        raise LlmContractViolation(f"the answer to {request.name} fails its schema ({exc.error_count()} errors: "
                                   f"{preview(shown)})", hint=CONTRACT_HINT) from exc


def count(value: Any) -> int:
    """A token count from a usage field: a non-negative whole number (``12`` or ``12.0``), else 0 (a server that
    reports nothing, or junk)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if value != value or value in (float("inf"), float("-inf")) or value < 0 or value != int(value):
        return 0
    return int(value)
