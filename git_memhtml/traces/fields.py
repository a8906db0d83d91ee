"""Small readers shared by both transcript parsers: one JSON line, an instant, a slug (docs/traces.md §2)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

_SLUG_CHARS = re.compile(r"[^A-Za-z0-9]")


def json_object(line: bytes) -> dict[str, Any] | None:
    """The JSON object on ``line`` (strict UTF-8), or ``None`` when the line is not UTF-8, not JSON, or holds
    another JSON value (an array, a number, a string). A blank line is ``None`` too."""
    try:
        value = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def utc_instant(value: object) -> str:
    """``value`` (an ISO 8601 instant, ``Z`` or an offset; a naive one is read as UTC) as
    ``YYYY-MM-DDTHH:MM:SS.mmmZ``; ``""`` when it is not one."""
    if not isinstance(value, str) or not 10 <= len(value) <= 40:
        return ""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        moment = moment.astimezone(UTC)
    except (OverflowError, ValueError):
        return ""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def cwd_slug(cwd: str) -> str:
    """Claude Code's project folder name for ``cwd``: every character but ASCII letters and digits becomes ``-``
    (``/home/user/git/x`` → ``-home-user-git-x``)."""
    return _SLUG_CHARS.sub("-", cwd)


def text_value(value: object) -> str:
    """``value`` when it is a string, else ``""``."""
    return value if isinstance(value, str) else ""
