"""Marked blocks appended to a text file (Markdown instructions, a TOML table) and TOML string quoting.

A block is appended at the end of the file, after one empty line when the file has text, and opens and closes with
a marker line naming the agent, so a person reading ``AGENTS.md`` sees what wrote it and how to remove it. What was
appended is recorded as a :class:`git_memhtml.agents.jsonsplice.Splice`, so the unchanged file is put back by
cutting it out (docs/agents.md "Receipts").
"""

from __future__ import annotations

from git_memhtml.agents.jsonsplice import Splice

MARK = "git-memhtml"
"""The word every marker carries (with the agent's name) so a block is recognisable in any file."""


def open_marker(agent: str, comment: tuple[str, str]) -> str:
    """The first line of ``agent``'s block, in the file's comment syntax ``(prefix, suffix)``."""
    return (f"{comment[0]}>>> {MARK} ({agent}): written by `git memhtml agent install {agent}`; "
            f"`git memhtml agent uninstall {agent}` removes it{comment[1]}")


def close_marker(agent: str, comment: tuple[str, str]) -> str:
    """The last line of ``agent``'s block."""
    return f"{comment[0]}<<< {MARK} ({agent}){comment[1]}"


def block(agent: str, body: str, comment: tuple[str, str]) -> str:
    """``body`` between ``agent``'s two marker lines, ending in a newline."""
    return f"{open_marker(agent, comment)}\n{body.rstrip(chr(10))}\n{close_marker(agent, comment)}\n"


def append_block(text: str, agent: str, body: str, comment: tuple[str, str]) -> Splice:
    """Where and what to append to ``text`` (``""`` for a file that does not exist yet) for ``agent``'s block."""
    if not text or text.endswith("\n\n"):
        lead = ""
    elif text.endswith("\n"):
        lead = "\n"
    else:
        lead = "\n\n"
    return Splice(len(text), lead + block(agent, body, comment))


def has_marker(text: str, agent: str, comment: tuple[str, str]) -> bool:
    """Whether ``text`` holds ``agent``'s opening marker (our block, perhaps edited)."""
    return open_marker(agent, comment) in text


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string: ``"`` and ``\\`` escaped, control characters as TOML's basic-string
    escapes, so a path with quotes, spaces or newlines stays one string."""
    out = ['"']
    named = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}
    for ch in value:
        if ch in named:
            out.append(named[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def toml_key(value: str) -> str:
    """``value`` as a TOML key: bare when it is only ``A-Za-z0-9_-``, else quoted."""
    if value and all(ch.isascii() and (ch.isalnum() or ch in "_-") for ch in value):
        return value
    return toml_string(value)
