"""The head editors as they were before the scan was memoised and the head end found without masking the article
(git_memhtml/document/editors.py at a79659f, kept verbatim below the imports): the oracle of
tests/store/test_editors_differential.py. Not imported by the package."""
from __future__ import annotations

import html as html_lib
import re
from dataclasses import dataclass
from typing import Final

from git_memhtml.document.model import META_ORDER, REL_CLASSES, REPEATABLE_METAS, Link, rel_from_token, rel_token
from git_memhtml.document.serialize import link_line, meta_line

_COMMENT: Final = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_HEAD_END: Final = re.compile(r"</head\s*>|<body[\s>/]|<article[\s>/]", re.IGNORECASE)
_TAG: Final = re.compile(
    r"<(meta|link)(?=[\s/>])((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>", re.IGNORECASE
)
_ATTR: Final = re.compile(r"([^\s\"'>/=]+)(?:\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s>]+)))?")


@dataclass(frozen=True)
class _Tag:
    kind: str  # "meta" | "link"
    start: int
    end: int
    attrs: dict[str, str]


def _head_end(html: str) -> int:
    """Offset where the head region ends (``</head>``, ``<body``, ``<article``, or the end of the text)."""
    masked = _COMMENT.sub(lambda match: " " * len(match.group(0)), html)
    match = _HEAD_END.search(masked)
    return match.start() if match else len(html)


def _scan(html: str) -> tuple[list[_Tag], int]:
    """``<meta>``/``<link>`` tags of the head region in source order, and the head's end offset."""
    end = _head_end(html)
    masked = _COMMENT.sub(lambda match: " " * len(match.group(0)), html[:end])
    tags: list[_Tag] = []
    for match in _TAG.finditer(masked):
        attrs: dict[str, str] = {}
        for attr in _ATTR.finditer(match.group(2)):
            value = next((group for group in attr.groups()[1:] if group is not None), "")
            attrs.setdefault(attr.group(1).lower(), html_lib.unescape(value))
        tags.append(_Tag(match.group(1).lower(), match.start(), match.end(), attrs))
    return tags, end


def _metas(tags: list[_Tag]) -> list[tuple[str, _Tag]]:
    """``(short name, tag)`` for every ``memhtml-`` meta."""
    return [
        (tag.attrs["name"][len("memhtml-") :], tag)
        for tag in tags
        if tag.kind == "meta" and tag.attrs.get("name", "").startswith("memhtml-")
    ]


def _links(tags: list[_Tag]) -> list[_Tag]:
    return [tag for tag in tags if tag.kind == "link" and tag.attrs.get("rel", "").startswith("memhtml-")]


def without_format_tags(html: str) -> str:
    """``html`` with every ``memhtml-`` meta and link tag of the head removed (lines as :func:`remove_meta` takes
    them): what no head editor writes — the rest of the head (title, charset, any other tag) and everything from
    the head's end on, the article's bytes among them. Two versions of a file with equal results differ in
    format metas and links only; ``sleep review`` calls any other change ``body-changed`` (issue 8 item 1)."""
    tags, _ = _scan(html)
    return _remove(html, [tag for _, tag in _metas(tags)] + _links(tags))


def _order(name: str) -> int:
    return META_ORDER.index(name) if name in META_ORDER else len(META_ORDER)


def _insert_before(html: str, offset: int, line: str) -> str:
    """Insert ``line`` as its own line before the tag at ``offset``."""
    line_start = html.rfind("\n", 0, offset) + 1
    if html[line_start:offset].strip() == "":
        return html[:line_start] + line + "\n" + html[line_start:]
    return html[:offset] + "\n" + line + "\n" + html[offset:]


def _insert_after(html: str, offset: int, line: str) -> str:
    """Insert ``line`` as its own line after the tag ending at ``offset``."""
    newline = html.find("\n", offset)
    line_end = len(html) if newline == -1 else newline
    if html[offset:line_end].strip() == "":
        if newline == -1:
            return html + "\n" + line
        return html[: newline + 1] + line + "\n" + html[newline + 1 :]
    return html[:offset] + "\n" + line + html[offset:]


def _remove(html: str, tags: list[_Tag]) -> str:
    """Delete tags back to front; a tag alone on its line takes the whole line with it."""
    for tag in sorted(tags, key=lambda item: item.start, reverse=True):
        line_start = html.rfind("\n", 0, tag.start) + 1
        newline = html.find("\n", tag.end)
        line_end = len(html) if newline == -1 else newline + 1
        alone = html[line_start : tag.start].strip() == "" and html[tag.end : line_end].strip() == ""
        html = html[:line_start] + html[line_end:] if alone else html[: tag.start] + html[tag.end :]
    return html


def _insert_meta(html: str, name: str, line: str) -> str:
    """Insert a meta line at its ``META_ORDER`` position: before the first meta sorting after it, else after
    the last meta sorting at or before it, else before the first memhtml link, else at the head's end."""
    tags, end = _scan(html)
    metas = _metas(tags)
    target = _order(name)
    after = next((tag for other, tag in metas if _order(other) > target), None)
    if after is not None:
        return _insert_before(html, after.start, line)
    before = [tag for other, tag in metas if _order(other) <= target]
    if before:
        return _insert_after(html, before[-1].end, line)
    links = _links(tags)
    return _insert_before(html, links[0].start if links else end, line)


def set_meta(html: str, name: str, value: str) -> str:
    """Set meta ``name`` to ``value``: replace the first same-name tag in place, or insert a line at its
    ``META_ORDER`` position. On a repeatable name this sets the first value (``add_meta`` appends).
    Unknown names return ``html`` unchanged."""
    if name not in META_ORDER:
        return html
    tags, _ = _scan(html)
    existing = next((tag for other, tag in _metas(tags) if other == name), None)
    if existing is not None:
        return html[: existing.start] + meta_line(name, value) + html[existing.end :]
    return _insert_meta(html, name, meta_line(name, value))


def add_meta(html: str, name: str, value: str) -> str:
    """Append a repeatable meta (``entity``/``tag``/``alias``) after its last sibling; idempotent on the value.
    A non-repeatable name behaves as :func:`set_meta` (a second line would be a violation). Unknown → no-op."""
    if name not in META_ORDER:
        return html
    if name not in REPEATABLE_METAS:
        return html if get_meta(html, name) == value else set_meta(html, name, value)
    tags, _ = _scan(html)
    present = [tag for other, tag in _metas(tags) if other == name]
    if any(tag.attrs.get("content", "") == value for tag in present):
        return html
    if present:
        return _insert_after(html, present[-1].end, meta_line(name, value))
    return _insert_meta(html, name, meta_line(name, value))


def remove_meta(html: str, name: str, value: str | None = None) -> str:
    """Delete every meta ``name`` (only those whose content equals ``value`` when given), whole lines."""
    tags, _ = _scan(html)
    doomed = [
        tag
        for other, tag in _metas(tags)
        if other == name and (value is None or tag.attrs.get("content", "") == value)
    ]
    return _remove(html, doomed)


def add_link(html: str, rel: str, href: str) -> str:
    """Append ``<link rel="memhtml-REL" href="HREF">`` after the last memhtml link (else after the last memhtml
    meta, else at the head's end); idempotent on ``(rel, href)``. Unknown rels are no-ops."""
    if rel not in REL_CLASSES:
        return html
    tags, end = _scan(html)
    links = _links(tags)
    token = rel_token(rel)
    if any(tag.attrs.get("rel") == token and tag.attrs.get("href") == href for tag in links):
        return html
    line = link_line(rel, href)
    if links:
        return _insert_after(html, links[-1].end, line)
    metas = _metas(tags)
    if metas:
        return _insert_after(html, metas[-1][1].end, line)
    return _insert_before(html, end, line)


def remove_link(html: str, rel: str, href: str | None = None) -> str:
    """Delete memhtml links of ``rel`` (only the one pointing at ``href`` when given), whole lines."""
    token = rel_token(rel)
    tags, _ = _scan(html)
    doomed = [
        tag for tag in _links(tags) if tag.attrs.get("rel") == token and (href is None or tag.attrs.get("href") == href)
    ]
    return _remove(html, doomed)


def get_meta(html: str, name: str) -> str | None:
    """Content of the first head meta ``name`` (short form), or ``None``."""
    return next((tag.attrs.get("content", "") for other, tag in _metas(_scan(html)[0]) if other == name), None)


def get_metas(html: str, name: str) -> list[str]:
    """Contents of every head meta ``name`` (short form), in source order."""
    return [tag.attrs.get("content", "") for other, tag in _metas(_scan(html)[0]) if other == name]


def get_links(html: str) -> list[Link]:
    """Every head link with a known ``memhtml-`` rel and a non-empty href, in source order."""
    links: list[Link] = []
    for tag in _links(_scan(html)[0]):
        rel = rel_from_token(tag.attrs.get("rel", ""))
        href = tag.attrs.get("href", "")
        if rel is not None and href:
            links.append(Link(rel=rel, href=href))
    return links
