"""The apply op reads into a memory draft through ``HEAD_FIELDS`` (issue 9 item 4).

The op model (``OpLine``) and the table are held together: every op field is a row's key or a placement field, and
every row's key is an op field; an op giving every key fills every field of the draft.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from git_memhtml.document.draft import HEAD_FIELDS, HeadField, MemoryDraft
from git_memhtml.document.model import Link
from git_memhtml.store.ops import OpLine, WriteOp

PLACEMENT = {"op", "path", "workspace"}
"""Op fields that are not the draft: the operation and where the file goes (they stay on :class:`WriteOp`)."""

FULL_OP: dict[str, object] = {
    "op": "write", "title": "Full", "type": "task", "claim": " Task claim. ", "body": "First.\n\nSecond.",
    "tags": ["ops", " ops ", ""], "tag": "db", "entities": ["person:Priya"], "entity": "service:api",
    "aliases": ["al", "al"], "importance": 4, "confidence": 0.25, "valid_from": "2026-01-01",
    "valid_until": "2027-01-01", "links": [{"rel": "relates-to", "href": "/areas/x/y.html"}], "session_id": "s1",
    "prompt_id": "p1", "turn_uuid": "t1", "status": "doing", "due": "2026-12-01",
    "path": "areas/x/full.html", "workspace": "ws",
}
EXPECTED: dict[str, object] = {
    "title": "Full", "memory_type": "task", "claim": "Task claim.", "body": ("First.", "Second."),
    "article_html": None, "tags": ("ops", "db"), "entities": ("person:Priya", "service:api"), "aliases": ("al", "al"),
    "importance": 4, "confidence": 0.25, "valid_from": "2026-01-01", "valid_until": "2027-01-01",
    "links": (Link("relates_to", "/areas/x/y.html"),), "session_id": "s1", "prompt_id": "p1", "turn_uuid": "t1",
    "task_status": "doing", "due": "2026-12-01",
}
"""What :data:`FULL_OP` reads into: tags and entities merged with ``tag``/``entity``, stripped and deduplicated;
aliases kept as given; the op's ``status`` is the task status."""


def test_every_op_field_is_a_row_key_or_a_placement_field() -> None:
    keys = {key for spec in HEAD_FIELDS for key in (spec.op_key, spec.op_one) if key is not None}
    assert len(keys) == sum((spec.op_key is not None) + (spec.op_one is not None) for spec in HEAD_FIELDS)
    assert set(OpLine.model_fields) == keys | PLACEMENT


@pytest.mark.parametrize("spec", [pytest.param(s, id=s.attr) for s in HEAD_FIELDS if s.op_key is not None])
def test_each_op_key_fills_its_draft_field(spec: HeadField) -> None:
    op = WriteOp.from_json(FULL_OP)
    assert getattr(op.draft, spec.attr) == EXPECTED[spec.attr]


def test_fields_without_an_op_key_keep_their_defaults() -> None:
    op = WriteOp.from_json(FULL_OP)
    default = MemoryDraft(title="", memory_type="")
    for spec in HEAD_FIELDS:
        if spec.op_key is None:
            assert getattr(op.draft, spec.attr) == getattr(default, spec.attr), spec.attr
    assert (op.path, op.workspace) == ("areas/x/full.html", "ws")


@pytest.mark.parametrize(("raw", "claim", "body", "html"), [
    ({"body": "Prose first. Then more.\n\nAnother."}, "Prose first.", ("Then more.", "Another."), None),
    ({"claim": "Claim.", "body": "  "}, "Claim.", (), None),
    ({"article_html": "<p><mark>x</mark></p>", "claim": " "}, None, (), "<p><mark>x</mark></p>"),
])
def test_the_article_doors(raw: dict[str, object], claim: str | None, body: tuple[str, ...],
                           html: str | None) -> None:
    draft = WriteOp.from_json({"title": "T", "type": "semantic", **raw}).draft
    assert (draft.claim, draft.body, draft.article_html) == (claim, body, html)


def test_a_refused_op_raises_the_model_error() -> None:
    with pytest.raises(ValidationError) as caught:
        WriteOp.from_json({"title": "T", "type": "semantic", "body": "x.", "colour": "red"})
    assert caught.value.errors()[0]["loc"] == ("colour",)
