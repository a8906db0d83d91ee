"""Head editors (docs/format.md §1.10): line splices only; article bytes and content hash never move."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from git_memhtml.document.editors import (
    add_link,
    add_meta,
    get_links,
    get_meta,
    get_metas,
    remove_link,
    remove_meta,
    set_meta,
)
from git_memhtml.document.hash import content_hash
from git_memhtml.document.model import META_ORDER, Link
from git_memhtml.document.parse import parse_memory
from tests.document.memdoc_helpers import article_of, memory_file

EXAMPLE = (Path(__file__).parent / "golden" / "example_memory.html").read_text(encoding="utf-8")


def _lines_changed(before: str, after: str) -> list[str]:
    old, new = before.splitlines(), after.splitlines()
    return [line for line in new if line not in old] + [line for line in old if line not in new]


def test_set_meta_replaces_in_place() -> None:
    edited = set_meta(EXAMPLE, "confidence", "0.40")
    assert _lines_changed(EXAMPLE, edited) == [
        '<meta name="memhtml-confidence" content="0.40">',
        '<meta name="memhtml-confidence" content="0.85">',
    ]
    assert edited.splitlines().index('<meta name="memhtml-confidence" content="0.40">') == 9


def test_set_meta_inserts_at_meta_order_position() -> None:
    edited = set_meta(EXAMPLE, "reprieves", "1")
    lines = edited.splitlines()
    at = lines.index('<meta name="memhtml-reprieves" content="1">')
    assert lines[at - 1].startswith('<meta name="memhtml-author"')
    assert lines[at + 1].startswith('<meta name="memhtml-entity"')
    assert len(lines) == len(EXAMPLE.splitlines()) + 1


def test_set_meta_every_name_changes_head_and_keeps_hash() -> None:
    baseline = content_hash(EXAMPLE)
    for name in META_ORDER:
        edited = set_meta(EXAMPLE, name, "probe-value")
        assert f'name="memhtml-{name}" content="probe-value"' in edited
        assert content_hash(edited) == baseline
        assert article_of(edited) == article_of(EXAMPLE)


def test_escaping_keeps_one_line() -> None:
    edited = set_meta(EXAMPLE, "author", 'human:A "B" & C\nD')
    assert '<meta name="memhtml-author" content="human:A &quot;B&quot; &amp; C&#10;D">' in edited
    assert get_meta(edited, "author") == 'human:A "B" & C\nD'
    assert parse_memory(edited).author == 'human:A "B" & C\nD'


def test_unknown_names_are_noops() -> None:
    assert set_meta(EXAMPLE, "colour", "red") == EXAMPLE
    assert add_meta(EXAMPLE, "colour", "red") == EXAMPLE
    assert add_link(EXAMPLE, "likes", "/a.html") == EXAMPLE


def test_add_meta_appends_after_last_sibling_and_is_idempotent() -> None:
    edited = add_meta(EXAMPLE, "entity", "team:sre")
    lines = edited.splitlines()
    at = lines.index('<meta name="memhtml-entity" content="team:sre">')
    assert lines[at - 1] == '<meta name="memhtml-entity" content="tool:kubectl">'
    assert add_meta(edited, "entity", "team:sre") == edited
    assert get_metas(edited, "entity") == ["service:checkout-api", "tool:kubectl", "team:sre"]


def test_add_meta_on_scalar_sets_it() -> None:
    assert add_meta(EXAMPLE, "importance", "7") == EXAMPLE
    assert get_metas(add_meta(EXAMPLE, "importance", "3"), "importance") == ["3"]


def test_remove_meta_deletes_whole_lines() -> None:
    assert get_metas(remove_meta(EXAMPLE, "entity"), "entity") == []
    one = remove_meta(EXAMPLE, "entity", "tool:kubectl")
    assert get_metas(one, "entity") == ["service:checkout-api"]
    assert len(one.splitlines()) == len(EXAMPLE.splitlines()) - 1
    assert remove_meta(EXAMPLE, "valid-until") == EXAMPLE


def test_links() -> None:
    edited = add_link(EXAMPLE, "contradicts", "/areas/oncall/other.html")
    lines = edited.splitlines()
    assert lines[lines.index('<link rel="memhtml-contradicts" href="/areas/oncall/other.html">') + 1] == "</head>"
    assert add_link(edited, "contradicts", "/areas/oncall/other.html") == edited
    assert get_links(edited)[-1] == Link("contradicts", "/areas/oncall/other.html")
    assert remove_link(edited, "contradicts", "/areas/oncall/other.html") == EXAMPLE
    assert get_links(remove_link(EXAMPLE, "relates_to")) == [Link("about_person", "/resources/people/ada.html")]


def test_first_link_goes_after_last_meta() -> None:
    html = memory_file()
    edited = add_link(html, "supports", "/areas/a.html")
    lines = edited.splitlines()
    at = lines.index('<link rel="memhtml-supports" href="/areas/a.html">')
    assert lines[at - 1].startswith('<meta name="memhtml-updated"') and lines[at + 1] == "</head>"


def test_single_line_head_never_touches_article() -> None:
    html = (
        '<!doctype html><html><head><title>t</title><meta name="memhtml-type" content="semantic">'
        '<meta name="memhtml-status" content="active"><meta name="memhtml-created" content="c">'
        '<meta name="memhtml-updated" content="u"></head><body><article><p><mark>x</mark> y</p></article></body></html>'
    )
    tail = html[html.index("<body>") :]
    for edited in (
        remove_meta(html, "status"),
        set_meta(html, "confidence", "0.5"),
        add_meta(html, "tag", "a"),
        add_link(html, "supports", "/a.html"),
    ):
        assert edited.endswith(tail)
        assert content_hash(edited) == content_hash(html)
    assert get_meta(remove_meta(html, "status"), "status") is None
    assert parse_memory(set_meta(html, "confidence", "0.5")).confidence == 0.5


def test_metas_in_comments_and_body_are_ignored() -> None:
    html = memory_file(
        '<p><mark>x</mark></p><meta name="memhtml-tag" content="body">',
        extra_head='<!-- <meta name="memhtml-tag" content="comment"> -->\n',
    )
    assert get_metas(html, "tag") == []


OPS = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(META_ORDER), st.text(max_size=12)),
    st.tuples(st.just("add"), st.sampled_from(["entity", "tag", "alias"]), st.text(max_size=12)),
    st.tuples(st.just("remove"), st.sampled_from(META_ORDER), st.none()),
    st.tuples(
        st.just("link"),
        st.sampled_from(["supports", "relates_to", "blocks"]),
        st.sampled_from(["/a.html", "/b/c.html"]),
    ),
    st.tuples(st.just("unlink"), st.sampled_from(["supports", "relates_to"]), st.none()),
)


@settings(max_examples=60, deadline=None, database=None)
@given(ops=st.lists(OPS, max_size=12))
def test_random_edit_sequences_keep_hash_and_article_bytes(ops: list[tuple[str, str, str | None]]) -> None:
    html = EXAMPLE
    for op, name, value in ops:
        if op == "set":
            html = set_meta(html, name, value or "")
        elif op == "add":
            html = add_meta(html, name, value or "")
        elif op == "remove":
            html = remove_meta(html, name)
        elif op == "link":
            html = add_link(html, name, value or "/x.html")
        else:
            html = remove_link(html, name)
    assert article_of(html) == article_of(EXAMPLE)
    assert content_hash(html) == content_hash(EXAMPLE)
    head = html[: html.index("</head>")]
    assert head.split("\n")[:5] == EXAMPLE.split("\n")[:5]
    assert all(line.startswith(("<meta ", "<link ")) for line in head.split("\n")[5:-1])
