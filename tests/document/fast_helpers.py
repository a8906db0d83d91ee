"""The differential oracle of the two parsers (docs/format.md "Two parsers"): the fast path against html5lib alone."""

from __future__ import annotations

from dataclasses import fields
from xml.etree.ElementTree import Element

from git_memhtml.document.fast import fast_tree
from git_memhtml.document.hash import parse_document
from git_memhtml.document.model import MemoryDocument
from git_memhtml.document.parse import decode_memory, parse_memory
from git_memhtml.errors import InvalidMemory


def same_tree(a: Element, b: Element) -> str | None:
    """The first difference of two etree trees (tag, attributes in order, text, tail, children), or ``None``."""
    stack = [(a, b, "html")]
    while stack:
        x, y, where = stack.pop()
        if x.tag != y.tag:
            return f"{where}: tag {x.tag!r} != {y.tag!r}"
        if list(x.attrib.items()) != list(y.attrib.items()):
            return f"{where}: attributes {x.attrib!r} != {y.attrib!r}"
        if (x.text or "") != (y.text or ""):
            return f"{where}: text {x.text!r} != {y.text!r}"
        if (x.tail or "") != (y.tail or ""):
            return f"{where}: tail {x.tail!r} != {y.tail!r}"
        if len(x) != len(y):
            return f"{where}: {len(x)} children != {len(y)}"
        stack.extend((cx, cy, f"{where}/{cx.tag}") for cx, cy in zip(x, y, strict=True))
    return None


def _outcome(data: bytes | str, *, fast: bool) -> MemoryDocument | InvalidMemory:
    try:
        return parse_memory(data, path="areas/x.html", fast=fast)
    except InvalidMemory as exc:
        return exc


def agree(data: bytes | str) -> bool:
    """Assert the fast path and html5lib give the same verdict, the same :class:`MemoryDocument` (every field but
    the ``article_digest`` cache key, which html5lib never sets) and, whenever the fast parser vouches for a tree,
    the same tree. Returns whether the fast parser built the tree."""
    want = _outcome(data, fast=False)
    got = _outcome(data, fast=True)
    if isinstance(want, InvalidMemory):
        assert isinstance(got, InvalidMemory), f"html5lib refuses ({want.violations}), the fast path accepts"
        assert (got.message, got.violations, got.hint, got.path) == (want.message, want.violations, want.hint,
                                                                     want.path)
    else:
        assert isinstance(got, MemoryDocument), f"html5lib accepts, the fast path refuses: {got.violations}"
        for f in fields(MemoryDocument):
            if f.name != "article_digest":
                assert getattr(got, f.name) == getattr(want, f.name), f"{f.name} differs"
    try:
        text = decode_memory(data)
    except InvalidMemory:
        return False
    tree = fast_tree(text)
    if tree is None:
        return False
    try:
        reference = parse_document(text)
    except InvalidMemory as exc:  # html5lib itself failed: the fast path must never have vouched
        raise AssertionError(f"fast path vouched for markup html5lib fails on: {exc.message}") from None
    difference = same_tree(tree, reference)
    assert difference is None, difference
    return True
