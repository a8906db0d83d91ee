"""``bench/synth.py``: deterministic, valid, unique memories; a small corpus is committed and indexed exactly."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from git_memhtml.document.parse import parse_memory
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.index.verify import verify
from tests.bench.bench_support import render_op

BENCH = Path(__file__).resolve().parents[2] / "bench"


def load_synth() -> ModuleType:
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("synth", BENCH / "synth.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["synth"] = module
    spec.loader.exec_module(module)
    return module


def test_memories_are_deterministic_valid_and_distinct() -> None:
    synth = load_synth()
    assert synth.render(7) == synth.render(7)
    docs = [parse_memory(synth.render(i)[1].encode(), path=synth.render(i)[0]) for i in range(60)]
    assert len({d.content_hash for d in docs}) == 60
    assert all(d.content_hash_meta is None and d.gist for d in docs)
    assert synth.memory_path(499).rsplit("/", 1)[0] != synth.memory_path(500).rsplit("/", 1)[0]


def test_small_corpus_is_committed_indexed_and_verified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synth = load_synth()
    monkeypatch.setattr(synth, "CACHE", tmp_path)
    root = synth.corpus(40, log=False)
    assert synth.corpus(40, log=False) == root  # cached
    meta = json.loads((root / ".git" / "memhtml" / "bench.json").read_text())
    assert meta["size"] == 40 and meta["rebuild_s"] > 0
    repo = GitRepo.discover(root)
    with IndexDB.for_repo(repo) as db:
        assert db.query_one("SELECT count(*) FROM files") == (40,)
        assert verify(repo, db, now=synth.NOW).clean


def test_apply_op_renders_the_same_memory_as_the_corpus_file() -> None:
    """``synth.op(i)`` through the apply door gives the memory ``synth.render(i)`` writes (same path, same
    content hash), so a bench importing the corpus with ``apply`` measures the same memories."""
    synth = load_synth()
    for i in (0, 7, 499, 500, 1234):
        path, html = synth.render(i)
        op = synth.op(i)
        assert op["path"] == path
        rendered = parse_memory(render_op(op).encode(), path=path)
        assert rendered.content_hash == parse_memory(html.encode(), path=path).content_hash
