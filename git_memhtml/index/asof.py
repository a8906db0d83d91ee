"""The ``--as-of`` instant: parsed once at the edge into the canonical form the index compares as text (core §4
"Scope grammar"; docs/retrieval.md)."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from git_memhtml.errors import UsageError

AS_OF_FORMAT = "YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS][.fff](Z|±HH:MM)"
"""What ``--as-of`` accepts (ISO-8601 date or date-time; no offset means UTC)."""
_SHAPE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")


def parse_as_of(text: str) -> str:
    """Return ``text`` as the canonical UTC instant ``YYYY-MM-DDTHH:MM:SSZ``.

    A bare date is midnight UTC of that day; an instant without an offset is UTC; an offset is converted;
    fractions of a second are dropped. Stored instants are compared as strings, which is only correct against
    this one canonical form (``2025-03-01`` < ``2025-03-01T00:00:00Z`` as text).

    Raises:
        UsageError: ``text`` is not an ISO-8601 date or date-time (the message names :data:`AS_OF_FORMAT`).
    """
    raw = text.strip()
    try:
        if not _SHAPE.match(raw):
            raise ValueError("shape")
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--as-of {text!r} is not an instant; expected {AS_OF_FORMAT}",
                         hint="e.g. --as-of 2025-03-01 or --as-of 2025-03-01T09:30:00Z") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
