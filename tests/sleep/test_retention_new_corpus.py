"""retention-triage on a new corpus with no access history (issue 8 item 4): disuse is evidence only over a window
in which use was being observed. A corpus nobody has read through the store is not thinned, whenever sleep runs;
once the store records its first read, the spec's formula applies unchanged 30 days later (memories created before
that read are observed from it).

The corpus is ``bench/synth.py``'s 10,000 memories (60 % semantic, 25 % episodic, 15 % procedural, all created
and updated at ``synth.NOW``, never read), with authored ``relates_to`` links from every seventh memory to one of
40 hubs, so PageRank is not uniform (the mined edges of a real embedder do the same; with no edge at all every
rank equals the maximum and the pagerank signal is 1 for everyone).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from types import ModuleType

import pytest

from git_memhtml.document.editors import add_link
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index import indexer
from git_memhtml.index.access import observation_start, record_read
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.sleep.phases import retention_triage
from git_memhtml.sleep.phases.scoring import retention_pass
from tests.sleep.sleep_corpus_helpers import git

BENCH = Path(__file__).resolve().parents[2] / "bench"
SIZE = 10_000
HUBS = 40


def _synth() -> ModuleType:
    spec = importlib.util.spec_from_file_location("synth_for_retention", BENCH / "synth.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _at(synth: ModuleType, days: int) -> tuple[str, str]:
    day = (datetime.fromisoformat(synth.NOW.replace("Z", "+00:00")) + timedelta(days=days)).date().isoformat()
    return day, f"{day}T00:00:00Z"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, IndexDB, ModuleType]]:
    synth = _synth()
    root = tmp_path_factory.mktemp("newcorpus") / "mem"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    hubs = [synth.memory_path(i) for i in range(HUBS)]
    for i in range(SIZE):
        path, html = synth.render(i)
        if i >= HUBS and i % 7 == 0:
            html = add_link(html, "relates_to", "/" + hubs[i % HUBS])
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "import")
    repo = GitRepo.discover(root)
    db = IndexDB.for_repo(repo)
    report = indexer.rebuild(repo, db, None, now=synth.NOW)
    assert report.errors == ()
    yield repo, db, synth
    db.close()


def _env(repo: GitRepo, db: IndexDB, day: str, at: str) -> PhaseEnv:
    head = repo.head_sha()
    assert head is not None
    return PhaseEnv(repo=repo, db=db, embedder=None, run_id=f"sleep/{day}", base_sha=head, date=day, at=at,
                    dry_run=True)


@pytest.mark.slow
@pytest.mark.parametrize("days", [14, 31, 90])
def test_a_never_read_corpus_is_not_thinned(corpus: tuple[GitRepo, IndexDB, ModuleType], days: int) -> None:
    repo, db, synth = corpus
    assert observation_start(db) is None  # runs before test_the_first_read_starts_the_window (file order)
    day, at = _at(synth, days)
    edges = db.query_one("SELECT count(*) FROM edges WHERE rel = 'relates_to'")
    assert edges is not None and edges[0] > 1000
    scored = retention_pass(db, at=at, root=repo.root)
    in_band = [s for s in scored if s.band == "evict"]
    assert len(in_band) > 500  # the spec's formula puts never-read, weakly linked memories in the evict band
    counts = retention_triage.run(_env(repo, db, day, at)).counts.wire()
    assert counts["scored"] == SIZE
    assert counts["evicted"] == 0 and counts["unobserved"] == counts["evict"] == len(in_band)


@pytest.mark.slow
def test_the_first_read_starts_the_window(corpus: tuple[GitRepo, IndexDB, ModuleType]) -> None:
    repo, db, synth = corpus
    _, first_read = _at(synth, 40)
    assert record_read(db, synth.memory_path(HUBS + 1), now=first_read)
    assert observation_start(db) == first_read
    day, at = _at(synth, 50)
    counts = retention_triage.run(_env(repo, db, day, at)).counts.wire()
    assert counts["evict"] > 500 and counts["evicted"] == 0 and counts["unobserved"] == counts["evict"]
    day, at = _at(synth, 71)
    in_band = [s for s in retention_pass(db, at=at, root=repo.root) if s.band == "evict"]
    assert all(s.observed_days == 31.0 for s in in_band)  # created at day 0, observed from day 40
    counts = retention_triage.run(_env(repo, db, day, at)).counts.wire()
    assert counts["unobserved"] == 0 and counts["evicted"] == counts["evict"] == len(in_band) > 500
