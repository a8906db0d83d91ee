"""Whole-file validation (WHATWG parse errors + format rules) and the golden example files of docs/format.md §1 /
seeds."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.model import MEMORY_TYPES, Link
from git_memhtml.document.parse import parse_memory
from git_memhtml.document.serialize import serialize_memory
from git_memhtml.document.template import render_memory
from git_memhtml.document.validate import check_document
from git_memhtml.document.wellformed import MAX_PARSE_ERRORS, check_memory_bytes
from tests.document.memdoc_helpers import MINIMAL_ARTICLE, memory_file

GOLDEN = Path(__file__).parent / "golden"
EXAMPLES = GOLDEN / "examples"
EXPECTED = json.loads((EXAMPLES / "expected.json").read_text(encoding="utf-8"))
ALL_EXAMPLES = sorted(EXAMPLES.glob("*.html")) + [GOLDEN / "example_memory.html", GOLDEN / "example_task.html"]


@pytest.mark.parametrize("path", ALL_EXAMPLES, ids=[p.name for p in ALL_EXAMPLES])
def test_example_files_have_zero_findings(path: Path) -> None:
    result = check_memory_bytes(path.read_bytes())
    assert result.violations == () and result.warnings == ()
    assert parse_memory(path.read_bytes()).warnings == ()


def test_examples_cover_every_memory_type() -> None:
    assert {parse_memory(path.read_bytes()).memory_type for path in ALL_EXAMPLES} == set(MEMORY_TYPES)


@pytest.mark.parametrize("name", sorted(EXPECTED), ids=sorted(EXPECTED))
def test_example_extraction_is_golden(name: str) -> None:
    doc = parse_memory((EXAMPLES / name).read_bytes())
    want = EXPECTED[name]
    assert (doc.memory_type, doc.status, doc.task_status) == (want["type"], want["status"], want["task_status"])
    assert (doc.gist, doc.event_at, doc.content_hash) == (want["gist"], want["event_at"], want["content_hash"])
    assert [list(pair) for pair in ((link.rel, link.href) for link in doc.links)] == want["links"]
    assert [[f.name, f.value, f.numeric_value] for f in doc.facets] == want["facets"]
    assert [[c.text, c.href] for c in doc.citations] == want["citations"]
    assert (list(doc.entities), list(doc.concepts), list(doc.langs), list(doc.summaries)) == (
        want["entities"], want["concepts"], want["langs"], want["summaries"],
    )


def test_golden_hash_was_checked_by_hand() -> None:
    claim = "Ask the user before starting an index rebuild longer than a minute."
    assert EXPECTED["agent_insight.html"]["content_hash"] == "sha256:" + hashlib.sha256(claim.encode()).hexdigest()


@pytest.mark.parametrize("path", ALL_EXAMPLES, ids=[p.name for p in ALL_EXAMPLES])
def test_example_files_survive_parse_serialize_parse(path: Path) -> None:
    first = parse_memory(path.read_bytes())
    text = serialize_memory(title=first.title, metas=first.metas, links=first.links, article_html=first.article_html)
    second = parse_memory(text)
    assert second == first
    assert check_memory_bytes(text.encode()).violations == ()


def test_template_output_reads_back_identically_and_validates() -> None:
    text = render_memory(MemoryDraft(
        title="Deploy rollbacks",
        memory_type="procedural",
        claim="Rollbacks take two minutes.",
        body=["Measured on the ALB.", "```sh\nkubectl rollout undo deploy/x\n```"],
        confidence=0.5,
        entities=["service:api"],
        links=[Link("relates_to", "/areas/x.html")],
    ), now="2026-01-15T12:00:00Z")
    assert check_memory_bytes(text.encode()).violations == ()
    doc = parse_memory(text)
    again = serialize_memory(title=doc.title, metas=doc.metas, links=doc.links, article_html=doc.article_html)
    assert again == text
    assert doc.langs == ("sh",) and doc.gist == "Rollbacks take two minutes."


@pytest.mark.parametrize(
    ("html", "code"),
    [
        (memory_file().replace("<!doctype html>\n", ""), "expected-doctype-but-got-start-tag"),
        (memory_file(MINIMAL_ARTICLE + "</span>"), "unexpected-end-tag"),
        (memory_file("<p><mark>Claim.</mark> <em>open</p>"), "end-tag-too-early"),
        (memory_file('<p><mark>Claim.</mark> <a href="/x" href="/y">y</a></p>'), "duplicate-attribute"),
        (memory_file("<p><mark>Claim &notanentity; x</mark></p>").replace("&notanentity;", "&#0;"),
         "illegal-codepoint-for-numeric-entity"),
    ],
)
def test_whatwg_parse_errors_are_violations(html: str, code: str) -> None:
    result = check_memory_bytes(html.encode())
    parse_errors = [v for v in result.violations if "HTML parse error" in v]
    assert any(v.endswith(f"[{code}]") for v in parse_errors), result.violations
    assert all(v.startswith("line ") and "\n" not in v for v in parse_errors)
    parse_memory(html)  # the format rules alone accept it: the parse error is validate's own check


def test_parse_errors_are_capped_with_a_summary_line() -> None:
    html = memory_file(MINIMAL_ARTICLE + "</span>" * (MAX_PARSE_ERRORS + 5))
    parse_errors = [v for v in check_memory_bytes(html.encode()).violations if "HTML parse error" in v]
    assert len(parse_errors) == MAX_PARSE_ERRORS + 1
    assert parse_errors[-1] == "5 more HTML parse errors not shown"


def test_parse_error_text_stays_one_line() -> None:
    html = memory_file(MINIMAL_ARTICLE + "</sp\nan>")
    assert all("\n" not in v for v in check_memory_bytes(html.encode()).violations)


def test_format_violations_and_warnings_come_with_parse_errors() -> None:
    html = memory_file("<p>lead</p><p><mark>late</mark><b>x</b></p>").replace("<!doctype html>\n", "")
    result = check_memory_bytes(html.encode())
    assert any("expected-doctype" in v for v in result.violations)
    assert any("not in the first <p>" in v for v in result.violations)
    assert result.warnings == ("<b> is not in the closed element vocabulary",)


@pytest.mark.parametrize(
    ("data", "reason"),
    [(b"", "empty file"), (b"\xff\xfe<p>", "not UTF-8 (invalid byte at offset 0)")],
)
def test_undecodable_input_is_one_violation(data: bytes, reason: str) -> None:
    assert check_memory_bytes(data).violations == (reason,)


TEXT = st.text(alphabet="ab <>&\"'\u00a0\n\t", min_size=1, max_size=12)
BLOCK = st.one_of(
    st.builds(lambda t: f"<p>{t}</p>", TEXT),
    st.builds(lambda t: f"<pre>\n{t}</pre>", TEXT),
    st.builds(lambda t, u: f"<ul><li>{t}</li><li><em>{u}</em></li></ul>", TEXT, TEXT),
    st.builds(lambda t: f'<dl><dt>k</dt><dd><data value="2">{t}</data></dd></dl>', TEXT),
    st.builds(lambda t: f"<details><summary>s</summary>{t}</details>", TEXT),
)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@settings(max_examples=50, deadline=None, database=None)
@given(claim=st.text(alphabet="abc xyz.", min_size=1, max_size=20).filter(str.strip),
       blocks=st.lists(BLOCK, max_size=4))
def test_parse_serialize_parse_is_stable_on_generated_articles(claim: str, blocks: list[str]) -> None:
    article = f"<p><mark>{_escape(claim)}</mark></p>" + "".join(blocks)
    html = memory_file(article)
    assume(check_document(html)[0] == [])  # raw "<" in the text can open an element the allowlist refuses
    first = parse_memory(html)
    text = serialize_memory(title=first.title, metas=first.metas, links=first.links, article_html=first.article_html)
    second = parse_memory(text)
    assert second == first
    again = serialize_memory(
        title=second.title, metas=second.metas, links=second.links, article_html=second.article_html
    )
    assert again == text


def test_facet_numeric_value_is_the_first_finite_data_value() -> None:
    html = memory_file(
        MINIMAL_ARTICLE + '<dl><dt>n</dt><dd><data value="Infinity">a</data> <data value="x1">b</data> '
        '<data value="-Infinity">c</data> <data value="0x10">d</data></dd></dl>'
    )
    (facet,) = parse_memory(html).facets
    assert (facet.name, facet.value, facet.numeric_value) == ("n", "a b c d", 16.0)
