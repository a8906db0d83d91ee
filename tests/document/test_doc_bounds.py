"""Deep nesting is refused before html5lib parses it, the same way by every door (issue 8 item 7).

Rows of deep inputs (plain, misnested, formatting, self-closing, tokenizer tricks) are each refused by validate's
check, the indexer's parse and the render gate without any parser seeing them (20,000 nested ``<div>`` used to cost
67 s to validate and 190 s to write): the ``parsers`` fixture records and refuses every html5lib and Lexbor parse,
so a door that parsed first fails by name, whatever the machine's load. A property test checks that the pre-scan
never under-counts the tree html5lib builds, and the golden and demo-like files stay far below the bound.
"""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn
from xml.etree.ElementTree import Element

import html5lib.html5parser
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from git_memhtml.document import fast
from git_memhtml.document.bounds import MAX_DEPTH, nesting_depth
from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.hash import parse_document
from git_memhtml.document.parse import parse_memory
from git_memhtml.document.template import render_memory
from git_memhtml.document.wellformed import check_memory_bytes
from git_memhtml.errors import InvalidMemory
from tests.document.memdoc_helpers import MINIMAL_ARTICLE, memory_file

GOLDEN = Path(__file__).resolve().parent / "golden"
REFUSAL = f"elements nest more than {MAX_DEPTH} levels deep: refused before parsing (a memory is one fact)"
N = 20000

DEEP: list[tuple[str, str]] = [
    ("div", "<div>" * N + "x" + "</div>" * N),
    ("div-unclosed", "<div>" * N),
    ("span-div-misnested", "<span><div></span>" * N),
    ("formatting-distinct", "".join(f'<b id="{i}">' for i in range(N))),
    ("formatting-reopened", "<p><b><i></p>" * N),
    ("self-closing-div", "<div/>" * N),
    ("section", "<section><p>x" * N),
    ("list-items", "<ul><li>" * N),
    ("abrupt-comment", "<!-->" + "<div>" * N),
    ("quote-in-unquoted-value", '<a title=x"y>' + "<div>" * N + '<a title="z">'),
    ("svg-title-is-markup", "<svg><title>" + "<div>" * N + "</title></svg>"),
    ("table-cells", "<table><tr><td>" * N),
    ("upper-case", "<DIV>" * N),
]


class ParsedAnyway(BaseException):
    """A parser was reached. A ``BaseException``, so no door's ``except Exception`` turns it into a violation."""


@pytest.fixture
def parsers(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every parse from here on, recorded (``"html5lib"``, ``"lexbor"``) and refused with :class:`ParsedAnyway`.

    ``HTMLParser._parse`` is where html5lib's ``parse``, ``parseFragment`` and the strict parse of validate's check
    all go; ``fast.LexborHTMLParser`` is the indexer's fast parse. ``test_the_parser_spies_see_every_door`` shows
    that a shallow memory through each door does reach them."""
    calls: list[str] = []

    def refuse(name: str) -> NoReturn:
        calls.append(name)
        raise ParsedAnyway(name)

    def html5lib_parse(*_args: object, **_kwargs: object) -> NoReturn:
        refuse("html5lib")

    def lexbor_parse(*_args: object, **_kwargs: object) -> NoReturn:
        refuse("lexbor")

    monkeypatch.setattr(html5lib.html5parser.HTMLParser, "_parse", html5lib_parse)
    monkeypatch.setattr(fast, "LexborHTMLParser", lexbor_parse)
    return calls


DOORS = ["check", "parse", "parse-html5lib-only", "render"]
"""validate's check, the indexer's parse (fast parser first, and html5lib only), the render gate."""


def _through(door: str, article: str) -> None:
    """Send a memory of ``article`` through ``door``."""
    if door == "check":
        check_memory_bytes(memory_file(article).encode("utf-8"))
    elif door == "parse":
        parse_memory(memory_file(article), path="areas/x.html")
    elif door == "parse-html5lib-only":
        parse_memory(memory_file(article), path="areas/x.html", fast=False)
    else:
        render_memory(MemoryDraft(title="T", memory_type="semantic", article_html=article), now="2026-01-02T03:04:05Z")


@pytest.mark.parametrize("door", DOORS)
def test_the_parser_spies_see_every_door(parsers: list[str], door: str) -> None:
    """The control of ``parsers``: a shallow memory through each door is parsed, so the spies are reached (else the
    refusal tests below would pass for nothing)."""
    with pytest.raises(ParsedAnyway):
        _through(door, MINIMAL_ARTICLE)
    assert parsers and set(parsers) <= {"html5lib", "lexbor"}


@pytest.mark.parametrize("markup", [pytest.param(markup, id=name) for name, markup in DEEP])
def test_deep_markup_is_refused_by_every_door_before_parsing(parsers: list[str], markup: str) -> None:
    """Each door refuses the deep markup with the depth violation, and no parser (html5lib, Lexbor) ever sees it:
    parsing it is what cost a minute."""
    html = memory_file(MINIMAL_ARTICLE + markup)
    assert check_memory_bytes(html.encode("utf-8")).violations == (REFUSAL,)
    with pytest.raises(InvalidMemory) as parsed:
        parse_memory(html, path="areas/deep.html")
    assert parsed.value.violations == (REFUSAL,) and parsed.value.hint and "flatten" in parsed.value.hint
    with pytest.raises(InvalidMemory) as rendered:
        render_memory(MemoryDraft(title="T", memory_type="semantic", article_html=MINIMAL_ARTICLE + markup),
                      now="2026-01-02T03:04:05Z")
    assert rendered.value.violations == (REFUSAL,)
    with pytest.raises(InvalidMemory) as parsed_slowly:
        parse_memory(html, path="areas/deep.html", fast=False)
    assert parsed_slowly.value.violations == (REFUSAL,)
    assert parsers == []


def test_nesting_at_the_bound_is_accepted() -> None:
    depth = MAX_DEPTH - 6  # html, body, article, and the figure wrapper leave room
    html = memory_file(MINIMAL_ARTICLE + "<figure>" + "<div>" * depth + "x" + "</div>" * depth + "</figure>")
    assert check_memory_bytes(html.encode("utf-8")).violations == ()
    parse_memory(html)


def test_real_files_are_far_below_the_bound() -> None:
    depths = [nesting_depth(path.read_text(encoding="utf-8")) for path in GOLDEN.rglob("*.html")]
    assert depths and max(depths) <= 12


def _tree_depth(root: Element) -> int:
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node if isinstance(child.tag, str))
    return deepest


TOKENS = st.sampled_from([
    "<div>", "</div>", "<span>", "</span>", "<b>", "</b>", '<b id="1">', '<i id="2">', "</i>", "<a>", "</a>",
    "<p>", "</p>", "<p/>", "<div/>", "<ul>", "</ul>", "<li>", "</li>", "<dl>", "<dt>", "<dd>", "</dl>",
    "<table>", "</table>", "<tr>", "<td>", "</td>", "<th>", "<tbody>", "<caption>", "<select>", "<option>",
    "</select>", "<svg>", "</svg>", "<math>", "<mi>", "</math>", "<title>", "</title>", "<foreignObject>",
    "<desc>", "<textarea>", "</textarea>", "<script>", "</script>", "<noscript>", "</noscript>", "<style>",
    "<template>", "</template>", "<!-->", "<!--", "-->", "--!>", '<a title=x"y>', "<h1>", "</h2>", "<button>",
    "<nobr>", "<font>", "<font color=red>", "<path/>", "<g>", "<circle r=1/>", "<a title=x/>", "<em>", "</em>",
    "<strong>", "<code>", "</code>", "<pre>", "<section>", "<article>",
    "</body>", "<body>", "<html>", "<frameset>", "<xmp>", "<plaintext>", "<object>", "<applet>", "<marquee>",
    "<image>", "<isindex>", '<a title="', '">', "'", '"', "<input>", "<keygen>", "<col>", "<colgroup>", "<iframe>",
    "</iframe>", "<annotation-xml>", '<annotation-xml encoding="text/html">', "<mtext>", "<mglyph>", "<br>", "</br>",
    "<hr/>", "<ruby>", "<rt>", "<rp>", "<form>", "</form>", "x", " ",
])


@settings(max_examples=500, deadline=None, database=None)
@given(st.lists(TOKENS, max_size=60))
def test_the_pre_scan_never_under_counts_html5lib(tokens: list[str]) -> None:
    text = "".join(tokens)
    try:
        tree = parse_document(text)
    except (AssertionError, InvalidMemory):
        # html5lib 1.1 asserts on a few foreign/select mixes; covered by test_parser_crash_*
        assume(False)
    actual = _tree_depth(tree)
    assert nesting_depth(text) + 3 >= actual  # +3: an implied <html> and <body>, and a void leaf the scan skips


CRASHES_HTML5LIB = "<svg><select><title><select><select>"


def test_parser_crash_is_a_violation_not_an_internal_error() -> None:
    """html5lib 1.1 raises an AssertionError on this mix; every door reports it as a refusal."""
    html = memory_file(MINIMAL_ARTICLE + CRASHES_HTML5LIB)
    (violation,) = check_memory_bytes(html.encode("utf-8")).violations
    assert violation.startswith("the HTML parser (html5lib 1.1) fails on this markup (AssertionError)")
    with pytest.raises(InvalidMemory) as parsed:
        parse_memory(html, path="areas/x.html")
    assert parsed.value.path == "areas/x.html" and parsed.value.violations == (violation,)
    with pytest.raises(InvalidMemory):
        render_memory(MemoryDraft(title="T", memory_type="semantic", article_html=MINIMAL_ARTICLE + CRASHES_HTML5LIB),
                      now="2026-01-02T03:04:05Z")


def test_oversized_article_html_is_refused_before_any_parse(parsers: list[str]) -> None:
    """A 2 MiB ``article_html`` is refused by its size before the canonicalising parse: no parser is called."""
    article = MINIMAL_ARTICLE + "<p>" + "x " * (1024 * 1024) + "</p>"
    with pytest.raises(InvalidMemory) as caught:
        render_memory(MemoryDraft(title="T", memory_type="semantic", article_html=article), now="2026-01-02T03:04:05Z")
    assert "over the 1048576-byte limit" in caught.value.violations[0]
    assert parsers == []
