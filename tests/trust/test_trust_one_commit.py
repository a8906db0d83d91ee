"""Refuse before writing: one operation, one commit (trust rule).

Each row is one invocation of a committing command against a fresh repository holding two memories. A row that
succeeds must add exactly one commit on ``main`` whose changes are memory files only, and leave ``git status``
clean. A row that is refused must leave ``HEAD``, every ref, the git index file and every work-tree byte as they
were: nothing is written before the refusal. A new committing command joins by adding rows to ``OK`` and
``REFUSED``.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from git_memhtml.cli.main import main

NOW = "2026-03-01T10:00:00Z"
FIRST = "areas/inbox/first.html"
SECOND = "areas/inbox/second.html"
TASK = "areas/inbox/tasks/open.html"
Argv = Callable[[Path, Path], list[str]]
"""``(repo, tmp) -> argv after -C REPO``; may write an input file into ``tmp``."""


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def jsonl(tmp: Path, *ops: Mapping[str, object]) -> str:
    stream = tmp / "ops.jsonl"
    stream.write_text("".join(json.dumps({"op": "write", "type": "semantic", **op}) + "\n" for op in ops))
    return str(stream)


def html_file(tmp: Path, text: str) -> str:
    path = tmp / "article.html"
    path.write_text(text, encoding="utf-8")
    return str(path)


def leftover(repo: Path, tmp: Path) -> list[str]:
    memory = (repo / FIRST).read_text(encoding="utf-8").replace("The first fact holds.", "A leftover fact holds.")
    (repo / "areas" / "inbox" / "leftover.html").write_text(memory, encoding="utf-8")
    return ["doctor", "--fix-leftovers", "commit"]


WRITE = ["write", "--type", "semantic"]
OK: list[tuple[str, Argv]] = [
    ("write", lambda r, t: [*WRITE, "--title", "New", "--claim", "A new fact holds."]),
    ("write --path", lambda r, t: [*WRITE, "--title", "New", "--claim", "A new fact holds.", "--path",
                                   "resources/topic/new.html"]),
    ("write --article-html", lambda r, t: [*WRITE, "--title", "New", "--article-html",
                                           html_file(t, "<p><mark>A new fact holds.</mark></p>")]),
    ("apply three ops", lambda r, t: ["apply", "--file", jsonl(t, *({"title": f"B{i}", "body": f"Batch {i} holds."}
                                                                   for i in range(3)))]),
    ("correct", lambda r, t: ["correct", FIRST, "--title", "First fixed", "--claim", "The first fact, fixed.",
                              "--reason", "typo"]),
    ("archive", lambda r, t: ["archive", FIRST, "--reason", "obsolete"]),
    ("link", lambda r, t: ["link", FIRST, "relates_to", SECOND]),
    ("doctor --fix-leftovers commit", leftover),
    ("task add", lambda r, t: ["task", "add", "--title", "New task", "--claim", "Do the new thing.", "--due",
                               "2026-03-09"]),
    ("task status doing", lambda r, t: ["task", "status", TASK, "doing"]),
    ("task status done", lambda r, t: ["task", "status", TASK, "done", "--reason", "shipped"]),
]
REFUSED: list[tuple[str, Argv]] = [
    ("write over an existing path", lambda r, t: [*WRITE, "--title", "X", "--claim", "X holds.", "--path", FIRST]),
    ("write with script", lambda r, t: [*WRITE, "--title", "X", "--article-html",
                                        html_file(t, "<p><mark>X holds.</mark></p><script>alert(1)</script>")]),
    ("write with a control character", lambda r, t: [*WRITE, "--title", "X\x1b[31m", "--claim", "X holds."]),
    ("write with a forged session id", lambda r, t: [*WRITE, "--title", "X", "--claim", "X holds.", "--session-id",
                                                     "s\n\nMemhtml-Run: sleep/2099-01-01"]),
    ("apply with one bad op", lambda r, t: ["apply", "--file", jsonl(t, {"title": "Good", "body": "Good holds."},
                                                                     {"title": "Bad", "path": FIRST,
                                                                      "body": "Bad holds."})]),
    ("apply with a hostile path", lambda r, t: ["apply", "--file", jsonl(t, {"title": "G", "body": "G holds."},
                                                                         {"title": "H", "body": "H holds.",
                                                                          "path": ".git/hooks/x.html"})]),
    ("correct a missing memory", lambda r, t: ["correct", "areas/inbox/nope.html", "--title", "T", "--claim",
                                               "T holds.", "--reason", "r"]),
    ("correct into the git dir", lambda r, t: ["correct", FIRST, "--title", "T", "--claim", "T holds.", "--reason",
                                               "r", "--path", ".git/config"]),
    ("archive with a blank reason", lambda r, t: ["archive", FIRST, "--reason", "  "]),
    ("archive the git dir", lambda r, t: ["archive", ".git/HEAD", "--reason", "x"]),
    ("link to a missing memory", lambda r, t: ["link", FIRST, "relates_to", "areas/inbox/nope.html"]),
    ("link from the git config", lambda r, t: ["link", ".git/config", "relates_to", SECOND]),
    ("task status of a non-task", lambda r, t: ["task", "status", FIRST, "done"]),
    ("task status of the git dir", lambda r, t: ["task", "status", ".git/HEAD", "done"]),
    ("task status with a reason but not done", lambda r, t: ["task", "status", TASK, "doing", "--reason", "x"]),
    ("task add with a bad due date", lambda r, t: ["task", "add", "--title", "T", "--claim", "Do T.", "--due",
                                                   "soon"]),
]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    root = tmp_path / "mem"
    assert main(["init", str(root)]) == 0
    for path, claim in ((FIRST, "The first fact holds."), (SECOND, "The second fact holds.")):
        assert main(["-C", str(root), *WRITE, "--title", path.rsplit("/", 1)[-1][:-5], "--claim", claim,
                     "--path", path]) == 0
    assert main(["-C", str(root), "task", "add", "--title", "Open task", "--claim", "Finish the open task.",
                 "--path", TASK]) == 0
    return root


def snapshot(root: Path) -> dict[str, str]:
    """Digest of every work-tree file, every ref and the git index file (the git dir's caches excluded)."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith(".git/"):
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    out[".git/index"] = hashlib.sha256((root / ".git" / "index").read_bytes()).hexdigest()
    out["refs"] = git(root, "for-each-ref", "--format=%(refname) %(objectname)")
    out["HEAD"] = git(root, "rev-parse", "HEAD")
    return out


@pytest.mark.parametrize(("label", "argv"), OK, ids=[label for label, _ in OK])
def test_one_operation_is_one_commit_of_memory_files(repo: Path, tmp_path: Path, label: str, argv: Argv) -> None:
    before = git(repo, "rev-parse", "HEAD").strip()
    args = argv(repo, tmp_path)
    assert main(["-C", str(repo), *args]) == 0, label
    assert git(repo, "rev-list", "--count", f"{before}..HEAD").strip() == "1", "exactly one commit"
    changed = git(repo, "diff", "--name-only", before, "HEAD").split()
    assert changed and all(p.split("/", 1)[0] in ("projects", "areas", "resources", "archive") for p in changed)
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""


@pytest.mark.parametrize(("label", "argv"), REFUSED, ids=[label for label, _ in REFUSED])
def test_a_refusal_writes_nothing(repo: Path, tmp_path: Path, label: str, argv: Argv,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    args = argv(repo, tmp_path)
    before = snapshot(repo)
    capsys.readouterr()
    code = main(["-C", str(repo), *args])
    err = capsys.readouterr().err
    assert code in (1, 2), (label, code, err)
    assert "error:" in err and "hint:" in err, err
    assert snapshot(repo) == before, "a refusal changed a byte"
