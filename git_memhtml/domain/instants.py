"""ISO-8601 instants as the store writes and compares them (``YYYY-MM-DDTHH:MM:SSZ``, docs/format.md §1.2). Pure."""

from __future__ import annotations

from datetime import UTC, datetime


def parse_instant(value: str | None) -> datetime | None:
    """Parse an ISO date or instant (``Z``/``z``, an offset, a space separator, or naive = UTC) into an aware
    datetime; ``None`` when blank or unreadable."""
    text = (value or "").strip()
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00").replace(" ", "T"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def require_instant(value: str) -> datetime:
    """Like :func:`parse_instant` but raises ``ValueError`` naming ``value`` when it is unreadable."""
    parsed = parse_instant(value)
    if parsed is None:
        raise ValueError(f"not an ISO-8601 instant: {value!r}")
    return parsed


def format_instant(value: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` in UTC (the instant format of every stamp, docs/format.md §1.2)."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def hours_between(start: str, end: str) -> float:
    """Hours from ``start`` to ``end`` (ISO instants; negative when ``end`` is earlier). Raises ``ValueError``."""
    return (require_instant(end) - require_instant(start)).total_seconds() / 3600
