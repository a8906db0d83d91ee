"""``search`` loads the embedder's model only when the query needs it (issue 12 item 4), and the fake embedder takes
an explicitly set ``memhtml.embeddim`` (the bench corpora are ``fake:hash@256``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from git_memhtml.cli.app import App
from git_memhtml.cli.main import main


def _search(root: Path, env: dict[str, str], *extra: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """``git memhtml search`` in a fresh process; return it and the modules it imported."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "git_memhtml", "search", "the team fact",
                           *extra], capture_output=True, text=True, cwd=root, env={**os.environ, **env}, check=False)
    modules = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    return proc, modules


@pytest.fixture
def wordllama_repo(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Path:
    """A memory whose index holds wordllama vectors, built and caught up (nothing left to embed)."""
    root = tmp_path / "memory"
    monkeypatch.setenv("MEMHTML_EMBED", "wordllama")
    assert main(["init", str(root)]) == 0
    for n in range(3):
        assert main(["-C", str(root), "write", "--type", "semantic", "--title", f"Team fact {n}", "--claim",
                     f"The team fact {n} holds."]) == 0
    assert main(["-C", str(root), "index", "update"]) == 0
    capsys.readouterr()
    return root


ROWS = [
    ("vector arm wanted", {}, True),
    ("vector weight 0", {"MEMHTML_WEIGHT_VECTOR": "0"}, False),
    ("embedder off", {"MEMHTML_EMBED": "off"}, False),
]
"""``(case, environment, whether the wordllama model is loaded)``."""


@pytest.mark.parametrize(("env", "loads"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_the_model_loads_only_when_the_query_needs_it(wordllama_repo: Path, env: dict[str, str],
                                                      loads: bool) -> None:
    proc, modules = _search(wordllama_repo, {"MEMHTML_EMBED": "wordllama", **env}, "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert '"path"' in proc.stdout  # the lexical arms still find the facts
    assert ("tokenizers" in modules) is loads  # the model's tokenizer: loaded with the model, only then
    assert "wordllama" not in modules  # the lean loader reads the bundled files (tests/embed/test_wordllama_lean.py)


def test_an_explicit_dimension_sizes_the_fake_embedder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "memory"
    assert main(["init", str(root)]) == 0
    embedder = App(repo_path=root).embedder()
    assert embedder is not None and embedder.space == "fake:hash@1024"  # the default: embeddim is openai's
    subprocess.run(["git", "-C", str(root), "config", "memhtml.embeddim", "256"], check=True)
    embedder = App(repo_path=root).embedder()
    assert embedder is not None and embedder.space == "fake:hash@256"
    monkeypatch.setenv("MEMHTML_EMBED_DIM", "64")
    embedder = App(repo_path=root).embedder()
    assert embedder is not None and embedder.space == "fake:hash@64"


NOT_FOR_A_SEARCH = ("pydantic", "httpx", "pygments", "html5lib", "selectolax", "git_memhtml.llm.client",
                    "git_memhtml.transport", "git_memhtml.document.parse")
"""What a ``search`` on an index already caught up never needs: the settings' validator, the model layer and its
HTTP client, the parsers (nothing is left to parse)."""


@pytest.mark.parametrize("args", [["search", "the team fact"], ["search", "the team fact", "--json"],
                                  ["recall", "the team fact"]])
def test_a_search_on_a_fresh_index_imports_no_parser_model_layer_or_validator(tmp_path: Path, args: list[str],
                                                                              capsys: pytest.CaptureFixture[str]
                                                                              ) -> None:
    root = tmp_path / "memory"
    assert main(["init", str(root)]) == 0
    for n in range(3):
        assert main(["-C", str(root), "write", "--type", "semantic", "--title", f"Team fact {n}", "--claim",
                     f"The team fact {n} holds."]) == 0
    assert main(["-C", str(root), "index", "update"]) == 0
    capsys.readouterr()
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "git_memhtml", *args], capture_output=True,
                          text=True, cwd=root, env={**os.environ, "MEMHTML_EMBED": "fake"}, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Team fact" in proc.stdout or "team fact" in proc.stdout.lower()
    modules = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "git_memhtml.index.retrieval" in modules  # the measurement sees the search's own imports
    loaded = sorted(m for m in modules if m in NOT_FOR_A_SEARCH or m.split(".")[0] in NOT_FOR_A_SEARCH)
    assert loaded == []


def test_a_search_after_an_edit_still_parses_the_edited_file(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The parser is loaded on first use, not dropped: a work-tree edit is indexed before the search answers."""
    root = tmp_path / "memory"
    assert main(["init", str(root)]) == 0
    assert main(["-C", str(root), "write", "--type", "semantic", "--title", "Team fact", "--claim",
                 "The team fact holds."]) == 0
    [target] = [p for p in root.rglob("*.html") if ".git" not in p.parts and "The team fact holds." in p.read_text()]
    path = target.relative_to(root).as_posix()
    target.write_text(target.read_text(encoding="utf-8").replace("The team fact holds.", "Zebras graze quietly."),
                      encoding="utf-8")
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "git_memhtml", "search", "zebras", "--json"],
                          capture_output=True, text=True, cwd=root, env={**os.environ, "MEMHTML_EMBED": "fake"},
                          check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout)["data"]["hits"][0]["path"] == path
    assert "git_memhtml.document.parse" in proc.stderr


def test_a_same_size_edit_right_after_a_pass_is_indexed_before_the_search(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Git's index file and HEAD do not change when a tracked file is edited in place: a search must still see
    an edit of the same size made within the same second as the pass before it (racy timestamps)."""
    root = tmp_path / "memory"
    assert main(["init", str(root)]) == 0
    assert main(["-C", str(root), "write", "--type", "semantic", "--title", "Team fact", "--claim",
                 "The walrus fact holds."]) == 0
    assert main(["-C", str(root), "index", "update"]) == 0
    capsys.readouterr()
    [target] = [p for p in root.rglob("*.html") if ".git" not in p.parts and "walrus" in p.read_text()]
    git_index = root / ".git" / "index"
    before = git_index.stat()
    text = target.read_text(encoding="utf-8")
    target.write_text(text.replace("walrus", "narwhl"), encoding="utf-8")  # same length, same second
    assert len(target.read_bytes()) == len(text.encode("utf-8"))
    assert (git_index.stat().st_mtime_ns, git_index.stat().st_size) == (before.st_mtime_ns, before.st_size)
    proc = subprocess.run([sys.executable, "-m", "git_memhtml", "search", "narwhl", "--json"], capture_output=True,
                          text=True, cwd=root, env={**os.environ, "MEMHTML_EMBED": "fake"}, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    hits = json.loads(proc.stdout)["data"]["hits"]
    assert [h["path"] for h in hits][:1] == [target.relative_to(root).as_posix()]
