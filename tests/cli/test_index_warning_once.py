"""A file the index skips (an untracked symlink) is warned about once per command, however many times the command
catches the index up (before its commit and after it; issue 8 item 6)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from git_memhtml.cli.main import main

LINK = "areas/inbox/lnk.html"
WARNING = f"{LINK}: not indexed: is a symlink"


@pytest.fixture
def repo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    root = tmp_path / "memory"
    assert main(["init", str(root)]) == 0
    for title in ("Kept memory", "Other memory"):
        assert main(["-C", str(root), "write", "--type", "semantic", "--title", title, "--claim",
                     f"The {title.lower()} is kept."]) == 0
    os.symlink("kept-memory.html", root / LINK)  # untracked, in a bucket: every catch-up skips and reports it
    (root.parent / "ops.jsonl").write_text(json.dumps(
        {"op": "write", "title": "Applied memory", "type": "semantic", "claim": "The applied memory holds."}) + "\n",
        encoding="utf-8")
    capsys.readouterr()
    return root


COMMANDS = [
    ("write", ["write", "--type", "semantic", "--title", "New memory", "--claim", "The new memory holds."]),
    ("apply", ["apply", "--file", "../ops.jsonl"]),
    ("correct", ["correct", "areas/inbox/kept-memory.html", "--title", "Kept memory", "--claim",
                 "The kept memory is corrected."]),
    ("archive", ["archive", "areas/inbox/other-memory.html", "--reason", "test"]),
    ("link", ["link", "areas/inbox/kept-memory.html", "relates_to", "areas/inbox/other-memory.html"]),
    ("search", ["search", "memory"]),
    ("read", ["read", "areas/inbox/kept-memory.html"]),
]
"""Commands that open the index; each says the warning at most once (the write verbs exactly once: they catch up
before and after their commit, which printed it two or three times)."""
WRITERS = {"write", "apply", "correct", "archive", "link"}


@pytest.mark.parametrize(("name", "argv"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_a_skipped_file_is_warned_about_once_per_command(repo: Path, name: str, argv: list[str],
                                                        capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    assert main([*argv]) == 0, name
    err = capsys.readouterr().err
    count = err.count(WARNING)
    assert (count == 1) if name in WRITERS else (count <= 1), (name, err)


def test_index_update_warns_once_and_lists_it_once_in_its_report(repo: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-C", str(repo), "index", "update"]) == 1
    out, err = capsys.readouterr()
    assert out.count(WARNING) == 1 and err.count(WARNING) == 1
