"""The memory draft (issue 9 item 4): ``HEAD_FIELDS`` declares every head field once, and the renderer is driven by it.

Each test walks the table, so a new row is covered without a new test: its meta must be in the closed vocabulary,
it must reach the rendered file, and the render gate must name it when it holds a character HTML cannot carry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, replace
from typing import Any

import pytest

from git_memhtml.document.draft import HEAD_FIELDS, HeadField, MemoryDraft
from git_memhtml.document.model import META_ORDER, REPEATABLE_METAS, Link
from git_memhtml.document.parse import parse_memory
from git_memhtml.document.template import render_memory
from git_memhtml.errors import InvalidMemory

NOW = "2026-01-15T12:00:00Z"

SAMPLES: dict[str, object] = {
    "title": "Drafted", "claim": "The draft holds.", "body": ("A second paragraph.",), "author": "agent:test",
    "entities": ("person:Priya", "service:api"), "tags": ("ops", "db"), "aliases": ("dr", "dr"),
    "links": (Link("relates_to", "/areas/x/y.html"),), "valid_from": "2026-01-01", "valid_until": "2027-01-01",
    "due": "2026-12-01", "memory_type": "task", "status": "active", "confidence": 0.125, "importance": 3,
    "session_id": "s1", "prompt_id": "p1", "turn_uuid": "t1", "task_status": "doing",
}
"""A valid value of every draft field but ``article_html`` (the other door) and ``extra_metas``; a new row of
``HEAD_FIELDS`` needs one here."""



def rows(keep: Callable[[HeadField], bool] = lambda spec: True) -> list[Any]:
    """The ``HEAD_FIELDS`` rows ``keep`` selects, as parameters named by attribute."""
    return [pytest.param(spec, id=spec.attr) for spec in HEAD_FIELDS if keep(spec)]


def test_every_draft_attribute_has_exactly_one_row() -> None:
    attrs = [spec.attr for spec in HEAD_FIELDS]
    assert len(attrs) == len(set(attrs))
    assert set(attrs) == {f.name for f in fields(MemoryDraft)} - {"extra_metas"}


@pytest.mark.parametrize("spec", rows())
def test_a_meta_row_names_a_meta_of_the_closed_vocabulary(spec: HeadField) -> None:
    if spec.kind in ("scalar", "repeatable"):
        assert spec.meta in META_ORDER
        assert (spec.meta in REPEATABLE_METAS) == (spec.kind == "repeatable")
    else:
        assert spec.meta is None


def _full_draft() -> MemoryDraft:
    return MemoryDraft(**SAMPLES)  # type: ignore[arg-type]


@pytest.mark.parametrize("spec", rows(lambda spec: spec.kind in ("scalar", "repeatable")))
def test_each_meta_field_reaches_the_file(spec: HeadField) -> None:
    doc = parse_memory(render_memory(_full_draft(), now=NOW))
    value = SAMPLES[spec.attr]
    expected = [spec.text(value)] if spec.kind == "scalar" else list(value)  # type: ignore[call-overload]
    assert [v for name, v in doc.metas if name == spec.meta] == expected


def test_the_stamps_and_the_non_meta_fields_reach_the_file() -> None:
    text = render_memory(_full_draft(), now=NOW)
    doc = parse_memory(text)
    assert (doc.title, doc.gist, doc.links) == ("Drafted", "The draft holds.", SAMPLES["links"])
    assert "A second paragraph." in doc.body_text
    assert (doc.created, doc.updated, doc.content_hash_meta) == (NOW, NOW, doc.content_hash)


def test_extra_metas_follow_the_fields_of_their_name() -> None:
    draft = replace(_full_draft(), extra_metas=[("tag", "extra"), ("needs-revision", "true")])
    doc = parse_memory(render_memory(draft, now=NOW))
    assert doc.tags == ("ops", "db", "extra") and doc.needs_revision


def test_sequences_are_stored_as_tuples() -> None:
    draft = MemoryDraft(title="T", memory_type="semantic", claim="C.", body=["b"], tags=["t"], links=[])
    assert (draft.body, draft.tags, draft.links) == (("b",), ("t",), ())
    assert hash(draft)  # frozen and hashable: a value


def _with_escape(spec: HeadField) -> tuple[MemoryDraft, str]:
    """A draft whose field ``spec`` holds ESC (U+001B), and the label the gate must use for it."""
    base = MemoryDraft(title="T", memory_type="semantic", claim="C.")
    bad = "x\x1by"
    label = f"{spec.label} 1" if spec.kind == "body" else str(spec.label)
    if spec.kind == "article":
        return replace(base, claim=None, article_html=f"<p><mark>{bad}</mark></p>"), label
    if spec.kind == "links":
        return replace(base, links=[Link("relates_to", f"/areas/{bad}.html")]), label
    change: dict[str, Any] = {spec.attr: bad}
    if spec.kind in ("body", "repeatable"):
        change = {spec.attr: ("person:x\x1by" if spec.attr == "entities" else bad,)}
    return replace(base, **change), label


@pytest.mark.parametrize("spec", rows(lambda spec: spec.label is not None))
def test_the_gate_names_each_checked_field(spec: HeadField) -> None:
    draft, label = _with_escape(spec)
    with pytest.raises(InvalidMemory) as caught:
        render_memory(draft, now=NOW)
    assert caught.value.violations[0].startswith(f"{label} holds U+001B"), caught.value.violations


def test_the_gate_lists_bad_fields_in_the_order_it_always_has() -> None:
    esc = "\x1b"
    draft = MemoryDraft(title=f"t{esc}", memory_type="semantic", claim=f"c{esc}.", author=f"a{esc}", body=(f"b{esc}",),
                        entities=(f"person:{esc}",), tags=(f"t{esc}",), aliases=(f"a{esc}",),
                        links=(Link("relates_to", f"/areas/{esc}.html"),), valid_from=esc, valid_until=esc, due=esc,
                        extra_metas=[("tag", f"e{esc}")])
    with pytest.raises(InvalidMemory) as caught:
        render_memory(draft, now=NOW)
    labels = [v.split(" holds ")[0] for v in caught.value.violations]
    assert labels == ["title", "claim", "author", "body paragraph 1", "entity", "tag", "alias", "link href",
                      "valid-from", "valid-until", "due", "tag"]
    table = [("body paragraph 1" if s.kind == "body" else s.label) for s in HEAD_FIELDS if s.label is not None]
    assert [label for label in table if label in labels] == labels[:-1]  # the table's order; new rows may follow
