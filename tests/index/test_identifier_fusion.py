"""Names that differ by one digit (docs/retrieval.md §4.3 "Identifiers"): the exact identifier ranks first.

Each row is a family of near-twins whose text echoes the query more than the exact memory does, so the vector arm
(and the lexical arm's term counts) prefer a twin, as a digit-blind static embedder does: under plain RRF a twin
that sits in both arms beat the exact match (the failure on the commit before the identifier step). Queries
without an identifier keep the plain fusion order.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from git_memhtml.cli.common import init_memory
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB, open_index
from git_memhtml.index.ranking import ranked_paths
from git_memhtml.index.retrieval import search
from git_memhtml.index.retrieval_sql import ARM_LIMIT, ArmWeights, Scope, fts_match, fusion_sql, running_arms
from git_memhtml.store.ops import parse_op_stream
from git_memhtml.store.writer import apply_batch
from tests.index.index_helpers import NOW

EMBEDDER = FakeEmbedder(dim=64)


def _family(exact: tuple[str, str], twins: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``[(slug, claim)]``: the exact memory first, then its near-twins."""
    return [exact, *twins]


FAMILIES: dict[str, list[tuple[str, str]]] = {
    # slug → [(slug, claim)]; the first is the exact memory
    "release": _family(("r1-2-1", "Release 1.2.1 shipped."),
                       [(f"r1-{n}-{m}", f"Release 1.{n}.{m} shipped; the release shipped on time.")
                        for n in range(12) for m in (0, 1) if (n, m) != (2, 1)]),
    "host": _family(("web01", "Host web01 listens on 8001."),
                    [(f"web{x}", f"The web{x} server port is 8{x}; server port checks run hourly.")
                     for x in ["00", "02", "03", "20", "11", "1", "2", "3", "100"]]),
    "host10": _family(("web10", "Host web10 was moved to the basement rack by the storage team last winter."),
                      [(f"web{x}-b", f"The web{x} server port: server port is 9{x}; server port checks.")
                       for x in ["12", "13", "14", "15", "1", "11", "100"]]),
    "knob": _family(("zq2", "Knob zq2 was retuned by the storage team last winter after the incident."),
                    [(f"zq{n}", f"The parallel zq{n} knob: parallel knob, parallel knob workers.")
                     for n in (1, 3, 4, 5, 6, 7, 22)]),
    "incident": _family(("inc-10423", "Incident INC-10423 resolved."),
                        [(f"inc-104{d}3", f"Incident INC-104{d}3 outage postmortem: the outage postmortem is done.")
                         for d in (0, 1, 3, 4, 5, 6)]),
    "ticket": _family(("t-5561", "Ticket T-5561 closed."),
                      [(f"t-556{d}", f"Ticket T-556{d} billing refund: the billing refund was sent.")
                       for d in (0, 2, 3, 4, 5)]),
    "date": _family(("freeze-0315", "Freeze 2024-03-15 was agreed by the storage team last winter."),
                    [(f"freeze-{s}", f"Deploy freeze on {d}: deploy freeze, deploy freeze holds deploys.")
                     for s, d in [("0314", "2024-03-14"), ("0316", "2024-03-16"), ("0415", "2024-04-15"),
                                  ("2023", "2023-03-15"), ("0325", "2024-03-25")]]),
    # more twins than an arm keeps (40): the exact memory is in no arm's top 40, only the identifier look-up has it
    "build": _family(("v3-1-4", "Build v3.1.4 was moved to the basement rack by the storage team last winter."),
                     [(f"v3-{slug}", f"Build {name} refund label: refund label printed, refund label sent.")
                      for b in range(30)
                      for slug, name in ((f"4-1-{b}", f"v3.4.1.{b}"), (f"{b}-1-4", f"v3.{b}.1.4"))]),
}

ROWS = [
    ("version-middle", "release 1.2.1 shipped", "r1-2-1"),
    ("host-leading-zero", "web01 server port", "web01"),
    ("host-two-digits", "web10 server port", "web10"),
    ("knob", "parallel zq2 knob", "zq2"),
    ("id-middle-digit", "INC-10423 outage postmortem", "inc-10423"),
    ("id-last-digit", "T-5561 billing refund", "t-5561"),
    ("date", "deploy freeze 2024-03-15", "freeze-0315"),
    ("outside-every-arm", "v3.1.4 refund label", "v3-1-4"),
]
"""(case, query, slug that must rank first)."""

NO_IDENTIFIER = ["release shipped on time", "server port checks", "parallel knob workers", "outage postmortem",
                 "deploy freeze", "billing refund", "host listens"]
WEIGHTS = [("fake-default", ArmWeights()), ("wordllama-like", ArmWeights(fts=1.0, vector=0.1, recency=0.05,
                                                                          salience=0.05))]


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IndexDB]:
    root = tmp_path_factory.mktemp("identifiers") / "mem"
    init_memory(root)
    ops = {(family, slug): json.dumps({"op": "write", "title": claim.split(":")[0].split(";")[0], "type": "semantic",
                                       "claim": claim, "path": f"resources/{family}/{slug}.html"})
           for family, members in FAMILIES.items() for slug, claim in members}
    repo = GitRepo.discover(root)
    old = [ops.pop(("build", "v3-1-4"))]  # the oldest memory: outside the recency and salience arms' top 40 too
    for batch, now in ((old, "2025-06-01T00:00:00Z"), (list(ops.values()), "2026-01-10T00:00:00Z")):
        apply_batch(repo, parse_op_stream("\n".join(batch) + "\n"), now=now, dedupe=lambda _h: None)
    db = open_index(":memory:", ":memory:")
    indexer.rebuild(repo, db, EMBEDDER, now=NOW)
    yield db
    db.close()


def _slug(path: str) -> str:
    return Path(path).stem


@pytest.mark.parametrize("weights_name", [w[0] for w in WEIGHTS])
@pytest.mark.parametrize(("case", "query", "first"), ROWS, ids=[r[0] for r in ROWS])
def test_the_exact_identifier_ranks_first(twins: IndexDB, case: str, query: str, first: str,
                                          weights_name: str) -> None:
    weights = dict(WEIGHTS)[weights_name]
    hits = search(twins, query, embedder=EMBEDDER, weights=weights, now=NOW).hits
    assert [_slug(h.path) for h in hits][:1] == [first], (case, [_slug(h.path) for h in hits])
    mmr_hits = search(twins, query, embedder=EMBEDDER, weights=weights, now=NOW, mmr_lambda=0.5).hits
    assert _slug(mmr_hits[0].path) == first  # MMR picks its first by relevance: the identifier order
    assert len(hits) == 10 and len({h.path for h in hits}) == 10


@pytest.mark.parametrize(("case", "query", "first"), ROWS, ids=[r[0] for r in ROWS])
def test_ranked_paths_gives_the_same_positions(twins: IndexDB, case: str, query: str, first: str) -> None:
    qvec = np.asarray(EMBEDDER.embed([query]), dtype="<f4")[0].tobytes()
    want = [h.path for h in search(twins, query, embedder=EMBEDDER, now=NOW).hits]
    got = ranked_paths(twins, query, qvec=qvec, space=EMBEDDER.space, scope=Scope(), limit=10,
                       weights=ArmWeights(), now=NOW)
    assert got == want and _slug(got[0]) == first, case


@pytest.mark.parametrize("query", NO_IDENTIFIER)
def test_a_query_without_identifier_keeps_the_plain_fusion_order(twins: IndexDB, query: str) -> None:
    qvec = np.asarray(EMBEDDER.embed([query]), dtype="<f4")[0].tobytes()
    weights = ArmWeights()
    arms = running_arms(weights, match=fts_match(query), qvec=qvec)
    sql, params = fusion_sql(arms, Scope(), match=fts_match(query), qvec=qvec, space=EMBEDDER.space, now=NOW,
                             limit=10, arm_limit=ARM_LIMIT)
    plain = [(str(p), float(s)) for p, s in twins.query(sql, params)]
    hits = search(twins, query, embedder=EMBEDDER, weights=weights, now=NOW, use_matrix=False).hits
    assert [(h.path, h.score) for h in hits] == plain and plain


@pytest.mark.parametrize(("case", "query", "first"), ROWS, ids=[r[0] for r in ROWS])
def test_identifier_holders_keep_to_the_scope(twins: IndexDB, case: str, query: str, first: str) -> None:
    """The identifier look-up adds candidates only from the scope: none of another type, none outside it."""
    assert search(twins, query, embedder=EMBEDDER, scope=Scope(memory_types=("episodic",)), now=NOW).hits == ()
    elsewhere = search(twins, query, embedder=EMBEDDER, scope=Scope(workspace="elsewhere"), now=NOW)
    assert elsewhere.hits == () and elsewhere.scope_empty, case
