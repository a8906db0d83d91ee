"""Cutting text and lists for display: a cut always shows, as ``…`` (issue 8 item 11).

Every place that shortens a message, a detail, a git/gh stderr or a table cell goes through :func:`clip`; every
place that shows only the first items of a list goes through :func:`clip_join`. Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

ELLIPSIS = "…"


def clip(text: str, width: int) -> str:
    """``text`` if it has at most ``width`` characters, else its first ``width - 1`` (right-stripped) and ``…``,
    so the result never exceeds ``width``. ``width`` must be at least 1."""
    if len(text) <= width:
        return text
    return text[: max(width - 1, 0)].rstrip() + ELLIPSIS


def clip_join(items: Iterable[str], limit: int, sep: str = ", ") -> str:
    """The first ``limit`` items joined by ``sep``; when more exist, ``sep + "… (+N more)"`` follows."""
    values = list(items)
    shown = sep.join(values[:limit])
    rest = len(values) - limit
    return shown + (f"{sep}{ELLIPSIS} (+{rest} more)" if rest > 0 else "")
