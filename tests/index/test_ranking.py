"""``index.ranking.ranked_paths``: the positions ``search`` gives, and the query-independent arms read once.

The run gate ranks hundreds of claims on each of two indexes (docs/gate.md §9); the recency and salience arms rank
the same paths for every query at one scope and instant, so ``ranked_paths`` reads them once
(``resident.fixed_arm_ranks``) instead of sorting every admitted file again per query (bench/README.md, run gate).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from git_memhtml.cli.common import init_memory
from git_memhtml.domain.rrf import identifier_phrases
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index import indexer
from git_memhtml.index.access import reinforce
from git_memhtml.index.db import IndexDB, open_index
from git_memhtml.index.ranking import ranked_paths
from git_memhtml.index.resident import ResidentVectors, eligible_paths
from git_memhtml.index.retrieval import search
from git_memhtml.index.retrieval_sql import ArmWeights, Scope, fts_match
from git_memhtml.store.ops import parse_op_stream
from git_memhtml.store.writer import apply_batch
from tests.index.index_helpers import NOW

DEMO = Path(__file__).resolve().parents[2] / "git_memhtml" / "resources" / "demo" / "memories.jsonl"
EMBEDDER = FakeEmbedder(dim=32)

WEIGHTS = [
    ("default", ArmWeights()),
    ("probe", ArmWeights(fts=1.0, vector=1.0, recency=0.5, salience=0.0)),
    ("recency-only", ArmWeights(fts=0.0, vector=0.0, recency=1.0, salience=0.0)),
    ("salience-heavy", ArmWeights(fts=0.5, vector=0.0, recency=0.0, salience=2.0)),
    ("lexical", ArmWeights(fts=1.0, vector=0.0, recency=0.0, salience=0.0)),
]
SCOPES = [("default", Scope()), ("archived", Scope(include_archived=True)),
          ("semantic", Scope(memory_types=("semantic",)))]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[IndexDB, list[str]]]:
    """The demo corpus indexed in memory, with access counts (so salience is not recency again), and its claims
    plus word mixes as queries."""
    root = tmp_path_factory.mktemp("ranking") / "mem"
    init_memory(root)
    repo = GitRepo.discover(root)
    apply_batch(repo, parse_op_stream(DEMO.read_text(encoding="utf-8")), now="2026-01-10T00:00:00Z",
                dedupe=lambda _h: None)
    db = open_index(":memory:", ":memory:")
    indexer.rebuild(repo, db, EMBEDDER, now=NOW)
    paths = [str(r[0]) for r in db.query("SELECT path FROM files ORDER BY path")]
    reinforce(db, paths[::3], signal="positive", now=NOW)
    claims = [str(r[0]) for r in db.query("SELECT gist FROM files ORDER BY path")]
    rng = random.Random(5)
    words = " ".join(claims).split()
    yield db, claims[:15] + [" ".join(rng.sample(words, 4)) for _ in range(10)] + ["ωμέγα"]
    db.close()


def _qvec(query: str) -> bytes | None:
    row = np.asarray(EMBEDDER.embed([query]), dtype="<f4")[0]
    return row.tobytes() if np.any(row) else None


@pytest.mark.parametrize("weights_name", [w[0] for w in WEIGHTS])
@pytest.mark.parametrize("scope_name", [s[0] for s in SCOPES])
def test_ranked_paths_are_the_positions_search_gives(demo: tuple[IndexDB, list[str]], weights_name: str,
                                                     scope_name: str) -> None:
    db, queries = demo
    weights, scope = dict(WEIGHTS)[weights_name], dict(SCOPES)[scope_name]
    resident = ResidentVectors.load(db, EMBEDDER.space)
    for query in queries:
        want = [h.path for h in search(db, query, scope=scope, embedder=EMBEDDER, weights=weights, now=NOW).hits]
        qvec = _qvec(query)
        plain = ranked_paths(db, query, qvec=qvec, space=EMBEDDER.space, scope=scope, limit=10, weights=weights,
                             now=NOW)
        fast = ranked_paths(db, query, qvec=qvec, space=EMBEDDER.space, scope=scope, limit=10, weights=weights,
                            now=NOW, resident=resident, eligible=eligible_paths(db, scope))
        assert plain == want and fast == want, query


def test_fixed_arms_are_read_once_per_scope_and_instant(demo: tuple[IndexDB, list[str]]) -> None:
    """Statements SQLite ran while 26 queries were ranked: the recency arm's sort (``ORDER BY t DESC``) and the
    salience arm's (``ORDER BY s DESC``) once each per scope and instant, not once per query."""
    db, queries = demo
    weights = ArmWeights(fts=1.0, vector=1.0, recency=0.5, salience=0.4)
    ran: list[str] = []

    def trace(_cursor: object, sql: str, _bindings: object) -> bool:
        ran.append(sql)
        return True

    conn = db._conn  # the real connection: apsw's statement trace, no stand-in
    conn.exec_trace = trace
    try:
        for now in ("2026-03-01T00:00:00Z", "2026-03-02T00:00:00Z"):
            for query in queries:
                ranked_paths(db, query, qvec=_qvec(query), space=EMBEDDER.space, scope=Scope(), limit=10,
                             weights=weights, now=now)
    finally:
        conn.exec_trace = None
    assert sum("ORDER BY t DESC" in sql for sql in ran) == 2
    assert sum("ORDER BY s DESC" in sql for sql in ran) == 2
    # per query: the lexical arm, plus two phrase look-ups per identifier (docs/retrieval.md §4.3 "Identifiers")
    lexical = [q for q in queries if fts_match(q) is not None]
    assert sum("files_fts MATCH" in sql for sql in ran) == 2 * sum(1 + 2 * len(identifier_phrases(q)) for q in lexical)
    assert any(identifier_phrases(q) for q in lexical)  # the demo claims name identifiers: the step ran
