"""The closed allowlist of a memory file: which elements and attributes may appear at all (docs/format.md §1 "no
scripts", §1.4 vocabulary, §1.7 rule 3; issue 8 item 5).

A memory is opened as a page (a browser, ``git memhtml serve``), so it must hold nothing that runs, embeds,
submits, styles or loads active content. Rather than listing what is dangerous (a denylist misses the next
``<iframe srcdoc>`` or SVG ``<animate>``), this module lists what is permitted; everything else is a violation:

- **Elements.** An element is allowed only when it is an HTML element (no SVG or MathML namespace: those carry
  ``<script>``, ``<animate>``, ``<use href>``, ``<foreignObject>`` …) named in :data:`VOCABULARY` (docs/format.md §1.4,
  silent) or :data:`TOLERATED_ELEMENTS` (inert text markup such as ``<b>`` or ``<h2>``: kept, warned as outside the
  vocabulary as before). ``<script>``, ``<style>``, ``<iframe>``, ``<object>``, ``<embed>``, ``<frame>``, ``<base>``,
  ``<form>`` and its controls, ``<noscript>``, ``<template>``, ``<math>``, ``<svg>``, media elements and unknown
  or custom elements are therefore all refused.
- **Attributes.** :data:`GLOBAL_ATTRIBUTES` and ``data-*`` on every allowed element, plus the element's own
  entries of :data:`ELEMENT_ATTRIBUTES`. Any other attribute is refused; ``on*`` handlers (any case, any namespace)
  and ``class``/``style`` get their own message.
- **Values.** ``<link rel>`` tokens must be ``memhtml-…`` (any case, so near misses still warn) or one of the
  non-fetching :data:`INERT_LINK_RELS` (a ``stylesheet``/``preload``/``icon`` link loads content);
  ``<meta http-equiv>`` must be one of :data:`INERT_HTTP_EQUIV` (``refresh`` redirects, ``set-cookie`` and
  ``default-style`` act). URL values are checked by :mod:`git_memhtml.document.urls`.

Our decision (docs/format.md "Active content"); the lists are the source of truth for the docs.
"""

from __future__ import annotations

import re
from typing import Final

VOCABULARY: Final[frozenset[str]] = frozenset(
    {
        "html", "head", "body", "title", "meta", "link",
        "article", "mark", "time", "dl", "dt", "dd", "data", "cite", "q", "dfn", "figure", "figcaption",
        "details", "summary", "aside", "section", "abbr", "pre", "code", "kbd", "samp", "var", "table",
        "caption", "thead", "tbody", "tr", "th", "td", "p", "ul", "ol", "li", "a", "strong", "em",
        "address", "div", "span",
    }
)
"""The closed element vocabulary of docs/format.md §1.4 (``div``/``span`` only under ``<figure>``, checked
elsewhere)."""

TOLERATED_ELEMENTS: Final[frozenset[str]] = frozenset(
    {
        "b", "i", "u", "s", "small", "sub", "sup", "br", "hr", "wbr", "bdi", "bdo", "ins", "del",
        "h1", "h2", "h3", "h4", "h5", "h6", "hgroup", "header", "footer", "main", "nav", "blockquote",
        "tfoot", "colgroup", "col", "ruby", "rt", "rp", "img",
    }
)
"""HTML elements outside the vocabulary that neither run, embed, submit nor style anything: accepted with the
"not in the closed element vocabulary" warning (docs/format.md §1.7 rule 6). ``<img>`` loads only an image; its URLs are
checked like every other URL."""

ALLOWED_ELEMENTS: Final[frozenset[str]] = VOCABULARY | TOLERATED_ELEMENTS

GLOBAL_ATTRIBUTES: Final[frozenset[str]] = frozenset({"id", "title", "lang", "dir", "translate"})
"""Attributes allowed on every allowed element (plus ``data-*``, :data:`DATA_ATTRIBUTE`)."""

ELEMENT_ATTRIBUTES: Final[dict[str, frozenset[str]]] = {
    "html": frozenset({"xmlns"}),
    "meta": frozenset({"name", "content", "charset", "http-equiv"}),
    "link": frozenset({"rel", "href"}),
    "a": frozenset({"href", "hreflang", "rel"}),
    "q": frozenset({"cite"}),
    "blockquote": frozenset({"cite"}),
    "ins": frozenset({"cite", "datetime"}),
    "del": frozenset({"cite", "datetime"}),
    "time": frozenset({"datetime"}),
    "data": frozenset({"value"}),
    "details": frozenset({"open", "name"}),
    "ol": frozenset({"start", "reversed", "type"}),
    "li": frozenset({"value"}),
    "td": frozenset({"colspan", "rowspan", "headers"}),
    "th": frozenset({"colspan", "rowspan", "headers", "scope", "abbr"}),
    "col": frozenset({"span"}),
    "colgroup": frozenset({"span"}),
    "img": frozenset({"src", "alt", "width", "height", "srcset", "sizes"}),
}
"""Attributes allowed on one element only (the inert attributes of the WHATWG element definitions)."""

DATA_ATTRIBUTE: Final = re.compile(r"data-[a-z0-9][a-z0-9._-]*\Z")
"""A custom data attribute (``data-lang`` is the vocabulary's; others carry no behaviour without script)."""

INERT_LINK_RELS: Final[frozenset[str]] = frozenset({"author", "canonical", "help", "license", "next", "prev"})
"""``<link rel>`` tokens a browser never fetches for; every other non-``memhtml-`` token is refused."""

INERT_HTTP_EQUIV: Final[frozenset[str]] = frozenset({"content-type", "content-language"})
"""``<meta http-equiv>`` values that change nothing a page does."""

FORBIDDEN_PRESENTATION: Final[frozenset[str]] = frozenset({"class", "style"})
"""Attributes refused with the presentation message (docs/format.md §1.7 rule 3)."""


def attribute_name(key: str) -> str:
    """An attribute key as html5lib stores it (``"{namespace}local"`` for foreign attributes) → local name,
    lower-case."""
    return key.rsplit("}", 1)[-1].lower()


def is_handler(name: str) -> bool:
    """True for an event-handler attribute: ``on`` + anything (``onload``, ``ONERROR``, ``onbegin`` …)."""
    return name.startswith("on") and len(name) > 2


def element_allowed(tag: str) -> bool:
    """True when the raw etree tag is an HTML element of :data:`ALLOWED_ELEMENTS` (a ``{namespace}`` tag is a
    foreign SVG/MathML element and never allowed)."""
    return not tag.startswith("{") and tag in ALLOWED_ELEMENTS


def attribute_allowed(tag: str, key: str) -> bool:
    """True when attribute ``key`` (raw etree key) may appear on the allowed HTML element ``tag``."""
    if key.startswith("{"):
        return False  # a namespaced attribute only exists on foreign elements or as xml:/xlink: adjustments
    name = key.lower()
    return (
        name in GLOBAL_ATTRIBUTES or name in ELEMENT_ATTRIBUTES.get(tag, ()) or DATA_ATTRIBUTE.match(name) is not None
    )


def refused_link_rels(rel: str) -> list[str]:
    """The tokens of a ``<link rel>`` value that are neither ``memhtml-…`` (any case) nor inert."""
    return [
        token for token in rel.split()
        if not token.lower().startswith("memhtml-") and token.lower() not in INERT_LINK_RELS
    ]


def http_equiv_allowed(value: str) -> bool:
    """True when a ``<meta http-equiv>`` value (ASCII case-insensitive, surrounding space ignored) is inert."""
    return value.strip(" \t\n\f\r").lower() in INERT_HTTP_EQUIV
