"""Byte layout of a serialized memory (docs/format.md §1.1) and parse → serialize → parse stability."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memhtml.document.hash import content_hash
from git_memhtml.document.model import Link
from git_memhtml.document.parse import parse_memory
from git_memhtml.document.serialize import canonical_article_html, serialize_memory
from git_memhtml.errors import InvalidMemory
from tests.document.memdoc_helpers import memory_file

GOLDEN = Path(__file__).parent / "golden"


def test_exact_bytes() -> None:
    text = serialize_memory(
        title='Tom & "Jerry" <x>',
        metas=[
            ("tag", "b"),
            ("updated", "2026-01-02T00:00:00Z"),
            ("type", "semantic"),
            ("tag", "a"),
            ("confidence", "0.50"),
            ("status", "active"),
            ("created", "2026-01-01T00:00:00Z"),
            ("entity", 'person:A "B"'),
        ],
        links=[Link("supersedes", "/areas/old.html"), Link("about_person", "/resources/people/a.html")],
        article_html="\n  <p  id=z class2=y><mark>Claim\u00a0one.</mark> 1 < 2</p>  \n",
    )
    assert text == (
        "<!doctype html>\n"
        '<html lang="en">\n'
        "<head>\n"
        '<meta charset="utf-8">\n'
        "<title>Tom &amp; \"Jerry\" &lt;x&gt;</title>\n"
        '<meta name="memhtml-type" content="semantic">\n'
        '<meta name="memhtml-status" content="active">\n'
        '<meta name="memhtml-created" content="2026-01-01T00:00:00Z">\n'
        '<meta name="memhtml-updated" content="2026-01-02T00:00:00Z">\n'
        '<meta name="memhtml-confidence" content="0.50">\n'
        '<meta name="memhtml-entity" content="person:A &quot;B&quot;">\n'
        '<meta name="memhtml-tag" content="b">\n'
        '<meta name="memhtml-tag" content="a">\n'
        '<link rel="memhtml-supersedes" href="/areas/old.html">\n'
        '<link rel="memhtml-about-person" href="/resources/people/a.html">\n'
        "</head>\n"
        "<body>\n"
        "<article>\n"
        '<p class2="y" id="z"><mark>Claim&nbsp;one.</mark> 1 &lt; 2</p>\n'
        "</article>\n"
        "</body>\n"
        "</html>\n"
    )


def test_golden_canonical_article() -> None:
    messy = (GOLDEN / "messy_article.html").read_text(encoding="utf-8")
    expected = (GOLDEN / "messy_article.canonical.html").read_text(encoding="utf-8")
    assert canonical_article_html(messy) + "\n" == expected
    assert canonical_article_html(expected) + "\n" == expected  # fixed point


def test_pre_leading_newline_survives_repeated_round_trips() -> None:
    html = memory_file("<p><mark>A claim.</mark></p><pre>\n\nindented start</pre>")
    first = content_hash(html)
    for _ in range(3):
        doc = parse_memory(html)
        html = serialize_memory(title=doc.title, metas=doc.metas, links=doc.links, article_html=doc.article_html)
        assert content_hash(html) == first
    assert "<pre>\n\nindented start</pre>" in html


@pytest.mark.parametrize("name", ["example_memory.html", "example_task.html"])
def test_parse_serialize_parse_is_stable(name: str) -> None:
    original = (GOLDEN / name).read_text(encoding="utf-8")
    doc = parse_memory(original)
    once = serialize_memory(title=doc.title, metas=doc.metas, links=doc.links, article_html=doc.article_html)
    again_doc = parse_memory(once)
    twice = serialize_memory(
        title=again_doc.title, metas=again_doc.metas, links=again_doc.links, article_html=again_doc.article_html
    )
    assert once == twice
    assert again_doc == doc
    assert content_hash(once) == content_hash(original)


def test_golden_files_are_already_canonical_in_the_head() -> None:
    original = (GOLDEN / "example_memory.html").read_text(encoding="utf-8")
    doc = parse_memory(original)
    out = serialize_memory(title=doc.title, metas=doc.metas, links=doc.links, article_html=doc.article_html)
    assert out.split("<article>")[0] == original.split("<article>")[0]


def test_unknown_meta_or_rel_is_refused() -> None:
    with pytest.raises(InvalidMemory):
        serialize_memory(title="t", metas=[("colour", "red")], links=[], article_html="<p><mark>x</mark></p>")
    with pytest.raises(InvalidMemory):
        serialize_memory(title="t", metas=[], links=[Link("likes", "/a.html")], article_html="<p>x</p>")
