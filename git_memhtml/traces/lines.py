"""Reading a transcript's complete lines from a byte offset, read-only, with bounded memory (docs/traces.md §3).

Lines are split on the raw byte ``\\n``; an unterminated last line is a write in progress and is not consumed (the
returned end offset stays before it). A line longer than :data:`MAX_LINE_BYTES` is skipped without being held:
only its length is counted. Nothing here writes to the file or changes its times.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

MAX_LINE_BYTES = 4 * 1024 * 1024
"""The longest line parsed (ours): the real transcripts' longest is 31 KB (a tool result), so 4 MiB keeps every
real line while a 50 MB line costs at most this much memory."""
BLOCK_BYTES = 65_536
"""Bytes read per ``os.read`` (ours)."""


@dataclass
class ReadTally:
    """What one read did: ``bytes_read`` (complete lines consumed, newline included), ``lines`` (complete lines),
    ``oversized`` (lines over the cap, skipped), ``torn`` (1 when an unterminated last line was left unread),
    ``end`` (the offset after the last complete line)."""

    bytes_read: int = 0
    lines: int = 0
    oversized: int = 0
    torn: int = 0
    end: int = 0


class NotRegularFile(OSError):
    """The path is a symlink, a folder, a FIFO or anything but a regular file (never read)."""


def open_read_only(path: str) -> int:
    """A read-only descriptor of the regular file ``path``, never following a symlink in its last component (and
    never blocking on a FIFO). Raises :class:`NotRegularFile`, or ``OSError`` from the system."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(f"{path} is not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def complete_lines(fd: int, offset: int, tally: ReadTally, *, limit: int) -> Iterator[bytes]:
    """Yield each complete line of ``fd`` from byte ``offset`` up to byte ``limit`` (the size stat gave: bytes
    appended after it wait for the next scan), without its newline, skipping lines over :data:`MAX_LINE_BYTES`;
    ``tally`` is updated as lines are consumed (``tally.end`` is where the next read starts)."""
    position = offset
    tally.end = offset
    pending = bytearray()
    dropping = False  # inside a line already over the cap: bytes are counted, not kept
    while position < limit:
        block = os.pread(fd, min(BLOCK_BYTES, limit - position), position)
        if not block:
            break
        position += len(block)
        start = 0
        while True:
            cut = block.find(b"\n", start)
            if cut < 0:
                if not dropping:
                    pending += block[start:]
                    if len(pending) > MAX_LINE_BYTES:
                        pending.clear()
                        dropping = True
                break
            piece = block[start:cut]
            line_end = position - len(block) + cut + 1
            tally.bytes_read += line_end - tally.end
            tally.end = line_end
            tally.lines += 1
            if dropping or len(pending) + len(piece) > MAX_LINE_BYTES:
                tally.oversized += 1
                dropping = False
                pending.clear()
            else:
                pending += piece
                line = bytes(pending)
                pending.clear()
                yield line
            start = cut + 1
    if tally.end < position:
        tally.torn = 1
