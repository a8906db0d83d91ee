"""The memoised head editors give the same bytes as the editors before the speed-up (issue 12 item 3).

The oracle is the previous module, kept verbatim in :mod:`tests.store.editors_reference`. Every reader and editor is
run through both over the seeded fixture corpus, the golden memory files of the tests, and generated heads built
from hostile fragments (comments before, inside and around the head's end, unterminated comments, several tags on
one line, ``<body``/``<article`` spelled oddly); the results must be equal byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_memhtml.document import editors
from git_memhtml.eval.corpus import build_corpus
from git_memhtml.store.edits import apply_edits, set_meta
from tests.store import editors_reference as reference

GOLDEN = sorted(Path(__file__).parents[1].rglob("*.html"))

EDITS: list[tuple[str, Callable[[str], str], Callable[[str], str]]] = [
    ("set confidence", lambda h: editors.set_meta(h, "confidence", "0.412"),
     lambda h: reference.set_meta(h, "confidence", "0.412")),
    ("set updated", lambda h: editors.set_meta(h, "updated", "2026-03-01T00:00:00Z"),
     lambda h: reference.set_meta(h, "updated", "2026-03-01T00:00:00Z")),
    ("set status", lambda h: editors.set_meta(h, "status", "archived"),
     lambda h: reference.set_meta(h, "status", "archived")),
    ("add entity", lambda h: editors.add_meta(h, "entity", "person:ada"),
     lambda h: reference.add_meta(h, "entity", "person:ada")),
    ("add tag", lambda h: editors.add_meta(h, "tag", "ops"), lambda h: reference.add_meta(h, "tag", "ops")),
    ("add scalar", lambda h: editors.add_meta(h, "confidence", "0.5"),
     lambda h: reference.add_meta(h, "confidence", "0.5")),
    ("remove entity", lambda h: editors.remove_meta(h, "entity"), lambda h: reference.remove_meta(h, "entity")),
    ("remove updated", lambda h: editors.remove_meta(h, "updated"), lambda h: reference.remove_meta(h, "updated")),
    ("link", lambda h: editors.add_link(h, "relates_to", "../a.html"),
     lambda h: reference.add_link(h, "relates_to", "../a.html")),
    ("unlink all", lambda h: editors.remove_link(h, "relates_to"), lambda h: reference.remove_link(h, "relates_to")),
    ("strip format", editors.without_format_tags, reference.without_format_tags),
]


def _assert_same(html: str) -> None:
    """Every reader, every single edit, and a chain of all edits agree with the oracle on ``html``."""
    assert editors._head_end(html) == reference._head_end(html)
    for name in ("confidence", "updated", "created", "entity", "tag", "status"):
        assert editors.get_meta(html, name) == reference.get_meta(html, name)
        assert editors.get_metas(html, name) == reference.get_metas(html, name)
    assert editors.get_links(html) == reference.get_links(html)
    chained_new, chained_old = html, html
    for label, new, old in EDITS:
        assert new(html) == old(html), label
        chained_new, chained_old = new(chained_new), old(chained_old)
        assert chained_new == chained_old, f"chain at {label}"


def test_fixture_corpus_edits_match_the_previous_editors() -> None:
    corpus = build_corpus(size=60, probes=4)
    assert len(corpus.files) >= 60
    for text in corpus.files.values():
        _assert_same(text)


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.name)
def test_golden_files_match_the_previous_editors(path: Path) -> None:
    _assert_same(path.read_text(encoding="utf-8", errors="replace"))


FRAGMENTS = st.sampled_from([
    "<!doctype html>\n", "<html lang=\"en\">\n", "<head>\n", "<meta charset=\"utf-8\">\n", "<title>T</title>\n",
    '<meta name="memhtml-confidence" content="0.85">\n', '<meta name="memhtml-updated" content="2026-01-02">\n',
    '<meta name="memhtml-created" content="2026-01-01">\n', '<meta name="memhtml-entity" content="person:bo">\n',
    '<meta name="memhtml-tag" content="x">', "<meta name='memhtml-status' content=active>",
    '<link rel="memhtml-relates-to" href="../a.html">\n', '<link rel="memhtml-relates-to" href="b.html">',
    "<!-- note -->", "<!-- <meta name=\"memhtml-confidence\" content=\"0.1\"> -->\n", "<!--", "-->", "<!---->",
    "</head>\n", "</HEAD >", "<body>\n", "<body<!-- x -->", "<article>\n", "<ARTICLE class=a>", "<articles>",
    "<p>text</p>\n", " ", "\n", "<!-- </head> -->", "<!-- <body> -->", "<bodyx>", "</head\n>", "<article/>",
])


@settings(max_examples=400, deadline=None)
@given(st.lists(FRAGMENTS, max_size=24))
def test_generated_heads_match_the_previous_editors(parts: list[str]) -> None:
    _assert_same("".join(parts))


def test_the_monotonic_stamp_reads_the_text_it_edits() -> None:
    """``apply_edits`` reads ``created``/``updated`` of the text after the edits before it (the memo keys on the
    text, so a read never sees an earlier version)."""
    html = (
        '<head>\n<meta name="memhtml-created" content="2026-01-01T00:00:00Z">\n'
        '<meta name="memhtml-updated" content="2026-01-05T00:00:00Z">\n</head><article><p>a</p></article>'
    )
    out = apply_edits(html, [set_meta("updated", "2026-02-01T00:00:00Z"), set_meta("updated", "2026-01-10T00:00:00Z")])
    assert editors.get_meta(out, "updated") == "2026-02-01T00:00:00Z"


def test_one_scan_serves_every_read_and_the_first_edit_of_a_text() -> None:
    """Issue 12: ``_scan`` ran ~11 times per decayed file; the reads and the first edit of one text share one scan
    (set_meta inserting an absent meta scans the same text twice: both hits)."""
    html = build_corpus(size=60, probes=4).files
    text = next(iter(html.values())) + "<!-- fresh text -->"
    before = editors._scan.cache_info()
    for name in ("updated", "confidence", "status", "type", "entity"):
        editors.get_meta(text, name)
    editors.get_links(text)
    editors.set_meta(text, "confidence", "0.5")
    after = editors._scan.cache_info()
    assert after.misses - before.misses == 1 and after.hits - before.hits == 7
