"""``-h`` and ``--help`` work on every command of the click tree, each with a non-empty description."""

from __future__ import annotations

import pytest

from git_memhtml.cli.main import cli, main
from git_memhtml.cli.manpage import help_text, walk_commands

COMMANDS = list(walk_commands(cli))


def test_the_tree_is_walked_whole() -> None:
    paths = {info.path for info in COMMANDS}
    assert {"git memhtml", "git memhtml sleep", "git memhtml sleep run", "git memhtml sleep pr",
            "git memhtml sleep review", "git memhtml man", "git memhtml eval discriminate"} <= paths
    assert len(COMMANDS) == len(paths) > 20


@pytest.mark.parametrize("flag", ["-h", "--help"])
@pytest.mark.parametrize("info", COMMANDS, ids=[i.path for i in COMMANDS])
def test_help_flag(info: object, flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    words = info.words  # type: ignore[attr-defined]
    command = info.command  # type: ignore[attr-defined]
    assert help_text(command), f"{info.path} has no help text"  # type: ignore[attr-defined]
    capsys.readouterr()
    assert main([*words, flag]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Usage: {info.path}")  # type: ignore[attr-defined]
    assert help_text(command).split()[0] in out
    assert "-h, --help" in out
