"""Frame key of a claim: the lowercase text up to the last linking word (docs/veto.md §3 "Frame key", docs/store.md
§5.2).

Two claims with the same frame and different values ("the deploy window of checkout-api is 10 minutes" vs
"... is 30 minutes") state competing values for one slot. The key seeds dedup components, flags trace-consolidation
conflicts and refuses duplicate detected tasks (``framed``). Pure.
"""

from __future__ import annotations

import re

_FRAME = re.compile(r"^(.*\b(?:of|is|in|to|by|as)\b)\s+(.+?)\.?$", re.ASCII)
"""Greedy frame through the *last* lowercase linking word; one trailing ``.`` dropped (docs/veto.md §3).

``re.ASCII`` keeps ``\\b`` on ASCII word characters, as in the original's JavaScript regex, so keys computed by
either tool agree.
"""

_WHITESPACE = re.compile(r"\s+")

MIN_FRAME_TOKENS = 3
"""The frame needs at least this many space-separated tokens (docs/veto.md §3)."""

MAX_VALUE_TOKENS = 6
"""The value may have 1 to this many space-separated tokens (docs/veto.md §3)."""


def frame_key_of(gist: str) -> str | None:
    """Return the frame key of ``gist``, or ``None`` when it has no usable frame.

    The gist is whitespace-collapsed and trimmed, then matched (case-sensitively, so only lowercase linking
    words ``of|is|in|to|by|as`` count) against ``^(.*\\b(?:of|is|in|to|by|as)\\b)\\s+(.+?)\\.?$``. The frame
    must have >= 3 space-split tokens and the value 1-6; the key is the frame lowercased.

    >>> frame_key_of("The deploy window of checkout-api is 10 minutes.")
    'the deploy window of checkout-api is'
    """
    text = _WHITESPACE.sub(" ", gist).strip()
    match = _FRAME.match(text)
    if match is None:
        return None
    frame, value = match.group(1), match.group(2)
    if len(frame.split(" ")) < MIN_FRAME_TOKENS:
        return None
    if not 1 <= len(value.split(" ")) <= MAX_VALUE_TOKENS:
        return None
    return frame.lower()
