"""The fast WHATWG parse for indexing: Lexbor (selectolax) builds the tree, html5lib stays the judge (docs/format.md
"Two parsers").

:func:`fast_tree` returns the ``<html>`` element as an ``xml.etree`` tree of exactly the shape
:func:`git_memhtml.document.hash.parse_document` builds (text in ``.text``/``.tail``, attributes in source order),
or ``None`` when it cannot vouch that html5lib would build the same tree. Then the caller parses with html5lib.
Lexbor implements today's WHATWG spec and html5lib 1.1 an older one; the two agree wherever the parser never
has to repair the markup, so the fast path is taken only for such input:

- the text starts with ``<!doctype html>`` (no quirks mode), holds no NUL and no CR (each parser normalises them
  its own way), no ``<!`` after the doctype (comments, CDATA, a second doctype: comment parsing changed between
  the spec versions) and no ``<?``;
- every character reference is one of :data:`PLAIN_ENTITIES`, the ones the canonical writer emits;
- every element Lexbor built is in :data:`FAST_ELEMENTS` (no table, no foreign content, no template, no select,
  no raw-text element, no ruby: the areas the spec rewrote);
- the markup is well nested as written: every non-void start tag is closed by its own end tag, in order, no end
  tag is stray, and no table, row group or row holds text;
- the tree is the markup as written: its elements in document order are exactly the source's start tags in order.
  A parser repair (an implied or stray end tag, the adoption agency, foster parenting, an element swallowed by an
  unclosed ``<title>`` in the head, a body implied by text in the head) adds, drops or moves an element or leaves a
  tag unmatched, so the check fails and html5lib decides.

Over-counting (a ``<p`` inside an attribute value or a ``<title>``) only ever sends a file to html5lib.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final
from xml.etree.ElementTree import Element

from selectolax.lexbor import LexborHTMLParser, LexborNode

from git_memhtml.document.serialize import VOID_ELEMENTS

FAST_ELEMENTS: Final[frozenset[str]] = frozenset(
    {
        "html", "head", "body", "title", "meta", "link",
        "article", "mark", "time", "dl", "dt", "dd", "data", "cite", "q", "dfn", "figure", "figcaption",
        "details", "summary", "aside", "section", "abbr", "pre", "code", "kbd", "samp", "var", "p", "ul", "ol",
        "li", "a", "strong", "em", "address", "div", "span", "b", "i", "u", "s", "small", "sub", "sup", "br", "hr",
        "wbr", "bdi", "bdo", "ins", "del", "h1", "h2", "h3", "h4", "h5", "h6", "header", "footer", "main", "nav",
        "blockquote", "table", "caption", "thead", "tbody", "tfoot", "tr", "th", "td", "colgroup", "col",
    }
)
"""Elements whose tree construction html5lib 1.1 and Lexbor share (the element vocabulary of docs/format.md §1.4
and its tolerated text markup, less ``hgroup``, ``img`` and ruby). Any other element sends the file to html5lib."""

TABLE_CONTEXTS: Final[frozenset[str]] = frozenset({"table", "thead", "tbody", "tfoot", "tr", "colgroup"})
"""Elements whose non-whitespace text the parser moves out of the table ("foster parenting"): such text sends the
file to html5lib."""

PLAIN_ENTITIES: Final[tuple[str, ...]] = ("amp", "lt", "gt", "quot", "nbsp", "#10", "#13")
"""Character references the fast path decodes: those :mod:`git_memhtml.document.serialize` writes."""

_DOCTYPE: Final = re.compile(r"<!doctype html>", re.IGNORECASE)
_REFUSED: Final = re.compile("[\x00\r]|<!|<\\?|&(?!(?:" + "|".join(PLAIN_ENTITIES) + ");)")
_TAG: Final = re.compile(r"<(/?)([A-Za-z][^\t\n\f />]*)[^>]*>")
_ARTICLE_OPEN: Final = re.compile(r"<article[\t\n\f />]", re.IGNORECASE)
_ARTICLE_CLOSE: Final = re.compile(r"</article[\t\n\f />]", re.IGNORECASE)


def eligible(text: str) -> bool:
    """Whether the source screen admits ``text`` to the fast path (see the module docstring)."""
    if _DOCTYPE.match(text) is None:
        return False
    return _REFUSED.search(text, 15) is None


def _as_written(text: str, elements: list[str]) -> bool:
    """Whether the tags of ``text`` (after the doctype) are well nested, no table context holds text, and the start
    tags in order are ``elements`` (the tree's element names in document order)."""
    stack: list[str] = []
    starts: list[str] = []
    position = 15
    for tag in _TAG.finditer(text, position):
        if stack and stack[-1] in TABLE_CONTEXTS and text[position : tag.start()].strip(" \t\n\f"):
            return False
        position = tag.end()
        name = tag.group(2).lower()
        if tag.group(1):
            if not stack or stack[-1] != name:
                return False
            stack.pop()
        else:
            starts.append(name)
            if name not in VOID_ELEMENTS:
                stack.append(name)
    return not stack and starts == elements


def _convert(node: LexborNode, parent: Element) -> bool:
    """Append the children of Lexbor ``node`` to etree ``parent`` (iteratively); False on an element outside
    :data:`FAST_ELEMENTS` or a node kind the fast path does not carry (comments: refused by the screen)."""
    stack: list[tuple[LexborNode | None, Element]] = [(node.child, parent)]
    while stack:
        child, into = stack.pop()
        last: Element | None = None
        while child is not None:
            tag = child.tag
            if tag == "-text":
                text = child.text_content or ""
                if last is None:
                    into.text = (into.text or "") + text
                else:
                    last.tail = (last.tail or "") + text
            elif tag is not None and tag in FAST_ELEMENTS:
                element = Element(tag, {key: value or "" for key, value in child.attributes.items()})
                into.append(element)
                last = element
                if child.child is not None:
                    stack.append((child.child, element))
            else:
                return False
            child = child.next
    return True


def fast_tree(text: str) -> Element | None:
    """The ``<html>`` element of ``text`` parsed by Lexbor, or ``None`` when html5lib must parse it (the screen, the
    element set or the as-written check of the module docstring refuse it). ``text`` is decoded memory text (BOM
    dropped, depth pre-checked by :func:`git_memhtml.document.parse.decode_memory`)."""
    if not eligible(text):
        return None
    html = LexborHTMLParser(text).root
    if html is None or html.tag != "html":
        return None
    root = Element("html", {key: value or "" for key, value in html.attributes.items()})
    if not _convert(html, root):
        return None
    if not _as_written(text, [str(element.tag) for element in root.iter()]):
        return None
    return root


def article_digest(text: str) -> str | None:
    """``sha256:`` of the source of the one ``<article>`` element (from its start tag to the end of its end tag) of
    a text :func:`fast_tree` accepted, or ``None`` when there is not exactly one of each tag. On such a text the
    article's subtree is a function of these bytes alone (every tag is as written), so equal digests mean an
    unchanged article (docs/format.md "Two parsers"; docs/index.md head-only rewrites)."""
    opens = list(_ARTICLE_OPEN.finditer(text))
    closes = list(_ARTICLE_CLOSE.finditer(text))
    if len(opens) != 1 or len(closes) != 1 or closes[0].start() < opens[0].start():
        return None
    end = text.index(">", closes[0].start()) + 1
    return "sha256:" + hashlib.sha256(text[opens[0].start() : end].encode("utf-8")).hexdigest()
