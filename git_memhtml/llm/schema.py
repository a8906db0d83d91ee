"""The wire schema of an answer: a pydantic model's JSON schema made acceptable to strict structured output
(docs/models.md §1.2).

OpenAI's ``json_schema`` with ``strict: true`` accepts a subset of JSON Schema, and the local servers (vLLM,
Ollama, llama.cpp), which compile the schema to a grammar, accept a smaller common core still. So
:func:`wire_schema` sends only that core:

- every ``$ref`` into ``$defs`` is inlined and ``$defs`` dropped (llama.cpp and Ollama resolve few references; a
  recursive model cannot be inlined and is refused);
- every object is closed (``additionalProperties: false``) and lists all its properties in ``required`` (strict
  mode's rule: an optional field becomes a required one that may be ``null`` when its type allows it);
- kept keywords: ``type``, ``properties``, ``required``, ``additionalProperties``, ``items``, ``enum``,
  ``anyOf``, ``description``; ``const`` becomes a one-value ``enum``, ``oneOf`` becomes ``anyOf`` and a one-item
  ``allOf`` is merged. Dropped: ``default``, ``title``, ``examples`` and the value constraints (``minLength``,
  ``maximum``, ``minItems``, ``pattern``, ``format`` …), which some servers reject: pydantic still checks every
  one of them when the answer is decoded, so a model that breaks one costs a contract violation, not a bad write;
- anything strict mode cannot say (an open mapping, ``prefixItems``, ``not``, ``if``/``then``) raises
  ``ValueError``: a schema we ship is wrong, which is a bug, not a model failure.

The same schema is the Anthropic tool's ``input_schema`` (which needs no strictness, but a closed object is the
better instruction).
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

KEPT = frozenset({"type", "properties", "required", "additionalProperties", "items", "enum", "anyOf",
                  "description"})
"""Keywords sent as they are (after their sub-schemas are transformed)."""

DROPPED = frozenset({"default", "title", "examples", "minLength", "maxLength", "pattern", "format", "minimum",
                     "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems",
                     "uniqueItems", "minProperties", "maxProperties", "discriminator", "readOnly", "writeOnly",
                     "deprecated", "$schema", "$comment"})
"""Keywords left out of the wire schema (decoding still enforces the value constraints)."""

REFUSED = frozenset({"prefixItems", "patternProperties", "not", "if", "then", "else", "dependentRequired",
                     "dependentSchemas", "unevaluatedProperties", "propertyNames", "contains"})
"""Keywords strict structured output has no equivalent for."""


WIRE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""What both dialects accept as a ``json_schema`` / tool name (OpenAI and Anthropic document the same rule)."""


def wire_name(model: type[BaseModel]) -> str:
    """The schema's name on the wire: its class name.

    Raises:
        ValueError: the name has characters or a length the providers refuse (a parametrised generic such as
            ``Answer[int]``); give the schema a plain class name.
    """
    name = model.__name__
    if not WIRE_NAME.match(name):
        raise ValueError(f"{name!r} cannot be a schema name on the wire (letters, digits, _ and -, at most 64)")
    return name


def wire_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The strict wire schema of ``model`` (by alias: the camelCase names the answer must use), a fresh copy of the
    one computed on the model's first use (pydantic's schema generation costs about a millisecond).

    Raises:
        ValueError: the model is recursive, not an object at its root, or uses a construct strict mode lacks
            (the message names the model and the construct).
    """
    return copy.deepcopy(_wire_schema(model))


@functools.cache
def _wire_schema(model: type[BaseModel]) -> dict[str, Any]:
    raw = model.model_json_schema(by_alias=True)
    defs: Mapping[str, Any] = raw.get("$defs", {})
    out = _node(raw, defs, model.__name__, ())
    if out.get("type") != "object":
        raise ValueError(f"{model.__name__}: the root of an answer schema must be an object")
    return out


def _node(node: Any, defs: Mapping[str, Any], name: str, stack: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(node, Mapping):
        raise ValueError(f"{name}: a schema node is not an object: {node!r}")
    ref = node.get("$ref")
    if ref is not None:
        target = str(ref).removeprefix("#/$defs/")
        if target == ref or target not in defs:
            raise ValueError(f"{name}: unresolvable reference {ref!r}")
        if target in stack:
            raise ValueError(f"{name}: {target} is recursive; strict structured output needs a finite schema")
        merged = {**defs[target], **{k: v for k, v in node.items() if k != "$ref"}}
        return _node(merged, defs, name, (*stack, target))
    all_of = node.get("allOf")
    if all_of is not None:
        if not isinstance(all_of, list) or len(all_of) != 1:
            raise ValueError(f"{name}: allOf with {len(all_of) if isinstance(all_of, list) else '?'} parts")
        merged = {**all_of[0], **{k: v for k, v in node.items() if k != "allOf"}}
        return _node(merged, defs, name, stack)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in REFUSED:
            raise ValueError(f"{name}: {key!r} has no strict-mode equivalent")
        if key in DROPPED or key == "$defs":
            continue
        if key == "const":
            out["enum"] = [value]
        elif key in ("anyOf", "oneOf"):
            out["anyOf"] = [_node(part, defs, name, stack) for part in value]
        elif key == "items":
            out["items"] = _node(value, defs, name, stack)
        elif key == "properties":
            out["properties"] = {prop: _node(sub, defs, name, stack) for prop, sub in value.items()}
        elif key in ("required", "additionalProperties"):
            continue  # set below for every object
        elif key in KEPT:
            out[key] = value
        else:
            raise ValueError(f"{name}: keyword {key!r} is not in the strict wire subset")
    is_object = out.get("type") == "object" or "properties" in out
    if is_object:
        extra = node.get("additionalProperties", False)
        if extra not in (False, None) and not out.get("properties"):
            raise ValueError(f"{name}: an open mapping (dict) cannot be a strict schema; use a list of pairs")
        out["type"] = "object"
        out.setdefault("properties", {})
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out
