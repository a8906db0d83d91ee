"""The committed ``docs/git-memhtml.1`` is what the generator makes now, names every command, and renders."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from git_memhtml import __version__
from git_memhtml.cli.main import cli, main
from git_memhtml.cli.manpage import MAN_NAME, render_manpage, walk_commands

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / MAN_NAME


def test_committed_page_is_up_to_date() -> None:
    fresh = render_manpage(cli, version=__version__)
    assert COMMITTED.read_text(encoding="utf-8") == fresh, (
        "docs/git-memhtml.1 is stale: run `git memhtml man --out docs` and commit it")


def test_every_command_has_a_section() -> None:
    page = render_manpage(cli, version=__version__)
    for info in list(walk_commands(cli))[1:]:
        assert f'.SS "{info.path.replace("-", chr(92) + "-")}' in page, info.path
    assert page.startswith(".TH GIT\\-MEMHTML 1 ") and ".SH EXIT STATUS" in page
    assert render_manpage(cli, version=__version__) == page  # deterministic


def test_roff_escaping() -> None:
    from git_memhtml.cli.manpage import _escape

    assert _escape(".starts a request") == "\\&.starts a request"
    assert _escape("a\\b-c →") == "a\\eb\\-c \\[u2192]"


def test_man_command_writes_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["man", "--out", str(tmp_path / "man1")]) == 0
    assert (tmp_path / "man1" / MAN_NAME).read_text() == render_manpage(cli, version=__version__)
    capsys.readouterr()
    assert main(["man"]) == 0
    assert capsys.readouterr().out.startswith(".TH GIT\\-MEMHTML 1")
    (tmp_path / "file").write_text("x")
    assert main(["man", "--out", str(tmp_path / "file")]) == 2


@pytest.mark.skipif(shutil.which("man") is None or shutil.which("git-memhtml") is None,
                    reason="needs man(1) and the installed git-memhtml entry point")
def test_git_memhtml_help_through_git_opens_the_page(tmp_path: Path) -> None:
    """``git memhtml --help`` becomes ``git help memhtml`` → ``man git-memhtml``: found through MANPATH."""
    man1 = tmp_path / "man" / "man1"
    assert main(["man", "--out", str(man1)]) == 0
    env = {"PATH": __import__("os").environ["PATH"], "HOME": str(tmp_path), "MANPATH": str(tmp_path / "man"),
           "MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "100", "LC_ALL": "C"}
    proc = subprocess.run(["git", "memhtml", "--help"], capture_output=True, text=True, env=env, cwd=tmp_path,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert "git-memhtml - A long-term memory" in proc.stdout and "git memhtml sleep pr" in proc.stdout
