"""Bytes that enter through the command line: arguments and input streams (issue 8 item 7).

Text that is not UTF-8 is a usage error (exit 2) naming where it came from, never a crash deep in git, SQLite or
JSON. Two doors, one each:

- :func:`check_arguments` — every argument string once, before click parses them. On POSIX, Python decodes
  ``argv`` with ``surrogateescape``, so an undecodable byte arrives as a lone surrogate (``b"\\xff"`` →
  ``"\\udcff"``); an in-process caller can pass one directly. Either is refused with its position and an escaped
  rendering. File-path arguments of :data:`PATH_ARGUMENT_COMMANDS` are exempt: a file name is bytes on disk, and
  those commands report such a name as one finding of their own (``validate``: "file name is not UTF-8").
- :func:`read_text_input` — every ``FILE`` or ``-`` (stdin) stream: read as bytes, decoded strictly as UTF-8; an
  invalid sequence is reported as ``label:line:column``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from git_memhtml.errors import UsageError
from git_memhtml.pathnames import shown_name

PATH_ARGUMENT_COMMANDS: Final[frozenset[str]] = frozenset({"validate"})
"""Commands whose positional arguments are work-tree file names, reported per file rather than refused."""

STDIN: Final[str] = "-"


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _command_of(args: Sequence[str]) -> str | None:
    """The sub-command name: the first argument that is not an option nor the value of ``-C``/``--repo``."""
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in ("-C", "--repo"):
            skip = True
            continue
        if arg.startswith("-"):
            continue
        return arg
    return None


def check_arguments(args: Sequence[str]) -> None:
    """Refuse an argument that is not valid UTF-8 text.

    Raises:
        UsageError: ``argument N ('shown') is not valid UTF-8`` for the first such argument (1-based position after
            the program name); undecodable bytes are shown as ``\\xNN``, a lone surrogate as ``\\udXXX``.
    """
    exempt = _command_of(args) in PATH_ARGUMENT_COMMANDS
    for position, arg in enumerate(args, start=1):
        if _is_text(arg):
            continue
        if exempt and not arg.startswith("-"):
            continue
        raise UsageError(
            f"argument {position} ('{shown_name(arg)}') is not valid UTF-8",
            hint="pass text as UTF-8 (check the terminal's locale or the calling program's encoding)",
        )


def decode_stream(data: bytes, label: str) -> str:
    """Decode ``data`` as strict UTF-8.

    Raises:
        UsageError: ``<label>:<line>:<column>: not UTF-8 (invalid byte 0xNN)`` (1-based line and byte column).
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise UsageError(
            f"{label}:{line}:{column}: not UTF-8 (invalid byte 0x{data[exc.start]:02x})",
            hint="re-save the input as UTF-8",
        ) from None


def stdin_bytes(limit: int) -> bytes:
    """At most ``limit`` bytes of stdin, undecoded (a hook event, whose parser decides what they are); an in-process
    caller's text stream is encoded as UTF-8 (lone surrogates kept as invalid bytes for the parser to refuse)."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is not None:
        return bytes(buffer.read(limit))
    return sys.stdin.read(limit).encode("utf-8", "surrogateescape")


def _stdin_text() -> str:
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is not None:
        return decode_stream(buffer.read(), "<stdin>")
    text = sys.stdin.read()  # a text stream (an in-process caller's StringIO): check what it holds
    for number, line in enumerate(text.split("\n"), start=1):
        if not _is_text(line):
            raise UsageError(f"<stdin>:{number}: not valid UTF-8 (a lone surrogate)", hint="re-save the input as UTF-8")
    return text


def read_text_input(source: str, *, flag: str) -> tuple[str, str]:
    """Read ``source`` (a file path, or ``-`` for stdin) as UTF-8 text; return ``(text, label)``.

    ``label`` is ``"<stdin>"`` or the path as given, for ``label:line`` messages downstream.

    Raises:
        UsageError: the file does not exist or cannot be read (``flag`` names the option), or the bytes are not
            UTF-8 (``label:line:column``).
    """
    if source == STDIN:
        return _stdin_text(), "<stdin>"
    path = Path(source)
    if not path.is_file():
        raise UsageError(f"{flag} {source}: no such file", hint="give a file path, or - for stdin")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{flag} {source}: cannot be read: {exc.strerror or exc}",
                         hint="check the file's permissions") from None
    return decode_stream(data, source), source
