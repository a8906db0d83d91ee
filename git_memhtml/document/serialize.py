"""Byte-exact serialization of memory files (docs/format.md §1.1).

Two writers live here: the canonical article markup writer (attributes sorted by name, fixed escapes, voids
unclosed, comments kept, the ``<pre>`` leading-newline fix-up that makes re-serialization a fixed point) and
:func:`serialize_memory`, the whole-file layout with one head line per meta/link in ``META_ORDER``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final
from xml.etree.ElementTree import Element

from git_memhtml.document.hash import js_trim, parse_fragment, tag_of
from git_memhtml.document.model import META_ORDER, REL_CLASSES, Link, rel_token
from git_memhtml.errors import InvalidMemory

VOID_ELEMENTS: Final[frozenset[str]] = frozenset(
    {
        "area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "img", "input",
        "keygen", "link", "meta", "param", "source", "track", "wbr",
    }
)
"""Elements written as a start tag alone (WHATWG serialization; docs/format.md §1.1 "voids unclosed")."""

RAW_TEXT_ELEMENTS: Final[frozenset[str]] = frozenset(
    {"style", "script", "xmp", "iframe", "noembed", "noframes", "plaintext"}
)
"""Elements whose text children are written unescaped (WHATWG serialization)."""

NEWLINE_SWALLOWING_ELEMENTS: Final[frozenset[str]] = frozenset({"pre", "textarea", "listing"})
"""The parser eats one newline after these start tags, so the writer re-emits one (docs/format.md §1.1)."""

PREAMBLE: Final[tuple[str, ...]] = ("<!doctype html>", '<html lang="en">', "<head>", '<meta charset="utf-8">')
"""The first four lines of every file, byte for byte (docs/format.md §1.1)."""

POSTAMBLE: Final[tuple[str, ...]] = ("</article>", "</body>", "</html>")
"""The last three lines of every file (docs/format.md §1.1)."""


def escape_text(text: str) -> str:
    """Escape a text run: ``&``, ``<``, ``>`` and U+00A0 → ``&nbsp;`` (docs/format.md §1.1)."""
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\u00a0", "&nbsp;")
    )


def escape_attribute(value: str) -> str:
    """Escape a double-quoted attribute value: ``&``, ``"``, U+00A0, and CR/LF as ``&#13;``/``&#10;``.

    Line breaks become references so every head ``<meta>``/``<link>`` stays one source line (the editors
    splice by lines); this matches the original writer.
    """
    return (
        value.replace("&", "&amp;")
        .replace('"', "&quot;")
        .replace("\u00a0", "&nbsp;")
        .replace("\r", "&#13;")
        .replace("\n", "&#10;")
    )


def _attr_name(key: str) -> str:
    return key[key.index("}") + 1 :] if key.startswith("{") else key


def start_tag(element: Element, tag: str) -> str:
    """A start tag with attributes sorted by name, values double-quoted and escaped."""
    attrs = sorted((_attr_name(str(key)), str(value)) for key, value in element.attrib.items())
    rendered = "".join(f' {name}="{escape_attribute(value)}"' for name, value in attrs)
    return f"<{tag}{rendered}>"


def write_children(parent: Element) -> str:
    """The canonical markup of ``parent``'s children (the parent itself excluded). Iterative."""
    out: list[str] = []
    parent_tag = tag_of(parent) or ""
    # A frame is an element to open, or a literal string to emit.
    stack: list[Element | str] = []
    _push_children(parent, parent_tag in RAW_TEXT_ELEMENTS, stack)
    while stack:
        frame = stack.pop()
        if isinstance(frame, str):
            out.append(frame)
            continue
        tag = tag_of(frame)
        if tag is None:
            out.append(f"<!--{frame.text or ''}-->")
            continue
        out.append(start_tag(frame, tag))
        if tag in VOID_ELEMENTS:
            continue
        stack.append(f"</{tag}>")
        if tag in NEWLINE_SWALLOWING_ELEMENTS and frame.text and frame.text.startswith("\n"):
            out.append("\n")
        _push_children(frame, tag in RAW_TEXT_ELEMENTS, stack)
    return "".join(out)


def _push_children(element: Element, raw: bool, stack: list[Element | str]) -> None:
    for child in reversed(list(element)):
        if child.tail:
            stack.append(child.tail if raw else escape_text(child.tail))
        stack.append(child)
    if element.text:
        stack.append(element.text if raw else escape_text(element.text))


def inner_html(parent: Element) -> str:
    """Canonical inner HTML of an element, trimmed (ECMAScript trim) so serialization is a fixed point."""
    return js_trim(write_children(parent))


def canonical_article_html(article_html: str) -> str:
    """Re-serialize article inner HTML canonically: parsed in ``<article>`` context, then :func:`inner_html`."""
    return inner_html(parse_fragment(article_html))


def meta_line(name: str, value: str) -> str:
    """One head meta line for a short name: ``<meta name="memhtml-NAME" content="VALUE">``."""
    return f'<meta name="{escape_attribute("memhtml-" + name)}" content="{escape_attribute(value)}">'


def link_line(rel: str, href: str) -> str:
    """One head link line for an underscore rel: ``<link rel="memhtml-REL" href="HREF">``."""
    return f'<link rel="{escape_attribute(rel_token(rel))}" href="{escape_attribute(href)}">'


def order_metas(metas: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Sort ``(short name, value)`` pairs into ``META_ORDER``, stable within a name (repeatables keep order).

    Raises:
        InvalidMemory: a name outside ``META_ORDER`` (docs/format.md §1.2: unknown ``memhtml-`` names are violations).
    """
    position = {name: index for index, name in enumerate(META_ORDER)}
    unknown = [name for name, _ in metas if name not in position]
    if unknown:
        raise InvalidMemory(
            f"unknown meta name(s): {', '.join(sorted(set(unknown)))}",
            violations=[f"meta memhtml-{name} is not in the closed vocabulary" for name in sorted(set(unknown))],
            hint="use short meta names from META_ORDER (e.g. 'type', 'confidence', 'tag'), without 'memhtml-'",
        )
    return sorted(metas, key=lambda pair: position[pair[0]])


def serialize_memory(
    *, title: str, metas: Sequence[tuple[str, str]], links: Sequence[Link], article_html: str,
    canonical: bool = False,
) -> str:
    """Render a whole memory file, byte-exact per docs/format.md §1.1.

    Args:
        title: the ``<title>`` text (escaped, written as given).
        metas: ``(short name, value)`` pairs; sorted into ``META_ORDER`` (stable for repeatables).
        links: head links in the order given; ``rel`` in underscore form, ``href`` root-relative.
        article_html: article inner HTML; re-parsed and written canonically, trimmed.
        canonical: ``article_html`` is written as given (the caller vouches it is canonical, or checks it after
            its own parse of the whole file: ``template.render_checked``).

    Returns:
        The file text: lines joined by ``"\\n"`` with a trailing ``"\\n"``.

    Raises:
        InvalidMemory: an unknown meta name or link rel (nothing is written for a file that cannot validate).
    """
    bad_rels = sorted({link.rel for link in links if link.rel not in REL_CLASSES})
    if bad_rels:
        raise InvalidMemory(
            f"unknown link rel(s): {', '.join(bad_rels)}",
            violations=[f"link rel {rel!r} is outside the closed vocabulary" for rel in bad_rels],
            hint="use a rel from REL_CLASSES in underscore form, e.g. 'relates_to'",
        )
    lines = [*PREAMBLE, f"<title>{escape_text(title)}</title>"]
    lines.extend(meta_line(name, value) for name, value in order_metas(metas))
    lines.extend(link_line(link.rel, link.href) for link in links)
    article = article_html if canonical else canonical_article_html(article_html)
    lines.extend(("</head>", "<body>", "<article>", article, *POSTAMBLE))
    return "\n".join(lines) + "\n"
