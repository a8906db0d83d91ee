"""Content hash and canonical text of a memory article (docs/format.md §1.6).

This module also owns the one HTML5 parse of the package: :func:`parse_document` and :func:`parse_fragment`
(html5lib, WHATWG tree construction, article fragments parsed **in ``<article>`` context** so table-scoped
markup keeps its text). Trees are ``xml.etree`` elements as html5lib builds them with
``namespaceHTMLElements=False``: text lives in ``.text``/``.tail``, comments have a non-string ``.tag``.

The hash is the dedup key and must be invariant under head edits, so its scope is the first ``<article>`` only.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from typing import Final
from xml.etree.ElementTree import Element

import html5lib

from git_memhtml.errors import InvalidMemory

INLINE_ELEMENTS: Final[frozenset[str]] = frozenset(
    {"mark", "time", "data", "cite", "q", "dfn", "abbr", "code", "kbd", "samp", "var", "a", "strong", "em", "span"}
)
"""Elements that add no word boundary at their edges; every other element is a block (docs/format.md §1.6 step 2,
§1.6 note 5: the inline set is part of the hash contract)."""

GIST_EXCLUDED_ELEMENTS: Final[frozenset[str]] = frozenset({"pre", "code"})
"""Subtrees skipped by ``canonical_text(..., skip_code=True)``: the gist rule (docs/format.md §1.1, §1.4)."""

HASH_PREFIX: Final[str] = "sha256:"
"""Self-describing digest prefix (docs/format.md §1.6 step 5)."""

_ASCII_WS_RUN: Final = re.compile(r"[ \t\n\f\r]+")
_ARTICLE_OPEN: Final = re.compile(r"<article[\s>]", re.IGNORECASE)
_CONTENT_HASH: Final = re.compile(r"sha256:[0-9a-f]{64}\Z")
_ROOT_TAGS: Final[frozenset[str]] = frozenset({"DOCUMENT_ROOT", "DOCUMENT_FRAGMENT"})

# ECMAScript String.prototype.trim set (WhiteSpace + LineTerminator): the original trims with it, so the gist,
# titles and the empty-claim test agree byte for byte. U+00A0 is in it (a claim of only NBSP is blank).
_JS_TRIM_CHARS: Final[str] = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)

Segment = tuple[bool, str]
"""One run of text: ``(verbatim, text)``; verbatim runs come from ``<pre>`` descendants."""


def js_trim(text: str) -> str:
    """Trim like ECMAScript ``String.prototype.trim`` (Unicode spaces, line terminators, U+FEFF)."""
    return text.strip(_JS_TRIM_CHARS)


def collapse(text: str) -> str:
    """Replace each run of ASCII whitespace with one space, then :func:`js_trim` (U+00A0 survives inside)."""
    return js_trim(_ASCII_WS_RUN.sub(" ", text))


SCRIPTING: Final[bool] = True
"""Parse with the scripting flag on, as a browser with JavaScript does (WHATWG §13.2 "scripting flag"): then
``<noscript>`` content is raw text, as a browser sees it, not markup. html5lib defaults to scripting off, which
would let ``<noscript><p title="</noscript><img onerror=…>">`` look harmless to a check that a browser runs
(issue 8 item 5). ``<noscript>`` is refused anyway (:mod:`git_memhtml.document.allowlist`)."""


PARSER_FAILURE: Final[str] = "the HTML parser (html5lib 1.1) fails on this markup"
"""Violation for input on which html5lib itself raises (it asserts on some SVG/``<select>``/``<title>`` mixes)."""


def parser_failed(exc: Exception) -> InvalidMemory:
    """The refusal for an exception raised inside html5lib (never a crash: the input is what is wrong)."""
    reason = f"{PARSER_FAILURE} ({type(exc).__name__}): simplify the nesting of svg/select/title elements"
    return InvalidMemory(reason, violations=[reason], hint="rewrite the markup with the closed vocabulary")


def parse_document(html: str) -> Element:
    """Parse a whole file (WHATWG rules, scripting on) and return the ``<html>`` element.

    Raises:
        InvalidMemory: html5lib itself failed on the input (:func:`parser_failed`).
    """
    try:
        root: Element = html5lib.parse(html, treebuilder="etree", namespaceHTMLElements=False, scripting=SCRIPTING)
    except Exception as exc:
        raise parser_failed(exc) from exc
    return root


def parse_fragment(html: str) -> Element:
    """Parse article inner HTML in ``<article>`` context; returns the ``DOCUMENT_FRAGMENT`` container.

    Raises:
        InvalidMemory: html5lib itself failed on the input.
    """
    try:
        root: Element = html5lib.parseFragment(
            html, container="article", treebuilder="etree", namespaceHTMLElements=False, scripting=SCRIPTING
        )
    except Exception as exc:
        raise parser_failed(exc) from exc
    return root


def tag_of(node: Element) -> str | None:
    """Local tag name of an element, or ``None`` for a comment/processing instruction."""
    tag = node.tag
    if tag.__class__ is not str:
        return None
    if tag[:1] == "{":
        return tag[tag.index("}") + 1 :]
    return tag


def iter_elements(root: Element, *names: str) -> Iterator[Element]:
    """Elements of a subtree in document order (root included), optionally only the HTML elements named
    ``names`` (foreign elements such as SVG ``<title>`` never match a name)."""
    if len(names) == 1:
        yield from root.iter(names[0])
        return
    if names:
        wanted = frozenset(names)
        yield from (node for node in root.iter() if node.tag in wanted)
        return
    yield from (node for node in root.iter() if node.tag.__class__ is str)


def first_article(root: Element) -> Element | None:
    """The first ``<article>`` element of a tree in document order, or ``None``."""
    return next(iter_elements(root, "article"), None)


def article_tree_of(html: str) -> Element:
    """The hash scope of a string: the first ``<article>`` of a whole file, else the string as an article
    fragment (a string without ``<article`` is article inner HTML)."""
    if _ARTICLE_OPEN.search(html):
        article = first_article(parse_document(html))
        if article is not None:
            return article
    return parse_fragment(html)


def segments_of(root: Element, *, skip_code: bool = False) -> list[Segment]:
    """Text segments of a subtree in document order (docs/format.md §1.6 steps 1-3). Iterative: depth cannot overflow.

    Block elements (not in :data:`INLINE_ELEMENTS`) contribute a collapsible ``" "`` at both edges; comments
    emit nothing; text under ``<pre>`` (any depth) is verbatim. The root's own tail is never included.
    """
    out: list[Segment] = []
    # A frame is (element, verbatim, "") to visit, or (None, verbatim, text) to emit.
    stack: list[tuple[Element | None, bool, str]] = [(root, tag_of(root) == "pre", "")]
    while stack:
        node, verbatim, text = stack.pop()
        if node is None:
            out.append((verbatim, text))
            continue
        tag = tag_of(node)
        if tag is None or (skip_code and tag in GIST_EXCLUDED_ELEMENTS):
            continue
        if tag not in INLINE_ELEMENTS and tag not in _ROOT_TAGS:
            out.append((False, " "))
            stack.append((None, False, " "))
        nested = verbatim or tag == "pre"
        for child in reversed(list(node)):
            if child.tail:
                stack.append((None, nested, child.tail))
            stack.append((child, nested, ""))
        if node.text:
            stack.append((None, nested, node.text))
    return out


def _coalesce(segments: list[Segment]) -> list[Segment]:
    out: list[Segment] = []
    for verbatim, text in segments:
        if out and out[-1][0] == verbatim:
            out[-1] = (verbatim, out[-1][1] + text)
        else:
            out.append((verbatim, text))
    return out


def canonical_text_of(root: Element, *, skip_code: bool = False) -> str:
    """Canonical text of a parsed subtree (docs/format.md §1.6 step 4).

    Same-mode neighbours are coalesced; collapsible runs of ASCII whitespace (not U+00A0) become one space;
    one leading/trailing space is dropped only when the first/last segment is collapsible.
    """
    segments = _coalesce(segments_of(root, skip_code=skip_code))
    last = len(segments) - 1
    rendered: list[str] = []
    for index, (verbatim, text) in enumerate(segments):
        if not verbatim:
            text = _ASCII_WS_RUN.sub(" ", text)
            if index == 0 and text.startswith(" "):
                text = text[1:]
            if index == last and text.endswith(" "):
                text = text[:-1]
        rendered.append(text)
    return "".join(rendered)


def canonical_text(html: str, *, skip_code: bool = False) -> str:
    """Canonical text of a whole file's first ``<article>`` or of article inner HTML (docs/format.md §1.6).

    ``skip_code=True`` omits ``<pre>``/``<code>`` subtrees (the gist rule). Total: never raises.
    """
    return canonical_text_of(article_tree_of(html), skip_code=skip_code)


def digest(text: str) -> str:
    """``sha256:<64 hex>`` of the UTF-8 bytes of ``text``."""
    return HASH_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_hash(html: str) -> str:
    """``sha256:<hex>`` of the canonical article text (docs/format.md §1.6).

    Args:
        html: a whole memory file (the first ``<article>`` is the scope; the head never reaches the digest) or
            article inner HTML (parsed in ``<article>`` context).

    Returns:
        ``"sha256:"`` + 64 lowercase hex digits. Total: malformed input still hashes.
    """
    return digest(canonical_text(html))


def is_content_hash(value: str) -> bool:
    """True when ``value`` is a well-formed ``sha256:<64 lowercase hex>`` digest."""
    return _CONTENT_HASH.match(value) is not None
