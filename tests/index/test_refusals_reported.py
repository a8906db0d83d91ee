"""`index rebuild`, `update` and `verify` say the same about committed files the index refuses (D1).

Rows: each way a committed file is refused (it does not parse; its live content is held by a smaller path) ×
each command. Every command exits 1 and names the refused file, for people (with a `validate` hint) and in
``--json``; verify also says the index otherwise equals a rebuild.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from git_memhtml.cli.main import main

REFUSED_PATH = {"unparseable": "areas/inbox/broken.html", "duplicate": "areas/inbox/zz-copy.html"}
"""Each way a committed file is refused → the refused path."""
ROWS: list[tuple[str, str]] = [
    ("unparseable", "rebuild"),
    ("unparseable", "verify"),
    ("duplicate", "rebuild"),
    ("duplicate", "verify"),
    ("duplicate", "update"),  # index_refusals remembers it; a parse failure is not remembered (docs/index.md)
]
"""(kind, ``index`` subcommand)."""


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def refused_repo(tmp_path: Path, kind: str, path: str) -> Path:
    """A memory repository whose HEAD holds ``path``, refused by the index as ``kind`` says."""
    repo = tmp_path / "mem"
    assert main(["init", str(repo)]) == 0
    for name, claim in (("keep", "Port 80 is open."), ("broken", "The build takes nine minutes.")):
        assert main(["-C", str(repo), "write", "--type", "semantic", "--title", name.title(), "--claim", claim,
                     "--path", f"areas/inbox/{name}.html"]) == 0
    target = repo / path
    if kind == "unparseable":  # the attacker's edit: the <title> element is never closed
        text = target.read_text(encoding="utf-8")
        target.write_text(text.replace("</title>", "", 1), encoding="utf-8")
    else:
        shutil.copy(repo / "areas/inbox/keep.html", target)
        git(repo, "add", path)
    git(repo, "commit", "-qam", f"a {kind} file")
    assert main(["-C", str(repo), "index", "update"]) in (0, 1)  # whatever the commit's own catch-up did
    return repo


@pytest.mark.parametrize(("kind", "verb"), ROWS, ids=[f"{k}-{v}" for k, v in ROWS])
def test_every_index_command_names_a_refused_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str,
                                                  verb: str) -> None:
    path = REFUSED_PATH[kind]
    command = ["index", verb]
    repo = refused_repo(tmp_path, kind, path)
    capsys.readouterr()
    assert main(["-C", str(repo), *command]) == 1
    out = capsys.readouterr().out
    assert f"{path}: not indexed: " in out, out
    assert "hint: git memhtml validate " in out, out
    assert main(["-C", str(repo), *command, "--json"]) == 1
    data = json.loads(capsys.readouterr().out)["data"]
    if command[1] == "verify":
        assert data["clean"] is True, data  # the rows are exactly a rebuild's: the refusal is the finding
        assert [r["path"] for r in data["refused"]] == [path]
        assert data["refused"][0]["reason"] and data["refused"][0]["hint"] == f"git memhtml validate {path}"
    else:
        assert [p for p, _ in data["errors"]] == [path], data


def test_verify_of_a_tree_without_refusals_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "mem"
    assert main(["init", str(repo)]) == 0
    assert main(["-C", str(repo), "write", "--type", "semantic", "--title", "T", "--claim", "Port 80 is open."]) == 0
    capsys.readouterr()
    assert main(["-C", str(repo), "index", "verify", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["data"]
    assert data["clean"] is True and data["refused"] == []
