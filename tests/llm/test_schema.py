"""The strict wire schema: every object closed with all its properties required, references inlined, defaults and
value constraints dropped (decoding still enforces them), constructs strict mode lacks refused."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import pytest
from pydantic import Field

from git_memhtml.llm.contract import AnswerSchema
from git_memhtml.llm.schema import wire_schema


class Member(AnswerSchema):
    """One member of a group."""

    member_key: str = Field(min_length=1, max_length=8, pattern=r"^m\d+$")
    weight: float = Field(0.5, ge=0.0, le=1.0)


class Group(AnswerSchema):
    members: list[Member] = Field(min_length=1)
    label: str | None = None
    kind: Literal["same", "different"] = "same"
    fixed: Literal["x"] = "x"


class Partition(AnswerSchema):
    """A partition of the offered members."""

    groups: list[Group]
    best: Member | None = None
    note: str = ""


def objects(node: Any) -> Iterator[dict[str, Any]]:
    """Every object schema inside ``node``."""
    if isinstance(node, dict):
        if node.get("type") == "object":
            yield node
        for value in node.values():
            yield from objects(value)
    elif isinstance(node, list):
        for value in node:
            yield from objects(value)


def keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(node) | {k for v in node.values() for k in keys(v)}
    if isinstance(node, list):
        return {k for v in node for k in keys(v)}
    return set()


def test_every_object_is_closed_and_requires_every_property() -> None:
    schema = wire_schema(Partition)
    found = list(objects(schema))
    assert len(found) == 4  # Partition, Group, Member (in groups), Member (in best)
    for obj in found:
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])
    assert schema["required"] == ["groups", "best", "note"]  # optional fields become required on the wire
    assert schema["description"] == "A partition of the offered members."


def test_references_inlined_and_defaults_titles_constraints_dropped() -> None:
    schema = wire_schema(Partition)
    present = keys(schema)
    assert not present & {"$defs", "$ref", "default", "title", "minLength", "maxLength", "pattern", "minimum",
                          "maximum", "minItems", "allOf", "oneOf", "const"}
    group = schema["properties"]["groups"]["items"]
    assert group["properties"]["kind"] == {"enum": ["same", "different"], "type": "string"}
    assert group["properties"]["fixed"]["enum"] == ["x"]
    assert group["properties"]["label"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    best = schema["properties"]["best"]["anyOf"]
    assert best[0]["properties"]["memberKey"] == {"type": "string"} and best[1] == {"type": "null"}


def test_camel_case_wire_names_decode_back() -> None:
    schema = wire_schema(Member)
    assert list(schema["properties"]) == ["memberKey", "weight"]
    assert Member.model_validate({"memberKey": "m1", "weight": 0.2}).member_key == "m1"


class Node(AnswerSchema):
    children: list[Node]


class Mapping_(AnswerSchema):
    scores: dict[str, float]


class Pair(AnswerSchema):
    pair: tuple[str, int]


@pytest.mark.parametrize(("model", "needle"), [(Node, "recursive"), (Mapping_, "open mapping"),
                                               (Pair, "prefixItems")])
def test_what_strict_mode_cannot_say_is_refused(model: type[AnswerSchema], needle: str) -> None:
    with pytest.raises(ValueError, match=needle) as err:
        wire_schema(model)
    assert model.__name__ in str(err.value)
