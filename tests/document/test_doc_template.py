"""Authoring doors (docs/format.md §1.9): prose rendering, fences, split_prose, render_memory and its gate."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.hash import content_hash
from git_memhtml.document.model import Link
from git_memhtml.document.parse import parse_memory
from git_memhtml.document.serialize import canonical_article_html
from git_memhtml.document.template import prose_markup, render_memory, split_prose
from git_memhtml.errors import InvalidMemory

NOW = "2026-01-15T12:00:00Z"


def _render_article(claim: str, body: Sequence[str]) -> str:
    return canonical_article_html(prose_markup(claim, body))


def test_claim_and_first_body_share_the_first_paragraph() -> None:
    assert _render_article("Retry <3> times.", ["Then stop & wait.", "Second."]) == (
        "<p><mark>Retry &lt;3&gt; times.</mark> Then stop &amp; wait.</p>\n<p>Second.</p>"
    )


def test_leading_fence_stands_apart_and_lang_is_lowercased() -> None:
    out = _render_article("Claim.", ["```Python extra\nif x:\n    y = '<b>'\n```", "", "After."])
    assert out == (
        "<p><mark>Claim.</mark></p>\n"
        '<figure><pre><code data-lang="python">if x:\n    y = \'&lt;b&gt;\'</code></pre></figure>\n'
        "<p>After.</p>"
    )


def test_unlabelled_longer_fence_gets_no_language() -> None:
    out = _render_article("Claim.", ["Body.", "````\nx\n`````"])
    assert out.endswith("<figure><pre><code>x</code></pre></figure>")


def test_unclosed_or_mixed_fences_are_text() -> None:
    assert _render_article("C.", ["B.", "```sh\nrm -rf /"]) == "<p><mark>C.</mark> B.</p>\n<p>```sh\nrm -rf /</p>"
    assert "<figure>" not in _render_article("C.", ["B.", "see\n```\nx\n```"])


def test_split_prose() -> None:
    text = "Deploys take 2.5 minutes! Usually.\n\nSecond para\nstill.\n\n```sh\na\n\nb\n```\n\n\nLast?"
    claim, body = split_prose(text)
    assert claim == "Deploys take 2.5 minutes!"
    assert body == ["Usually.", "Second para\nstill.", "```sh\na\n\nb\n```", "Last?"]
    assert split_prose("  no terminator here ") == ("no terminator here", [])
    assert split_prose("v1.2 is out. Yes") == ("v1.2 is out.", ["Yes"])


def test_render_memory_round_trip() -> None:
    text = render_memory(MemoryDraft(
        title="  Deploy \n rollbacks ",
        memory_type="procedural",
        claim="Rollbacks take two minutes.",
        body=["Measured on the ALB."],
        confidence=0.125,
        importance=7,
        author="agent:test",
        entities=["service:api", ""],
        tags=["oncall"],
        aliases=["rb"],
        links=[Link("relates_to", "/areas/x.html")],
        session_id="s1",
        valid_from="2026-01-01",
    ), now=NOW)
    doc = parse_memory(text)
    assert doc.title == "Deploy rollbacks"
    assert doc.gist == "Rollbacks take two minutes."
    assert (doc.created, doc.updated, doc.status) == (NOW, NOW, "active")
    assert doc.meta("confidence") == "0.13"  # toFixed(2) rounds the exact tie up
    assert (doc.importance, doc.author, doc.session_id, doc.valid_from) == (7, "agent:test", "s1", "2026-01-01")
    assert (doc.entities, doc.tags, doc.aliases) == (("service:api",), ("oncall",), ("rb",))
    assert doc.links == (Link("relates_to", "/areas/x.html"),)
    assert doc.content_hash_meta == doc.content_hash == content_hash(text)
    assert [name for name, _ in doc.metas] == [
        "type", "status", "created", "updated", "confidence", "importance", "content-hash", "author", "session",
        "valid-from", "entity", "tag", "alias",
    ]


def test_task_defaults_to_todo() -> None:
    doc = parse_memory(render_memory(MemoryDraft(title="T", memory_type="task", claim="Do it.", due="2026-02-01"),
                                     now=NOW))
    assert (doc.task_status, doc.due) == ("todo", "2026-02-01")


def test_article_html_door_is_canonicalised() -> None:
    text = render_memory(MemoryDraft(
        title="T", memory_type="episodic",
        article_html='<p><mark>Met <time datetime="2026-01-02">Friday</time>.</mark></p>\n  <p title=2 id=1>x',
    ), now=NOW)
    doc = parse_memory(text)
    assert doc.event_at == "2026-01-02"
    assert doc.article_html.endswith('<p id="1" title="2">x</p>')


@pytest.mark.parametrize(
    ("claim", "article_html"),
    [(None, None), ("  ", ""), ("Claim.", "<p><mark>x</mark></p>")],
)
def test_exactly_one_door(claim: str | None, article_html: str | None) -> None:
    with pytest.raises(InvalidMemory) as caught:
        render_memory(MemoryDraft(title="T", memory_type="semantic", claim=claim, article_html=article_html), now=NOW)
    assert "exactly one of" in caught.value.violations[0] and caught.value.hint


@pytest.mark.parametrize(
    "kwargs",
    [
        {"memory_type": "rumour", "claim": "x."},
        {"memory_type": "semantic", "claim": "x.", "task_status": "todo"},
        {"memory_type": "semantic", "article_html": "<p>lead</p><p><mark>late</mark></p>"},
        {"memory_type": "semantic", "claim": "x.", "links": [Link("supports", "x.html")]},
        {"memory_type": "semantic", "claim": "x.", "due": "tomorrow"},
        {"memory_type": "semantic", "claim": "x.", "extra_metas": [("type", "episodic")]},
    ],
)
def test_render_gate_refuses_invalid_output(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidMemory) as caught:
        render_memory(MemoryDraft(title="T", **kwargs), now=NOW)  # type: ignore[arg-type]
    assert caught.value.violations and caught.value.message.startswith("rendered memory is invalid")


def test_render_gate_refuses_blank_title() -> None:
    with pytest.raises(InvalidMemory, match="empty <title>"):
        render_memory(MemoryDraft(title=" \n ", memory_type="semantic", claim="x."), now=NOW)
