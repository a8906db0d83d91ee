"""Commit messages built so that free text can never become structure (docs/store.md "Commit messages").

Every message of ours is ``subject``, a blank line, an optional body and an optional trailer paragraph. Git reads
trailers from the last paragraph only, as ``Key: value`` lines (a line starting with whitespace continues the
previous trailer), and splits lines on ``\\n`` alone; other tools also break lines on CR and the Unicode line
separators. So, whatever the caller passes:

- the **subject** is one line: every run of whitespace, line separators and control characters becomes one space;
- every non-blank **body** line starts with whitespace (two spaces are added to any line that does not), after
  CR, CRLF, U+0085, U+2028, U+2029, VT, FF and FS/GS/RS are turned into line breaks and every other control
  character but tab is dropped; so no body line is a trailer, and a body that ends the message is no trailer
  paragraph;
- **trailer** keys must be ``[A-Za-z0-9][A-Za-z0-9-]*`` (a programming error otherwise), and each run of line
  breaks, separators and control characters in a value becomes one space (callers refuse such ids earlier, at the
  CLI, as usage errors; other characters, spaces included, are kept as given).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f]")
"""Control characters dropped from body lines (tab, the line-breaking ones and U+0085 are handled apart)."""
_FOLD = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u2028\u2029]+")
"""What one space replaces in a one-line value: Unicode whitespace (line separators included) and controls."""
_BREAKS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
"""What one space replaces in a trailer value: line breaks, line separators and control characters only, so an id
the CLI accepted (no control character) is committed unchanged."""
_TRAILER_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*\Z")


def fold_line(text: str) -> str:
    """Return ``text`` on one line: runs of whitespace, line separators and control characters become one space."""
    return _FOLD.sub(" ", text).strip()


def has_control(text: str) -> bool:
    """Whether ``text`` holds a line break, a Unicode line separator or any other control character (tab too)."""
    return bool(re.search(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]", text))


def indent_body_lines(body: str) -> str:
    """Return ``body`` with every non-blank line starting with whitespace (see the module docstring)."""
    lines = []
    for line in body.splitlines():  # str.splitlines breaks on CR, U+0085, U+2028, U+2029, VT, FF, FS, GS, RS
        clean = _CONTROL.sub("", line).rstrip()
        if not clean.strip():
            lines.append("")
        elif clean[0] in " \t":
            lines.append(clean)
        else:
            lines.append("  " + clean)
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines)


def build_message(subject: str, body: str | None = None, trailers: Sequence[tuple[str, str]] = ()) -> str:
    """Return the commit message ``subject`` [blank, body] [blank, ``Key: value`` lines], ending in a newline.

    Raises:
        ValueError: a trailer key is not a git trailer token (a bug of the caller, not user input).
    """
    message = (fold_line(subject) or "(no subject)") + "\n"
    text = indent_body_lines(body) if body else ""
    if text:
        message += "\n" + text + "\n"
    if trailers:
        lines = []
        for key, value in trailers:
            if not _TRAILER_KEY.match(key):
                raise ValueError(f"trailer key {key!r} is not a git trailer token")
            lines.append(f"{key}: {_BREAKS.sub(' ', value).strip()}\n")
        message += "\n" + "".join(lines)
    return message
