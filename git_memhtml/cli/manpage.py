"""The ``git-memhtml(1)`` man page, generated from the click command tree (issue 5 item 4).

Git rewrites ``git memhtml --help`` into ``git help memhtml``, which runs ``man git-memhtml``
(docs/git.md §1.1): without an installed page the user sees "No manual entry". The page is rendered
from the same click objects that print ``-h``, so it cannot drift from the commands; ``docs/git-memhtml.1`` is the
committed copy and a test regenerates and compares it. The output is byte-deterministic: no date, commands in the
order click lists them (alphabetical), every text escaped for roff.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import dataclass

import click

MAN_NAME = "git-memhtml.1"
"""File name of the page (section 1: user commands)."""


@dataclass(frozen=True)
class CommandInfo:
    """One command of the tree: its words after ``git memhtml`` (``()`` for the root), object and context."""

    words: tuple[str, ...]
    command: click.Command
    ctx: click.Context

    @property
    def path(self) -> str:
        """``git memhtml sleep run``."""
        return " ".join(("git memhtml", *self.words))


def walk_commands(root: click.Command, prog: str = "git memhtml") -> Iterator[CommandInfo]:
    """Yield the root and every command below it, depth first, sub-commands in click's listing order.

    Hidden commands are skipped. Each context is a child of its parent's, so inherited ``context_settings``
    (``help_option_names``) apply exactly as they do on the command line.
    """

    def visit(command: click.Command, words: tuple[str, ...], parent: click.Context | None) -> Iterator[CommandInfo]:
        name = prog if parent is None else words[-1]
        ctx = click.Context(command, info_name=name, parent=parent, **command.context_settings)
        yield CommandInfo(words, command, ctx)
        if isinstance(command, click.Group):
            for sub_name in command.list_commands(ctx):
                sub = command.get_command(ctx, sub_name)
                if sub is not None and not sub.hidden:
                    yield from visit(sub, (*words, sub_name), ctx)

    yield from visit(root, (), None)


def help_text(command: click.Command) -> str:
    """The command's help as click shows it: dedented, cut at ``\\f``; ``""`` when it has none."""
    return inspect.cleandoc(command.help or "").partition("\f")[0].strip()


def _escape(text: str) -> str:
    """Roff-escape running text: backslashes, hyphens, non-ASCII (``\\[uXXXX]``), a leading ``.`` or ``'``."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    text = "".join(ch if ord(ch) < 128 else f"\\[u{ord(ch):04X}]" for ch in text)
    out = []
    for line in text.splitlines():
        stripped = line.lstrip()
        out.append("\\&" + stripped if stripped[:1] in (".", "'") else stripped)
    return "\n".join(out)


def _paragraphs(text: str) -> list[str]:
    """Split help text into paragraphs; click's ``\\b`` no-rewrap marker lines are dropped."""
    blocks = [b for b in text.split("\n\n") if b.strip()]
    return [_escape("\n".join(l for l in block.splitlines() if l.strip() != "\b")) for block in blocks]


def _options(info: CommandInfo) -> list[str]:
    lines: list[str] = []
    for param in info.command.get_params(info.ctx):
        record = param.get_help_record(info.ctx) if isinstance(param, click.Option) else None
        if record is None:
            continue
        names, desc = record
        lines += [".TP", f"\\fB{_escape(names)}\\fR", *(_paragraphs(desc) or ["(no description)"])]
    return lines


def _usage(info: CommandInfo) -> str:
    pieces = info.command.collect_usage_pieces(info.ctx)
    return " ".join((info.path, *pieces))


_TRAILER = """.SH EXIT STATUS
0 ok; 1 failure or refusal (a failed sleep phase, a refused merge); 2 usage; 3 internal error (a crash report path
is printed); 130 interrupted. With \\fB\\-\\-json\\fR every command prints exactly one envelope
{"apiVersion": "1", "type", "data"} on stdout, errors included.
.SH ENVIRONMENT
.TP
\\fBMEMHTML_\\fR\\fIKEY\\fR
Overrides the git config setting \\fBmemhtml.\\fR\\fIkey\\fR (see \\fBgit memhtml config\\fR).
.TP
\\fBMEMHTML_NOW\\fR
Pins the clock (YYYY\\-MM\\-DDTHH:MM:SSZ) for reproducible runs.
.TP
\\fBMEMHTML_HOOKS=0\\fR
Turns the installed git hooks off.
.SH FILES
.TP
\\fI$(git rev\\-parse \\-\\-git\\-dir)/memhtml/index.db\\fR
The rebuildable index of one work tree.
.TP
\\fI$(git rev\\-parse \\-\\-git\\-common\\-dir)/memhtml/state.db\\fR
The state plane: access counts, sleep run rows, applied ledgers.
.TP
\\fI.memhtml/sleep/<run>.html\\fR, \\fI<run>.pending.jsonl\\fR, \\fI<run>.journal.jsonl\\fR
The committed report, pending\\-mark ledger and run journal of each sleep run.
.SH SEE ALSO
\\fBgit\\fR(1), \\fBgithooks\\fR(5), \\fBgitattributes\\fR(5)
"""


def render_manpage(root: click.Command, *, version: str, prog: str = "git memhtml") -> str:
    """Return the roff source of ``git-memhtml(1)`` for the click tree under ``root``.

    Shape: NAME, SYNOPSIS, DESCRIPTION and OPTIONS of the root, then COMMANDS with one ``.SS`` per command (its
    usage line, help paragraphs and ``.TP`` options), then EXIT STATUS, ENVIRONMENT, FILES and SEE ALSO.
    """
    commands = list(walk_commands(root, prog))
    top = commands[0]
    summary = help_text(root).splitlines()[0] if help_text(root) else "git-memhtml"
    lines = [
        f'.TH GIT\\-MEMHTML 1 "" "git\\-memhtml {_escape(version)}" "Git Manual"',
        ".SH NAME",
        f"git\\-memhtml \\- {_escape(summary)}",
        ".SH SYNOPSIS",
        f".B {_escape(_usage(top))}",
        ".SH DESCRIPTION",
    ]
    for paragraph in _paragraphs(help_text(root)):
        lines += [".PP", paragraph]
    lines += [".SH OPTIONS", *_options(top), ".SH COMMANDS"]
    for info in commands[1:]:
        lines += [f'.SS "{_escape(_usage(info))}"']
        for paragraph in _paragraphs(help_text(info.command)) or ["(no description)"]:
            lines += [".PP", paragraph]
        lines += _options(info)
    return "\n".join(lines) + "\n" + _TRAILER
