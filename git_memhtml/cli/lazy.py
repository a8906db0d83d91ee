"""Sub-commands imported on first use (issue 12 item 4; click's "Lazily Loading Subcommands" pattern).

A :class:`LazyGroup` knows its lazy sub-commands by name through a table of :class:`LazyCommand` rows
(``"module:attribute"`` plus the help summary and the hidden flag). ``git memhtml --version`` therefore imports no
command module, and the group's ``-h`` lists every command from the table without importing one (so neither
numpy, pygit2, apsw, html5lib, selectolax, wordllama, httpx nor pydantic load). Running a command, or asking for its
own ``-h``, imports its module then.

The table repeats two facts of each command: its hidden flag and the first paragraph of its help, from which click
cuts the one-line summary. ``tests/cli/test_lazy_cli.py`` imports every row and checks that both match the real
command at every width, so the table cannot drift from the commands.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import click

COMMAND_PACKAGE = "git_memhtml.cli."
"""Lazy targets live in this package only."""


class LazyCommand(NamedTuple):
    """One lazy sub-command.

    Attributes:
        target: ``"package.module:attribute"`` naming the :class:`click.Command` object.
        summary: the first paragraph of the command's help (what click shortens into the group's listing).
        hidden: the command's ``hidden`` flag (hidden commands are not listed).
    """

    target: str
    summary: str
    hidden: bool = False


def load_command(name: str, row: LazyCommand) -> click.Command:
    """Import ``row.target`` and return the command object it names.

    Raises:
        TypeError: the module is not one of ``git_memhtml.cli`` (the architecture rules see every import of those),
            the attribute is not a :class:`click.Command`, or its name is not ``name`` (a table mistake).
    """
    module_name, _, attribute = row.target.partition(":")
    if not module_name.startswith(COMMAND_PACKAGE):
        raise TypeError(f"lazy command {name!r}: {row.target} is outside {COMMAND_PACKAGE}")
    command = getattr(importlib.import_module(module_name), attribute)
    if not isinstance(command, click.Command) or command.name != name:
        raise TypeError(f"lazy command {name!r}: {row.target} is not the click command {name!r}")
    return command


class LazyGroup(click.Group):
    """A :class:`click.Group` whose ``lazy`` sub-commands are imported only when looked up by name.

    Eagerly added sub-commands (``@group.command``) work as in any group; listings are sorted by name as click's
    are. Listing the group's help uses the table's summary for a sub-command not yet imported.
    """

    def __init__(self, *args: Any, lazy: Mapping[str, LazyCommand] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy: dict[str, LazyCommand] = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every sub-command name, eager and lazy, sorted."""
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The sub-command ``cmd_name``, importing its module the first time (``None`` when unknown)."""
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.add_command(load_command(cmd_name, self.lazy[cmd_name]), cmd_name)
        return self.commands.get(cmd_name)

    def listing(self, ctx: click.Context) -> Sequence[tuple[str, click.Command]]:
        """``(name, command)`` of every visible sub-command, in listing order, without importing: a lazy one not
        yet loaded is stood in for by a bare command carrying its table summary and hidden flag."""
        rows: list[tuple[str, click.Command]] = []
        for name in self.list_commands(ctx):
            command = self.commands.get(name)
            if command is None:
                row = self.lazy[name]
                command = click.Command(name, help=row.summary, hidden=row.hidden)
            if not command.hidden:
                rows.append((name, command))
        return rows

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's "Commands" section, from :meth:`listing` (no command module is imported)."""
        rows = self.listing(ctx)
        if not rows:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in rows)
        with formatter.section("Commands"):
            formatter.write_dl([(name, command.get_short_help_str(limit)) for name, command in rows])
