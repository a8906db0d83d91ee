"""The ``--as-of`` instant: parsed once at the edge into the canonical form the index compares as text
(docs/retrieval.md §4 "Scope grammar"; docs/retrieval.md)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from git_memhtml.errors import UsageError

AS_OF_FORMAT = "YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS][.fff](Z|±HH:MM)"
"""What ``--as-of`` accepts: an ISO-8601 date (midnight UTC), or a date-time with its zone (``Z`` or an offset);
a date-time without a zone is refused, since which clock it means is a guess (issue 8)."""
_SHAPE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2}))?", re.ASCII
)


def parse_as_of(text: str) -> str:
    """Return ``text`` as the canonical UTC instant ``YYYY-MM-DDTHH:MM:SSZ``.

    A bare date is midnight UTC of that day; a date-time must carry ``Z`` or an offset, which is converted;
    fractions of a second are dropped. Stored instants are compared as strings, which is only correct against
    this one canonical form (``2025-03-01`` < ``2025-03-01T00:00:00Z`` as text).

    Raises:
        UsageError: ``text`` is not an ISO-8601 date or zoned date-time (the message names :data:`AS_OF_FORMAT`;
            a date-time without a zone gets its own message and the hint to add ``Z``).
    """
    raw = text.strip()
    try:
        if not _SHAPE.fullmatch(raw):
            raise ValueError("shape")
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        if _SHAPE.fullmatch(raw + "Z"):
            raise UsageError(f"--as-of {text!r} has no time zone; expected {AS_OF_FORMAT}",
                             hint=f"add Z for UTC or an offset: --as-of {raw}Z") from None
        raise UsageError(f"--as-of {text!r} is not an instant; expected {AS_OF_FORMAT}",
                         hint="e.g. --as-of 2025-03-01 or --as-of 2025-03-01T09:30:00Z") from None
    if moment.tzinfo is None:  # a bare date (the shape admits no other zoneless form): midnight UTC
        moment = moment.replace(tzinfo=UTC)
    try:
        utc = moment.astimezone(UTC)
    except OverflowError:
        raise UsageError(f"--as-of {text!r} falls outside years 0001-9999 once converted to UTC",
                         hint="give an instant between 0001-01-01 and 9999-12-31 (UTC)") from None
    return utc.strftime("%Y-%m-%dT%H:%M:%SZ")
