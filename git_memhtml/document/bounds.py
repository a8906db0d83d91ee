"""Bounded work before parsing: refuse deeply nested markup before html5lib sees it (issue 8 item 7).

html5lib checks "has an element in scope" by walking the stack of open elements on many tokens, so its cost
grows with depth × tokens: 20,000 nested ``<div>`` took 67 s to validate and 190 s to write. A memory is one fact;
its real markup nests a handful of levels (``git_memhtml/resources/demo`` and the golden files: at most 6). So every
door that parses (``validate``, the pre-commit hook, the indexer's :func:`~git_memhtml.document.parse.parse_memory`
and the render gate) first runs :func:`nesting_depth`, one linear pass of a regular-expression tag scanner, and
refuses a file deeper than :data:`MAX_DEPTH`.

The scan is an upper estimate of the depth html5lib builds (so nothing deeper gets through), tuned so that real markup
is not over-counted. It tokenizes like the HTML tokenizer (tags with quoted and unquoted attribute values, comments
including ``<!-->`` and ``--!>``, bogus comments, the raw-text content of ``script``/``style``/``title``/
``textarea``/``noscript`` … where the parser switches the tokenizer — not inside ``<select>``, where it ignores those
tags and their content stays markup) and keeps a stack of open elements that pops only where the parser certainly pops
too: an end tag closes its element when every element above it is one the parser would close on the way (no formatting
element, which the parser could reopen, and no scope boundary); a ``<p>``, ``<li>``, ``<dt>``/``<dd>``, ``<tr>``,
``<td>``/``<th>`` or ``<option>`` start closes the same element on top of the stack, and a block start an open ``<p>``
on top. Void elements do not nest; ``<div/>`` nests, as in HTML. Misnested markup is therefore over-counted, never
under-counted. Inside ``<svg>``/``<math>`` every start tag nests unless it self-closes, until a breakout tag (``<p>``,
``<div>`` …) returns to HTML; table cells, rows and columns count their implied wrappers.
"""

from __future__ import annotations

import re
from typing import Final

MAX_DEPTH: Final[int] = 256
"""Deepest element nesting accepted (``<html>`` is depth 1). Chosen from ``bench/deep_nesting.py``: at 256 levels
validation is still fast (see bench/README.md) while legitimate memories stay below 10; our decision,
docs/format.md "Limits"."""

VOID_ELEMENTS: Final[frozenset[str]] = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
     "param", "keygen", "basefont", "bgsound", "frame", "image", "isindex"}
)
"""Elements that never take children (WHATWG §13.1.2)."""

RAW_TEXT_ELEMENTS: Final[frozenset[str]] = frozenset(
    {"script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript", "plaintext"}
)
"""Elements whose content the tokenizer reads as text up to their end tag (``noscript`` with scripting on, as we
parse) — when the tree builder accepts the start tag: not inside ``<select>`` or ``<frameset>`` (there it is
ignored, so the content stays markup) and not in SVG/MathML."""

_LEAVES_SELECT: Final[frozenset[str]] = frozenset({"select", "input", "keygen", "textarea"})
"""Start tags that close an open ``<select>`` ("in select" insertion mode)."""

_IMPLIED_BY: Final[dict[str, frozenset[str]]] = {
    "p": frozenset({"p"}),
    "li": frozenset({"li"}),
    "dt": frozenset({"dt", "dd"}),
    "dd": frozenset({"dt", "dd"}),
    "tr": frozenset({"tr"}),
    "td": frozenset({"td", "th"}),
    "th": frozenset({"td", "th"}),
    "option": frozenset({"option"}),
}
"""Start tag → elements it closes when one of them is the current (top) element."""

_WRAPPERS: Final[dict[str, tuple[str, frozenset[str], tuple[str, ...]]]] = {
    "td": ("tr", frozenset({"tr"}), ("tbody", "tr")),
    "th": ("tr", frozenset({"tr"}), ("tbody", "tr")),
    "tr": ("tbody", frozenset({"tbody", "thead", "tfoot"}), ("tbody",)),
    "col": ("colgroup", frozenset({"colgroup"}), ("colgroup",)),
}
"""Start tag → (its parent, parents that need no wrapper, wrappers counted otherwise): the table insertion modes
insert ``<tbody>``/``<tr>``/``<colgroup>`` around a bare cell, row or column (counted wherever the parent is not
already the right one, which over-counts a stray cell but never misses a wrapper)."""

_CLOSES_P: Final[frozenset[str]] = frozenset(
    {"address", "article", "aside", "blockquote", "details", "dialog", "div", "dl", "fieldset", "figcaption",
     "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "main", "menu",
     "nav", "ol", "p", "pre", "section", "summary", "table", "ul"}
)
"""Start tags that close an open ``<p>`` (WHATWG "in body" insertion mode)."""

FORMATTING_ELEMENTS: Final[frozenset[str]] = frozenset(
    {"a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u"}
)
"""Elements the parser may reopen after an implied close (the active formatting list); never popped implicitly."""

SCOPE_BOUNDARIES: Final[frozenset[str]] = frozenset(
    {"applet", "caption", "html", "table", "td", "th", "marquee", "object", "template", "ol", "ul", "button",
     "select", "svg", "math", "foreignobject", "desc", "mi", "mo", "mn", "ms", "mtext", "annotation-xml"}
)
"""Every element that ends some "has an element in scope" search (union of the WHATWG scopes)."""

SPECIAL_ELEMENTS: Final[frozenset[str]] = frozenset(
    {"address", "applet", "area", "article", "aside", "base", "basefont", "bgsound", "blockquote", "body", "br",
     "button", "caption", "center", "col", "colgroup", "dd", "details", "dir", "div", "dl", "dt", "embed",
     "fieldset", "figcaption", "figure", "footer", "form", "frame", "frameset", "h1", "h2", "h3", "h4", "h5", "h6",
     "head", "header", "hgroup", "hr", "html", "iframe", "img", "input", "keygen", "li", "link", "listing", "main",
     "marquee", "menu", "meta", "nav", "noembed", "noframes", "noscript", "object", "ol", "p", "param",
     "plaintext", "pre", "script", "search", "section", "select", "source", "style", "summary", "table", "tbody",
     "td", "template", "textarea", "tfoot", "th", "thead", "title", "tr", "track", "ul", "wbr", "xmp"}
)
"""The WHATWG "special" category: an end tag of any other element stops at one of these."""

_WS: Final = "\t\n\f\r "
_MARKUP_START: Final = re.compile(r"<[!?/A-Za-z]")
_TAG_OPEN: Final = re.compile(r"</?[A-Za-z]")
_NOT_A_TAG: Final = re.compile(
    r"<!--(?:>|->|.*?(?:--!?>|\Z))"  # comment, including the abrupt <!--> and <!---> forms
    r"|<[!?][^>]*+>?"  # doctype, CDATA, bogus comment
    r"|</(?![A-Za-z>])[^>]*+>?",  # </ followed by a non-letter: bogus comment
    re.DOTALL,
)
_TAG: Final = re.compile(
    rf"<(/?)([A-Za-z][^{_WS}/>]*+)"  # tag name
    rf"((?>[{_WS}/]++|[^{_WS}/>][^{_WS}/>=]*+(?>[{_WS}]*+=[{_WS}]*+(?>\"[^\"]*+\"|'[^']*+'|[^{_WS}>]*+))?)*+)>"
)
"""A start or end tag as the tokenizer reads it. Atomic groups and possessive repeats: no backtracking, so a match
attempt is linear, and a failed one means the tag runs to the end of the input (the only way a tag does not
close), where the scan stops."""


BREAKOUT_ELEMENTS: Final[frozenset[str]] = frozenset(
    {"b", "big", "blockquote", "body", "br", "center", "code", "dd", "div", "dl", "dt", "em", "embed",
     "h1", "h2", "h3", "h4", "h5", "h6", "head", "hr", "i", "img", "li", "listing", "menu", "meta", "nobr", "ol",
     "p", "pre", "ruby", "s", "small", "span", "strong", "strike", "sub", "sup", "table", "tt", "u", "ul", "var"}
)
"""Start tags that leave SVG/MathML content and are handled as HTML again (WHATWG "in foreign content")."""

INTEGRATION_POINTS: Final[frozenset[tuple[str, str]]] = frozenset(
    {("svg", "foreignobject"), ("svg", "desc"), ("svg", "title"), ("math", "mi"), ("math", "mo"), ("math", "mn"),
     ("math", "ms"), ("math", "mtext"), ("math+html", "annotation-xml")}
)
"""(namespace, element) of the foreign elements whose children are parsed as HTML; ``math+html`` marks an
``<annotation-xml>`` whose ``encoding`` is ``text/html`` or ``application/xhtml+xml`` (the only HTML one)."""

_HTML_ENCODING: Final = re.compile(
    r"(?:\A|[\t\n\f\r /])encoding[\t\n\f\r ]*=[\t\n\f\r ]*([\"']?)"
    r"(?:text/html|application/xhtml\+xml)\1(?:[\t\n\f\r /]|\Z)",
    re.IGNORECASE,
)

_SELF_CLOSING: Final = re.compile(rf"(?:\A|[{_WS}\"'/]|[{_WS}/][^{_WS}/>=\"']+)/\Z")
"""Attribute text that ends in a self-closing ``/`` (not the last character of an unquoted value)."""


_FONT_BREAKOUT: Final = re.compile(rf"(?:\A|[{_WS}/])(?:color|face|size)(?:[{_WS}]*=|[{_WS}/]|\Z)", re.IGNORECASE)


def _breaks_out(name: str, attributes: str) -> bool:
    """Whether a start tag in SVG/MathML content makes the parser leave it (``<font>`` only with color/face/size;
    html5lib 1.1 has no end-tag breakout)."""
    if name == "font":
        return _FONT_BREAKOUT.search(attributes) is not None
    return name in BREAKOUT_ELEMENTS


def _end_tag(stack: list[tuple[str, str]], name: str) -> None:
    """Pop ``name`` when the parser certainly pops it; otherwise leave the stack (an over-count)."""
    special = name in SPECIAL_ELEMENTS
    for index in range(len(stack) - 1, -1, -1):
        current = stack[index][0]
        if current == name:
            if name == "form":
                del stack[index]  # </form> removes the form element alone, its open children stay open
            else:
                del stack[index:]
            return
        if (
            current in FORMATTING_ELEMENTS or current in SCOPE_BOUNDARIES
            or (not special and current in SPECIAL_ELEMENTS)
        ):
            return


def nesting_depth(text: str, *, stop_at: int | None = None) -> int:
    """The deepest element nesting of a document, an upper estimate of the tree html5lib builds.

    One left-to-right scan, bounded work per tag once ``stop_at`` is given (it returns as soon as that depth is
    reached: the refusal needs no more). The stack holds ``(name, namespace)`` (``""`` for HTML); inside SVG/MathML
    every start tag nests unless it self-closes, and none of the HTML void/implied/raw-text rules apply.
    """
    stack: list[tuple[str, str]] = []
    deepest = 0
    position = 0
    length = len(text)
    while position < length:
        found = _MARKUP_START.search(text, position)
        if found is None:
            break
        position = found.start()
        skipped = _NOT_A_TAG.match(text, position)
        if skipped is not None:
            position = skipped.end()
            continue
        match = _TAG.match(text, position)
        if match is None:
            if _TAG_OPEN.match(text, position):
                break  # an unclosed tag swallows the rest of the input
            position += 1
            continue
        position = match.end()
        name = match.group(2).lower()
        top, namespace = stack[-1] if stack else ("", "")
        foreign_context = namespace != "" and (namespace, top) not in INTEGRATION_POINTS
        closing = bool(match.group(1))
        if foreign_context and not closing and _breaks_out(name, match.group(3)):
            while stack and stack[-1][1] != "" and (stack[-1][1], stack[-1][0]) not in INTEGRATION_POINTS:
                stack.pop()  # the parser pops the foreign elements, then handles the tag as HTML
            foreign_context = False
            top, namespace = stack[-1] if stack else ("", "")
        if closing:
            if name in ("br", "p"):
                deepest = max(deepest, len(stack) + 1)  # </br> acts as <br>, a stray </p> inserts an empty <p>
            _end_tag(stack, name)
            continue
        in_foreign = foreign_context
        if in_foreign or name in ("svg", "math"):
            if _SELF_CLOSING.search(match.group(3)):
                deepest = max(deepest, len(stack) + 1)
                continue
            child_namespace = namespace if in_foreign else name
            if child_namespace == "math" and name == "annotation-xml" and _HTML_ENCODING.search(match.group(3)):
                child_namespace = "math+html"
            stack.append((name, child_namespace))
        else:
            if name == "isindex":  # html5lib expands it to <form><hr><label>…<input></label><hr></form>
                deepest = max(deepest, len(stack) + 3)
            if stack and ((name in _CLOSES_P and top == "p") or top in _IMPLIED_BY.get(name, ())):
                stack.pop()
            wrapper = _WRAPPERS.get(name)
            if wrapper is not None and (stack[-1][0] if stack else "") not in wrapper[1]:
                stack.extend((implied, "") for implied in wrapper[2])
            if name in _LEAVES_SELECT:
                names = [entry[0] for entry in stack]
                if "select" in names:
                    del stack[len(names) - 1 - names[::-1].index("select"):]
            if name in VOID_ELEMENTS:
                deepest = max(deepest, len(stack))
                continue
            if name in RAW_TEXT_ELEMENTS and not any(entry[0] in ("select", "frameset") for entry in stack):
                end = re.compile(rf"</{re.escape(name)}[{_WS}/>]", re.IGNORECASE).search(text, position)
                position = length if end is None else end.start()
            stack.append((name, ""))
        if len(stack) > deepest:
            deepest = len(stack)
        if stop_at is not None and deepest >= stop_at:
            return deepest
    return deepest


def depth_violation(text: str) -> str | None:
    """The one-line refusal for text nested deeper than :data:`MAX_DEPTH`, else ``None``."""
    depth = nesting_depth(text, stop_at=MAX_DEPTH + 1)
    if depth > MAX_DEPTH:
        return f"elements nest more than {MAX_DEPTH} levels deep: refused before parsing (a memory is one fact)"
    return None
