"""What a scan does with one file, from its watermark (docs/traces.md §3)."""

from __future__ import annotations

from typing import Literal

from git_memhtml.traces.model import Watermark

Decision = Literal["new", "skip", "tail", "rescan"]
"""``new``: never read, read from byte 0; ``skip``: unchanged; ``tail``: grown, read from the offset only;
``rescan``: changed in a way a tail cannot explain, so its whole session is read again."""


def decide(mark: Watermark | None, size: int, mtime_ms: int) -> Decision:
    """The :data:`Decision` for a file now ``size`` bytes with mtime ``mtime_ms`` (ms, truncated), last seen as
    ``mark``.

    Same size and mtime → ``skip`` (even with a torn last line still unread: nothing was appended). Smaller, mtime
    earlier, the offset past the end, or the same size with another mtime (rewritten in place) → ``rescan``.
    Larger with a later or equal mtime → ``tail``.
    """
    if mark is None:
        return "new"
    if size == mark.size and mtime_ms == mark.mtime_ms:
        return "skip"
    if size < mark.size or mtime_ms < mark.mtime_ms or mark.offset > size or size == mark.size:
        return "rescan"
    return "tail"
