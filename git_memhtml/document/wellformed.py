"""Whole-file validation of one memory file: WHATWG parse errors plus the format constraints.

This is the check behind ``git memhtml validate`` and the ``memhtml-validate`` pre-commit hook
(docs/git.md §3, §7.1). It is stricter than :func:`git_memhtml.document.parse.parse_memory`: on top
of every rule of docs/format.md §1.2/§1.3/§1.7 it refuses the parse errors html5lib reports
(``expected-doctype-but-got-start-tag``, ``unexpected-end-tag`` …), because a file the HTML parsing algorithm has
to repair can build different trees in different parsers. html5lib reports parse errors only, never conformance
errors (docs/git.md §7.1), so the closed vocabulary stays our own check.

Pure: bytes in, findings out; one parse per file. Never raises on any input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final
from xml.etree.ElementTree import Element

import html5lib
from html5lib.constants import E as PARSE_ERROR_MESSAGES

from git_memhtml.document.hash import SCRIPTING, parser_failed
from git_memhtml.document.parse import decode_memory
from git_memhtml.document.validate import check_tree
from git_memhtml.errors import InvalidMemory

MAX_PARSE_ERRORS: Final[int] = 10
"""Parse errors listed per file before the rest are summarised in one line (keeps a broken file's report
readable; our decision, docs/format.md)."""

_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class FileCheck:
    """Outcome of checking one file's bytes: one-line ``violations`` (fail) and ``warnings`` (shown only)."""

    violations: tuple[str, ...]
    warnings: tuple[str, ...]


def _one_line(text: str, limit: int = 200) -> str:
    flat = _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)
    return flat if len(flat) <= limit else flat[:limit] + "…"


def parse_error_message(position: tuple[int, int] | None, code: str, datavars: object) -> str:
    """Render one html5lib parse error as ``"line L col C: HTML parse error: <message> [<code>]"``.

    ``position`` is html5lib's ``(line, column)`` (line 1-based). Untrusted text inside the message (tag or
    attribute names) is flattened to one line and truncated.
    """
    template = PARSE_ERROR_MESSAGES.get(code, code)
    try:
        message = template % datavars if isinstance(datavars, dict) and datavars else template
    except (KeyError, TypeError, ValueError):
        message = template
    where = f"line {position[0]} col {position[1]}: " if position else ""
    return _one_line(f"{where}HTML parse error: {message} [{code}]")


def parse_with_errors(text: str) -> tuple[Element, list[str]]:
    """Parse a whole document with ``html5lib.HTMLParser(strict=False)``; return the ``<html>`` element (the
    same tree :func:`git_memhtml.document.hash.parse_document` builds) and the rendered parse errors, capped at
    :data:`MAX_PARSE_ERRORS` plus one summary line."""
    parser = html5lib.HTMLParser(strict=False, namespaceHTMLElements=False)
    try:
        root: Element = parser.parse(text, scripting=SCRIPTING)
    except Exception as exc:
        raise parser_failed(exc) from exc
    errors = [parse_error_message(position, code, datavars) for position, code, datavars in parser.errors]
    if len(errors) > MAX_PARSE_ERRORS:
        extra = len(errors) - MAX_PARSE_ERRORS
        errors = errors[:MAX_PARSE_ERRORS] + [f"{extra} more HTML parse error{'s' if extra > 1 else ''} not shown"]
    return root, errors


def check_memory_bytes(data: bytes) -> FileCheck:
    """Check one memory file's bytes.

    Args:
        data: the file content (must be UTF-8, non-empty, at most ``parse.MAX_FILE_BYTES``).

    Returns:
        :class:`FileCheck`: violations = undecodable/empty/oversized input (alone), else the WHATWG parse errors
        followed by every format violation (docs/format.md §1.7 order); warnings = dropped optional metas, unknown
        elements (once per name), stray ``div``/``span``, bad ``data-lang``.
    """
    try:
        text = decode_memory(data)
    except InvalidMemory as exc:
        return FileCheck(violations=exc.violations, warnings=())
    try:
        root, parse_errors = parse_with_errors(text)
    except InvalidMemory as exc:
        return FileCheck(violations=exc.violations, warnings=())
    result = check_tree(root)
    return FileCheck(violations=(*parse_errors, *result.violations), warnings=result.warnings)
