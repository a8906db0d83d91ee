"""Format constraints of a memory file (docs/format.md §1.2 head rules, §1.3 links, §1.7).

Pure predicates over one parsed tree. Every violation is collected in one pass (nothing short-circuits, nothing
repairs); warnings never block. Each message is one line naming the offending element or value.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final
from xml.etree.ElementTree import Element

from git_memhtml.document.allowlist import (
    FORBIDDEN_PRESENTATION,
    VOCABULARY,
    attribute_allowed,
    attribute_name,
    element_allowed,
    http_equiv_allowed,
    is_handler,
    refused_link_rels,
)
from git_memhtml.document.hash import canonical_text_of, iter_elements, js_trim, parse_document, tag_of
from git_memhtml.document.meta_values import (
    MetaValues,
    is_valid_datetime,
    js_number,
    read_meta_values,
    show,
)
from git_memhtml.document.model import META_ORDER, REPEATABLE_METAS, REQUIRED_METAS, rel_from_token
from git_memhtml.document.urls import is_refresh, refused_scheme
from git_memhtml.errors import InvalidMemory

__all__ = [
    "LANG_TOKEN",
    "META_PREFIX",
    "CheckResult",
    "MetaValues",
    "check_document",
    "check_tree",
    "head_metas",
    "head_of",
    "is_root_relative_href",
    "is_valid_datetime",
    "js_number",
    "read_meta_values",
    "show",
]

META_PREFIX: Final[str] = "memhtml-"
"""Prefix of every format meta name and link rel token (docs/format.md §1.2, §1.3)."""

KNOWN_ELEMENTS: Final[frozenset[str]] = VOCABULARY - {"div", "span"}
"""The closed element vocabulary (docs/format.md §1.4); a tolerated element outside it warns once per name, any other
element is refused (:mod:`git_memhtml.document.allowlist`)."""

FIGURE_SCOPED_ELEMENTS: Final[frozenset[str]] = frozenset({"div", "span"})
"""Allowed only under a ``<figure>`` (docs/format.md §1.4)."""

FORBIDDEN_ELEMENTS: Final[frozenset[str]] = frozenset({"script", "style"})
"""Refused with the "neither executes nor styles" message (docs/format.md §1.7 rule 3); every other element outside the
allowlist gets the generic refusal."""

LANG_TOKEN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+#.-]*\Z")
"""Valid ``data-lang`` value (docs/format.md §1.4)."""

@dataclass(frozen=True)
class CheckResult:
    """Outcome of checking one tree: violations and warnings in rule order, then document order."""

    violations: tuple[str, ...]
    warnings: tuple[str, ...]
    article: Element | None


def is_root_relative_href(href: str) -> bool:
    """True when ``href`` starts with ``/`` (not ``//``), holds no backslash, and no path segment is empty, ``.``
    or ``..``; query and fragment are ignored (docs/format.md §1.3). A percent-encoded dot counts as a dot (``%2e``,
    ``%2E``, ``.%2e``, ``%2e%2e`` …), because the WHATWG URL parser treats those segments as dot segments."""
    if not href.startswith("/") or href.startswith("//") or "\\" in href:
        return False  # WHATWG treats "\\" as "/" in special URLs, so a backslash could hide a dot segment
    path = re.split(r"[?#]", href, maxsplit=1)[0]
    return all(segment.lower().replace("%2e", ".") not in ("", ".", "..") for segment in path[1:].split("/"))


def parent_map(root: Element) -> dict[Element, Element]:
    """Child → parent for every node of a tree (etree has no parent pointers)."""
    return {child: parent for parent in root.iter() for child in parent}


def _has_ancestor(node: Element, name: str, parents: dict[Element, Element]) -> bool:
    cursor = parents.get(node)
    while cursor is not None:
        if tag_of(cursor) == name:
            return True
        cursor = parents.get(cursor)
    return False


def _is_within(node: Element, ancestor: Element, parents: dict[Element, Element]) -> bool:
    cursor: Element | None = node
    while cursor is not None:
        if cursor is ancestor:
            return True
        cursor = parents.get(cursor)
    return False


def head_of(root: Element) -> Element | None:
    """The ``<head>`` element of a parsed document, or ``None``."""
    return next(iter_elements(root, "head"), None)


def head_metas(root: Element) -> list[tuple[str, str]]:
    """Every ``<meta name>`` in ``<head>`` as ``(full name, content)`` in document order."""
    head = head_of(root)
    if head is None:
        return []
    return [
        (str(meta.get("name")), str(meta.get("content", "")))
        for meta in iter_elements(head, "meta")
        if meta.get("name") is not None
    ]


def _direct_text(element: Element) -> str:
    parts = [element.text or ""] + [child.tail or "" for child in element]
    return js_trim("".join(parts))


def _check_head(root: Element) -> list[str]:
    violations: list[str] = []
    titles = list(iter_elements(root, "title"))
    if len(titles) != 1:
        violations.append(f"{len(titles)} <title> elements: a memory needs exactly one")
    elif _direct_text(titles[0]) == "":
        violations.append("empty <title>")
    counts = Counter(name for name, _ in head_metas(root))
    for required in REQUIRED_METAS:
        if counts[META_PREFIX + required] == 0:
            violations.append(f'missing required <meta name="memhtml-{required}">')
    for name, count in counts.items():
        if not name.startswith(META_PREFIX):
            continue
        short = name[len(META_PREFIX) :]
        if short not in META_ORDER:
            violations.append(f"<meta name={show(name)}> is not in the closed meta vocabulary")
        elif count > 1 and short not in REPEATABLE_METAS:
            violations.append(f'<meta name="{name}"> appears {count} times but is not repeatable')
    return violations


def _check_article(root: Element) -> tuple[Element | None, list[str]]:
    articles = list(iter_elements(root, "article"))
    if len(articles) == 1:
        return articles[0], []
    if not articles:
        return None, ["no <article>: a memory needs exactly one"]
    return None, [f"{len(articles)} <article> elements: a memory needs exactly one"]


def _check_mark(article: Element, parents: dict[Element, Element]) -> list[str]:
    marks = list(iter_elements(article, "mark"))
    if not marks:
        return ["no <mark> in the <article>: the claim span is required"]
    if len(marks) > 1:
        return [f"{len(marks)} <mark> elements in the <article>: exactly one is the claim"]
    mark = marks[0]
    violations: list[str] = []
    if js_trim(canonical_text_of(mark, skip_code=True)) == "":
        violations.append("empty <mark>: the claim must have text outside <code>/<pre>")
    folded = [
        f"<mark> inside <{name}>: the claim must not be {why}"
        for name, why in (("aside", "an aside"), ("details", "behind a fold"))
        if _has_ancestor(mark, name, parents)
    ]
    if folded:
        return violations + folded
    first_block = next(iter_elements(article, "p", "li"), None)
    if first_block is None:
        violations.append("<mark> is not in a <p> or <li>: the claim must lead the article")
    elif not _is_within(mark, first_block, parents):
        violations.append(f"<mark> is not in the first <{tag_of(first_block)}>: the claim must lead the article")
    return violations


def _check_times(root: Element) -> list[str]:
    violations: list[str] = []
    for time in iter_elements(root, "time"):
        value = time.get("datetime")
        if value is None:
            violations.append(f"<time> without datetime: {show(_direct_text(time), 40)}")
        elif not is_valid_datetime(value):
            violations.append(f"<time datetime={show(value)}> is not a valid ISO date or datetime")
    return violations


_NAMESPACE_NAMES: Final[dict[str, str]] = {
    "http://www.w3.org/2000/svg": "SVG",
    "http://www.w3.org/1998/Math/MathML": "MathML",
}


_PLAIN_NAME: Final = re.compile(r"[a-z0-9_:.-]+\Z")


def _element_refusal(raw_tag: str, tag: str) -> str:
    if raw_tag.startswith("{"):
        namespace = _NAMESPACE_NAMES.get(raw_tag[1 : raw_tag.index("}")], "foreign")
        return f"<{tag}> ({namespace}) is not allowed: a memory file holds no SVG or MathML content"
    if tag in FORBIDDEN_ELEMENTS:
        return f"<{tag}> is forbidden: a memory file neither executes nor styles"
    return f"<{tag}> is not allowed: a memory file holds no active, embedded or unknown element"


def _attribute_refusals(element: Element, tag: str, allowed: bool) -> list[str]:
    found: list[str] = []
    for key, value in element.attrib.items():
        name = attribute_name(str(key))
        shown = name if _PLAIN_NAME.match(name) else show(name)
        if name in FORBIDDEN_PRESENTATION:
            found.append(f"{name} attribute on <{tag}>: presentation is not memory")
        elif is_handler(name):
            found.append(f"{shown} handler on <{tag}>: a memory file does not execute")
        elif allowed and not attribute_allowed(tag, str(key)):
            found.append(f"{shown} attribute on <{tag}> is not allowed (closed attribute list)")
        scheme = refused_scheme(name, str(value))
        if scheme is not None:
            found.append(f"{name}={show(str(value))} on <{tag}> is a {scheme} URL")
    return found


def _value_refusals(element: Element, tag: str) -> list[str]:
    found: list[str] = []
    if tag == "meta":
        equiv = element.get("http-equiv")
        if is_refresh(equiv):
            found.append('<meta http-equiv="refresh"> is forbidden: a memory file does not redirect')
        elif equiv is not None and not http_equiv_allowed(equiv):
            found.append(f"<meta http-equiv={show(equiv)}> is not allowed: only content-type and content-language")
    if tag == "link":
        rel = element.get("rel") or ""
        refused = refused_link_rels(rel)
        if refused:
            found.append(f"<link rel={show(rel)}> is not allowed: {show(' '.join(refused))} makes a browser fetch "
                         "or apply content (only memhtml- and inert rels)")
    return found


def _check_active_content(root: Element) -> list[str]:
    """Everything the closed allowlist refuses (:mod:`git_memhtml.document.allowlist`), in document order, each
    distinct message once."""
    violations: list[str] = []
    for element in iter_elements(root):
        raw_tag = str(element.tag)
        tag = tag_of(element) or ""
        if not _PLAIN_NAME.match(tag):
            tag = show(tag)  # an untrusted tag name (control characters …) is quoted in the one-line message
        allowed = element_allowed(raw_tag)
        if not allowed:
            violations.append(_element_refusal(raw_tag, tag))
        else:
            violations.extend(_value_refusals(element, tag))
        violations.extend(_attribute_refusals(element, tag, allowed))
    return list(dict.fromkeys(violations))


def _check_links(root: Element) -> list[str]:
    head = head_of(root)
    if head is None:
        return []
    violations: list[str] = []
    for link in iter_elements(head, "link"):
        rel = link.get("rel")
        if rel is None or not rel.startswith(META_PREFIX):
            continue
        if rel_from_token(rel) is None:
            violations.append(f"<link rel={show(rel)}> is not in the closed link vocabulary")
        href = link.get("href")
        if not href:
            violations.append(f'<link rel="{rel}"> has no href')
        elif not is_root_relative_href(href):
            violations.append(f'<link rel="{rel}" href={show(href)}> is not root-relative ("/path")')
    return violations


def _near_miss_warnings(root: Element) -> list[str]:
    """Head metas and links that look like format ones but are not matched (the parser and the index read only
    an exact lower-case ``memhtml-`` meta name or a single exact rel token): a name or rel starting ``memhtml-``
    in another case, or a multi-token rel containing a ``memhtml-`` token. One warning each, naming it."""
    head = head_of(root)
    if head is None:
        return []
    warnings: list[str] = []
    for meta in iter_elements(head, "meta"):
        name = meta.get("name")
        if name is not None and not name.startswith(META_PREFIX) and js_trim(name).lower().startswith(META_PREFIX):
            warnings.append(
                f'<meta name={show(name)}> is ignored: format meta names are lower-case "memhtml-…" exactly'
            )
    for link in iter_elements(head, "link"):
        rel = link.get("rel")
        if rel is None or rel.startswith(META_PREFIX):
            continue
        if any(token.lower().startswith(META_PREFIX) for token in rel.split()):
            warnings.append(f'<link rel={show(rel)}> is ignored: a format link rel is one lower-case "memhtml-…" token')
    return warnings


def _collect_warnings(root: Element, parents: dict[Element, Element]) -> list[str]:
    seen: set[str] = set()
    warnings: list[str] = []

    def push(key: str, message: str) -> None:
        if key not in seen:
            seen.add(key)
            warnings.append(message)

    for element in iter_elements(root):
        tag = tag_of(element) or ""
        lang = element.get("data-lang")
        if lang is not None and not LANG_TOKEN.match(lang):
            push(f"lang:{lang}", f"data-lang={show(lang)} is not a language token")
        if tag in FIGURE_SCOPED_ELEMENTS:
            if not _has_ancestor(element, "figure", parents):
                push(f"scoped:{tag}", f"<{tag}> outside a <figure>: use a semantic element")
        elif tag not in KNOWN_ELEMENTS and element_allowed(str(element.tag)):
            push(f"unknown:{tag}", f"<{tag}> is not in the closed element vocabulary")
    return warnings


def check_tree(root: Element) -> CheckResult:
    """Check a parsed document against every rule of docs/format.md §1.2/§1.3/§1.7 in one pass.

    Returns:
        :class:`CheckResult` with violations (head, article, mark, times, scripting, links, meta values) and
        warnings (dropped optional metas, near-miss ``MEMHTML-…`` meta names and rels, unknown elements, stray
        div/span, bad ``data-lang``), plus the
        article element when there is exactly one.
    """
    parents = parent_map(root)
    article, article_violations = _check_article(root)
    values = read_meta_values(_short_metas(head_metas(root)))
    meta_violations, meta_warnings = values.violations, values.warnings
    violations = [
        *_check_head(root),
        *article_violations,
        *(_check_mark(article, parents) if article is not None else []),
        *_check_times(root),
        *_check_active_content(root),
        *_check_links(root),
        *meta_violations,
    ]
    warnings = [*meta_warnings, *_near_miss_warnings(root), *_collect_warnings(root, parents)]
    return CheckResult(tuple(violations), tuple(warnings), article)


def _short_metas(metas: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(name[len(META_PREFIX) :], value) for name, value in metas if name.startswith(META_PREFIX)]


def check_document(html: str) -> tuple[list[str], list[str]]:
    """Check a whole file's text; returns ``(violations, warnings)``. Total: never raises."""
    try:
        root = parse_document(html)
    except InvalidMemory as exc:
        return list(exc.violations), []
    result = check_tree(root)
    return list(result.violations), list(result.warnings)
