"""Scope on every arm for the archived and point-in-time fields, archivedMatches, MMR, recall and neighbours.

Each scope test runs every arm *alone* (the other three weighted 0), so a filter missing from one arm's SQL makes
exactly that arm's case fail (docs/retrieval.md §4.1: "a scope that holds on three of four arms is a leak").
"""

from __future__ import annotations

import pytest

from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.errors import PathNotFound, UsageError
from git_memhtml.index import indexer
from git_memhtml.index.asof import parse_as_of
from git_memhtml.index.db import IndexDB
from git_memhtml.index.neighbors import neighbors
from git_memhtml.index.recall import ARC_BUDGET, recall
from git_memhtml.index.retrieval import ArmWeights, Scope, search
from tests.index.index_helpers import NOW, Repo, memory_html

OLD = "archive/2025/areas/inbox/old.html"
NEW = "areas/inbox/new.html"
EVT = "areas/inbox/evt.html"
LIVE = "areas/inbox/live.html"
FILES = {
    LIVE: memory_html("Live", "Alpha deploys on Mondays.", tags=("ops",)),
    OLD: memory_html("Old", "Alpha used to deploy on Sundays.", created="2025-01-01T00:00:00Z",
                     updated="2025-01-02T00:00:00Z", tags=("legacy",),
                     extra_metas=(("valid-until", "2025-06-01T00:00:00Z"),)),
    # valid-from (2025-06-01) is earlier than created (2026): the window starts at valid-from
    NEW: memory_html("New", "Alpha deploys on Mondays since June.", extra_metas=(("valid-from",
                     "2025-06-01T00:00:00Z"),), links=(("supersedes", "/" + OLD),)),
    # no validity metas, but an event time (2024) earlier than created: the window starts at the event
    EVT: memory_html("Evt", "Alpha launched at the offsite.",
                     article_extra='<p>It happened on <time datetime="2024-05-01T00:00:00Z">1 May 2024</time>.</p>'),
}
ONLY = {
    "fts": ArmWeights(1, 0, 0, 0), "vector": ArmWeights(0, 1, 0, 0),
    "recency": ArmWeights(0, 0, 1, 0), "salience": ArmWeights(0, 0, 0, 1),
}


@pytest.fixture
def corpus(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> IndexDB:
    for path, html in FILES.items():
        repo.write(path, html)
    repo.commit("corpus", *FILES)
    assert indexer.rebuild(repo.git, db, embedder, now=NOW).errors == ()
    return db


def _hits(db: IndexDB, embedder: FakeEmbedder, arm: str, scope: Scope, query: str = "alpha") -> set[str]:
    result = search(db, query, scope=scope, embedder=embedder, weights=ONLY[arm], now=NOW, limit=50)
    assert result.arms == (arm,)
    return {h.path for h in result.hits}


@pytest.mark.parametrize("arm", sorted(ONLY))
def test_archived_rows_are_hidden_on_every_arm_unless_included(corpus: IndexDB, embedder: FakeEmbedder,
                                                               arm: str) -> None:
    assert _hits(corpus, embedder, arm, Scope()) == {LIVE, NEW, EVT}
    assert _hits(corpus, embedder, arm, Scope(include_archived=True)) == {LIVE, NEW, EVT, OLD}


@pytest.mark.parametrize("arm", sorted(ONLY))
@pytest.mark.parametrize(
    ("as_of", "expected"),
    [("2025-03-01T00:00:00Z", {OLD, EVT}),  # old by created (valid until June); evt by its event time
     ("2025-07-01T00:00:00Z", {NEW, EVT}),  # old expired; new valid from June although created in 2026
     ("2024-01-01T00:00:00Z", set())],
    ids=["before-correction", "after-correction", "before-everything"],
)
def test_as_of_window_narrows_every_arm(corpus: IndexDB, embedder: FakeEmbedder, arm: str, as_of: str,
                                        expected: set[str]) -> None:
    assert _hits(corpus, embedder, arm, Scope(as_of=as_of)) == expected
    # as-of replaces the archived filter: include_archived changes nothing
    assert _hits(corpus, embedder, arm, Scope(as_of=as_of, include_archived=True)) == expected


def test_as_of_parsing_is_canonical_and_refuses_garbage() -> None:
    assert parse_as_of("2025-03-01") == "2025-03-01T00:00:00Z"
    assert parse_as_of("2025-03-01T09:30:00+02:00") == "2025-03-01T07:30:00Z"
    assert parse_as_of("2025-03-01T09:30Z") == "2025-03-01T09:30:00Z"
    for bad in ("yesterday", "2025-02-30", "2025-03-01T25:00:00Z", "1700000000", ""):
        with pytest.raises(UsageError, match="YYYY-MM-DD"):
            parse_as_of(bad)


def test_empty_result_reports_archived_matches_and_their_replacement(corpus: IndexDB,
                                                                     embedder: FakeEmbedder) -> None:
    result = search(corpus, "sundays", scope=Scope(tags=("legacy",)), embedder=embedder, now=NOW)
    assert result.hits == () and result.scope_empty
    assert result.archived_matches == 1
    assert [(a.path, a.superseded_by) for a in result.archived] == [(OLD, NEW)]
    # the query must match too: a word no archived row holds is "never existed"
    never = search(corpus, "kubernetes", scope=Scope(tags=("legacy",)), embedder=embedder, now=NOW)
    assert never.hits == () and never.archived_matches == 0 and never.archived == ()
    # a query without tokens counts every archived row of the scope
    assert search(corpus, "?!", scope=Scope(tags=("legacy",)), embedder=embedder, now=NOW).archived_matches == 1
    # the other scope fields still apply to the archived count
    other = search(corpus, "sundays", scope=Scope(tags=("legacy",), memory_types=("episodic",)), embedder=embedder,
                   now=NOW)
    assert other.archived_matches == 0
    # with hits, nothing is counted; with archived rows admitted, they were hits already
    assert search(corpus, "alpha", embedder=embedder, now=NOW).archived_matches is None
    included = search(corpus, "sundays", scope=Scope(tags=("legacy",), include_archived=True), embedder=embedder,
                      now=NOW)
    assert [h.path for h in included.hits] == [OLD] and included.hits[0].superseded_by == NEW


def _dupes(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    files = {
        "areas/inbox/d1.html": memory_html("D1", "Deploy window Monday morning for alpha service."),
        "areas/inbox/d2.html": memory_html("D2", "Deploy window Monday morning for alpha service again."),
        "areas/inbox/d3.html": memory_html("D3", "Deploy freeze holidays."),
    }
    for path, html in files.items():
        repo.write(path, html)
    repo.commit("dupes", *files)
    indexer.rebuild(repo.git, db, embedder, now=NOW)


def test_mmr_demotes_a_near_duplicate_and_draws_from_three_times_the_limit(repo: Repo, db: IndexDB,
                                                                           embedder: FakeEmbedder) -> None:
    _dupes(repo, db, embedder)
    weights = ArmWeights(1, 1, 0, 0)
    q = "deploy window monday morning alpha"
    fused = [h.path for h in search(db, q, embedder=embedder, weights=weights, now=NOW, limit=3).hits]
    assert fused[:2] == ["areas/inbox/d1.html", "areas/inbox/d2.html"] and fused[2] == "areas/inbox/d3.html"
    diverse = search(db, q, embedder=embedder, weights=weights, now=NOW, limit=3, mmr_lambda=0.5).hits
    assert [h.path for h in diverse] == ["areas/inbox/d1.html", "areas/inbox/d3.html", "areas/inbox/d2.html"]
    assert diverse[1].score < diverse[2].score  # scores stay the fused ones
    # limit 2: d3 (fused position 3) is only reachable because the fusion keeps 3 × limit candidates
    two = search(db, q, embedder=embedder, weights=weights, now=NOW, limit=2, mmr_lambda=0.5).hits
    assert [h.path for h in two] == ["areas/inbox/d1.html", "areas/inbox/d3.html"]
    # without vectors there is no penalty: MMR keeps the fused order
    lexical = search(db, q, embedder=None, weights=weights, now=NOW, limit=3, mmr_lambda=0.5).hits
    assert [h.path for h in lexical] == fused
    with pytest.raises(UsageError):
        search(db, q, embedder=embedder, now=NOW, mmr_lambda=1.5)


def test_recall_budget_tiers_entity_cap_and_arcs(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    files = {
        f"areas/inbox/p{i}.html": memory_html(f"P{i}", f"Priya fact number {i} about alpha.",
                                              entities=("person:priya",), updated=f"2026-01-0{i + 1}T00:00:00Z")
        for i in range(4)
    }
    files["areas/inbox/s.html"] = memory_html("S", "Alpha summary holder.", article_extra="<section>"
                                              "<h2>Summary</h2><p>x</p></section>")
    files["areas/arcs/arc.html"] = memory_html("Arc", "The alpha arc spans the quarter.", memory_type="arc")
    for path, html in files.items():
        repo.write(path, html)
    repo.commit("recall", *files)
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    pack = recall(db, "alpha", embedder=embedder, now=NOW, budget=10_000)
    assert [d.path for d in pack.arcs] == ["areas/arcs/arc.html"]
    priya = [d for d in pack.memories if "person:priya" in d.entities]
    assert len(priya) == 2  # at most two disclosures per entity name
    capped = [line for line in pack.lateral if line.reason == "entity-cap"]
    assert len(capped) == 2 and all(line.path.startswith("areas/inbox/p") for line in capped)
    assert pack.spent_chars == sum(d.chars for d in pack.arcs + pack.memories) <= 10_000 and not pack.truncated
    tight = recall(db, "alpha", embedder=embedder, now=NOW, budget=60)
    assert tight.spent_chars <= 60 and tight.truncated
    assert any(line.reason == "budget" for line in tight.lateral)
    assert {d.path for d in tight.arcs + tight.memories} | {line.path for line in tight.lateral} == {
        d.path for d in pack.arcs + pack.memories} | {line.path for line in pack.lateral}
    assert ARC_BUDGET == 9000
    with pytest.raises(UsageError):
        recall(db, "alpha", embedder=embedder, now=NOW, budget=0)


def test_neighbors_walk_memory_edges_both_ways_to_depth_two(repo: Repo, db: IndexDB,
                                                           embedder: FakeEmbedder) -> None:
    files = {
        "areas/inbox/a.html": memory_html("A", "A claim.", links=(("relates_to", "/areas/inbox/b.html"),
                                                                  ("about_person", "/resources/people/p.html"))),
        "areas/inbox/b.html": memory_html("B", "B claim.", links=(("supports", "/areas/inbox/c.html"),)),
        "areas/inbox/c.html": memory_html("C", "C claim."),
        "areas/inbox/z.html": memory_html("Z", "Z claim.", links=(("contradicts", "/areas/inbox/a.html"),)),
        "resources/people/p.html": memory_html("P", "P is a person."),
    }
    for path, html in files.items():
        repo.write(path, html)
    repo.commit("graph", *files)
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    one = neighbors(db, "areas/inbox/a.html")
    assert [(n.path, n.hop, n.rel, n.direction) for n in one.nodes] == [
        ("areas/inbox/z.html", 1, "contradicts", "in"), ("areas/inbox/b.html", 1, "relates_to", "out")]
    two = neighbors(db, "areas/inbox/a.html", depth=2)
    assert ("areas/inbox/c.html", 2, "supports") in [(n.path, n.hop, n.rel) for n in two.nodes]
    assert "resources/people/p.html" not in {n.path for n in two.nodes}  # person edges are not memory edges
    only = neighbors(db, "areas/inbox/a.html", depth=2, rels=("relates-to",))
    assert [n.path for n in only.nodes] == ["areas/inbox/b.html"]
    with pytest.raises(UsageError):
        neighbors(db, "areas/inbox/a.html", depth=3)
    with pytest.raises(UsageError):
        neighbors(db, "areas/inbox/a.html", rels=("about_person",))
    with pytest.raises(PathNotFound):
        neighbors(db, "areas/inbox/missing.html")
