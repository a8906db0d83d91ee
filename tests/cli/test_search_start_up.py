"""``search`` loads the embedder's model only when the query needs it (issue 12 item 4), and the fake embedder takes
an explicitly set ``memhtml.embeddim`` (the bench corpora are ``fake:hash@256``)."""

from __future__ import annotations

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
    assert ("wordllama" in modules) is loads


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
