"""Edit a JSON document as text: add one member or one array element without touching any other byte (docs/agents.md).

An agent's JSON configuration belongs to its user: their spacing, key order and unicode stay as they wrote them.
So an install never re-serialises a file; it finds where an object or array ends (a small span scanner over text
that :func:`json.loads` has already accepted) and inserts one piece of text there. What it inserted is a
:class:`Splice` (offset and text), so the unchanged file is put back by cutting exactly that text out again.

Shapes: a *key path* is a tuple of object keys from the root (``("hooks", "UserPromptSubmit")``); the root must be
an object. Values are plain JSON values (``dict``/``list``/``str``/numbers/``bool``/``None``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

INDENT_STEP = 2
"""Spaces per nesting level for the text we insert when the file gives no indentation to copy (JSON's common
two-space style, the one ``claude mcp add`` and Cursor write)."""


@dataclass(frozen=True)
class Splice:
    """Text inserted at ``offset`` (a character offset into the document as it was just before the insertion)."""

    offset: int
    text: str


@dataclass
class _Node:
    """One JSON value's span ``[start, end)``; objects keep ``(key, key_start, child)``, arrays their items."""

    kind: str  # "object" | "array" | "scalar"
    start: int
    end: int = 0
    members: list[tuple[str, int, _Node]] = field(default_factory=list)
    items: list[_Node] = field(default_factory=list)


class _Scanner:
    """Spans of a document that is already valid JSON (so the scanner checks nothing)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def _skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
            self.pos += 1

    def _string_end(self, start: int) -> int:
        i = start + 1
        while self.text[i] != '"':
            i += 2 if self.text[i] == "\\" else 1
        return i + 1

    def value(self) -> _Node:
        self._skip()
        start = self.pos
        ch = self.text[start]
        if ch == "{":
            node = _Node("object", start)
            self.pos += 1
            self._skip()
            while self.text[self.pos] != "}":
                key_start = self.pos
                key_end = self._string_end(key_start)
                key = json.loads(self.text[key_start:key_end])
                self.pos = key_end
                self._skip()
                self.pos += 1  # ':'
                node.members.append((key, key_start, self.value()))
                self._skip()
                if self.text[self.pos] == ",":
                    self.pos += 1
                    self._skip()
            self.pos += 1
        elif ch == "[":
            node = _Node("array", start)
            self.pos += 1
            self._skip()
            while self.text[self.pos] != "]":
                node.items.append(self.value())
                self._skip()
                if self.text[self.pos] == ",":
                    self.pos += 1
                    self._skip()
            self.pos += 1
        elif ch == '"':
            node = _Node("scalar", start)
            self.pos = self._string_end(start)
        else:
            node = _Node("scalar", start)
            while self.pos < len(self.text) and self.text[self.pos] not in ",]} \t\r\n":
                self.pos += 1
        node.end = self.pos
        return node


def _find(root: _Node, path: Sequence[str]) -> _Node:
    node = root
    for key in path:
        matches = [child for name, _, child in node.members if name == key]
        node = matches[-1]  # JSON parsers keep the last of duplicate keys
    return node


def _line_indent(text: str, offset: int) -> str:
    """The leading whitespace of the line holding ``offset``."""
    line_start = text.rfind("\n", 0, offset) + 1
    i = line_start
    while i < len(text) and text[i] in " \t":
        i += 1
    return text[line_start:i]


def _dump(value: Any, indent: str) -> str:
    """``value`` as indented JSON whose continuation lines start with ``indent`` (JSON escapes keep any string
    data, quotes and newlines included, as data)."""
    text = json.dumps(value, indent=INDENT_STEP, ensure_ascii=False)
    return text.replace("\n", "\n" + indent)


def _insert(text: str, container: _Node, piece: str) -> Splice:
    """Insert ``piece`` (a member ``"k": v`` or an element) as the last entry of ``container``."""
    children = [child for _, _, child in container.members] if container.kind == "object" else container.items
    starts = [key_start for _, key_start, _ in container.members] if container.kind == "object" else [
        c.start for c in container.items]
    if children:
        last_start, last = starts[-1], children[-1]
        multiline = "\n" in text[container.start:last_start]
        indent = _line_indent(text, last_start) if multiline else ""
        sep = ",\n" + indent if multiline else ", "
        return Splice(last.end, sep + piece.replace("\n", "\n" + indent) if multiline else sep + piece)
    outer = _line_indent(text, container.start)
    inner = outer + " " * INDENT_STEP
    return Splice(container.start + 1, "\n" + inner + piece.replace("\n", "\n" + inner) + "\n" + outer)


def add_member(text: str, path: Sequence[str], key: str, value: Any) -> Splice:
    """Where to insert member ``key: value`` as the last member of the object at ``path`` in ``text``.

    ``text`` must be valid JSON whose root is an object, with an object at ``path`` that lacks ``key`` (the
    caller checks both on the parsed document).
    """
    container = _find(_Scanner(text).value(), path)
    return _insert(text, container, json.dumps(key, ensure_ascii=False) + ": " + _dump(value, ""))


def add_element(text: str, path: Sequence[str], value: Any) -> Splice:
    """Where to insert ``value`` as the last element of the array at ``path`` in ``text`` (valid JSON)."""
    container = _find(_Scanner(text).value(), path)
    return _insert(text, container, _dump(value, ""))


def apply(text: str, splice: Splice) -> str:
    """``text`` with ``splice`` inserted."""
    return text[:splice.offset] + splice.text + text[splice.offset:]


def unapply(text: str, splice: Splice) -> str | None:
    """``text`` with ``splice`` cut out again, or ``None`` when the text at its offset is no longer exactly it."""
    end = splice.offset + len(splice.text)
    if text[splice.offset:end] != splice.text:
        return None
    return text[:splice.offset] + text[end:]


def cut_once(text: str, piece: str) -> str | None:
    """``text`` with the one occurrence of ``piece`` removed, or ``None`` when it occurs zero or several times."""
    if not piece or text.count(piece) != 1:
        return None
    return text.replace(piece, "", 1)
