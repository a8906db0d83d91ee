"""Repository file names that are not valid UTF-8.

Git stores a path as bytes; our paths are ``str`` decoded with ``os.fsdecode`` (surrogateescape), so an
undecodable byte survives as a lone surrogate (``b"\\xfe"`` → ``"\\udcfe"``). Such a string cannot be written to
SQLite, JSON or the terminal, so every layer that meets one refuses the path with one finding instead of crashing
(our decision, docs/format.md).
"""

from __future__ import annotations

import os
from typing import Final

NOT_UTF8: Final[str] = "file name is not UTF-8"
"""The one-line reason reported for such a path (validate finding, indexer error entry)."""


def is_utf8_name(path: str) -> bool:
    """True when ``path`` encodes to UTF-8 (no lone surrogate left by a surrogateescape decode)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_name(path: str) -> str:
    """``path`` printable on one line: each undecodable byte as ``\\xNN`` (``"areas/bad\\xfename.html"``), other
    control characters escaped the same way. Always encodable as UTF-8."""
    text = os.fsencode(path).decode("utf-8", "backslashreplace")
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in text)
