"""The one door every stored transcript text goes through (docs/traces.md §4).

Prompt heads, first prompts and titles reach the trace plane only as :func:`stored_head` made them (whitespace
collapsed, secret-shaped strings redacted by ``git_memhtml.secrets``, cut to a cap); names (cwd, branch, model,
line uuid) only as :func:`stored_name` made them. Nothing else of a transcript's text is stored.
"""

from __future__ import annotations

from typing import NamedTuple

from git_memhtml.cut import clip

PROMPT_HEAD_CHARS = 200
"""Cap of a prompt head (docs/traces.md §4; issue 13)."""
FIRST_PROMPT_CHARS = 500
"""Cap of a session's first prompt (docs/traces.md §4; issue 13)."""
TITLE_CHARS = 200
"""Cap of a session's title (ours: no title Claude Code writes comes near it)."""
SCAN_CHARS = 65_536
"""Characters of collapsed text looked at before cutting (ours): the redaction runs on them, so its cost is bounded
whatever the line's size, and a secret that straddles the cap is redacted before the cut, never half kept."""


class Head(NamedTuple):
    """A stored head and how many secrets were replaced in it."""

    text: str
    redactions: int


def stored_head(text: str, limit: int) -> Head:
    """``text`` as the trace plane may store it: whitespace runs (newlines included) collapsed to one space,
    control characters dropped, secrets redacted, then cut to at most ``limit`` characters (a cut one ends in
    ``…``). ``limit`` ≥ 1."""
    collapsed = " ".join("".join(c if c.isprintable() or c.isspace() else " " for c in text[:SCAN_CHARS * 2])
                         .split())[:SCAN_CHARS]
    redacted, count = _redact(collapsed)
    return Head(clip(redacted, limit), count)


NAME_CHARS = 1000
"""Cap of a stored name: cwd, git branch, model, line uuid (ours; a cwd longer than this is no real folder)."""


def stored_name(text: str, limit: int = NAME_CHARS) -> Head:
    """A name the trace plane keeps (cwd, git branch, model, line uuid) as it may be stored: control characters
    dropped, secrets redacted, cut to ``limit`` characters; whitespace is kept as it is (a cwd is matched exactly
    by ``trace search --cwd``)."""
    cleaned = "".join(c for c in text[:SCAN_CHARS] if c.isprintable() or c == " ")
    redacted, count = _redact(cleaned)
    return Head(clip(redacted, limit), count)


class Redacting:
    """What a transcript reader shares: every head and name it stores goes through :func:`stored_head` /
    :func:`stored_name`, and ``redactions`` counts the secrets they replaced (docs/traces.md §4)."""

    redactions: int = 0

    def _head(self, text: str, limit: int) -> str:
        head = stored_head(text, limit)
        self.redactions += head.redactions
        return head.text

    def _name(self, text: str) -> str:
        name = stored_name(text)
        self.redactions += name.redactions
        return name.text


def _redact(text: str) -> tuple[str, int]:
    """``text`` with every secret ``git_memhtml.secrets.redact`` finds replaced by ``[redacted:<kind>]``, and how
    many it replaced (docs/traces.md §4; the detector is imported on the first head, so listing commands never
    load detect-secrets)."""
    from git_memhtml.secrets import redact  # noqa: PLC0415 - detect-secrets loads only when a transcript is read

    result = redact(text)
    return result.text, result.count
