"""Four-arm RRF retrieval: scope on every arm, archived/as-of, lexical sanitising, degradation (docs/retrieval.md
§4)."""

from __future__ import annotations

import pytest

from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.index import indexer
from git_memhtml.index.access import reinforce
from git_memhtml.index.db import IndexDB
from git_memhtml.index.retrieval import ArmWeights, Scope, search
from git_memhtml.index.retrieval_sql import fts_match, fusion_sql, query_tokens
from tests.index.index_helpers import NOW, Repo, memory_html

FILES = {
    "areas/inbox/a.html": memory_html("A", "Alpha deploys on Mondays.", tags=("ops",), entities=("project:alpha",)),
    "projects/web/b.html": memory_html("B", "Alpha caches pages.", memory_type="procedural", tags=("cache",),
                                       entities=("project:beta",), updated="2026-01-03T00:00:00Z"),
    "projects/web/tasks/t.html": memory_html("T", "Alpha task to fix.", memory_type="task", tags=("cache",)),
    "resources/people/ann.html": memory_html("Ann", "Ann appears in this agent's memory.", entities=("person:Ann",)),
    "resources/people/ann-reviews-alpha.html": memory_html("Ann reviews alpha releases", "Ann reviews alpha releases.",
                                                           entities=("person:Ann",)),
    "archive/2025/areas/inbox/old.html": memory_html(
        "Old", "Alpha used to deploy on Sundays.", created="2025-01-01T00:00:00Z", updated="2025-01-02T00:00:00Z",
        extra_metas=(("valid-until", "2025-06-01T00:00:00Z"),)),
    "areas/inbox/new.html": memory_html("New", "Alpha deploys on Mondays since June.",
                                        links=(("supersedes", "/archive/2025/areas/inbox/old.html"),)),
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
    report = indexer.rebuild(repo.git, db, embedder, now=NOW)
    assert report.errors == ()
    return db


def _paths(db: IndexDB, query: str, embedder: FakeEmbedder | None, **kw: object) -> list[str]:
    result = search(db, query, embedder=embedder, now=NOW, limit=20, **kw)  # type: ignore[arg-type]
    return [h.path for h in result.hits]


@pytest.mark.parametrize("arm", sorted(ONLY))
@pytest.mark.parametrize(
    "scope",
    [Scope(memory_types=("procedural",)), Scope(workspace="web"), Scope(tags=("cache",)),
     Scope(entity="project:beta")],
    ids=["types", "workspace", "tags", "entity"],
)
def test_every_scope_field_narrows_every_arm(corpus: IndexDB, embedder: FakeEmbedder, arm: str,
                                             scope: Scope) -> None:
    weights = ONLY[arm]
    assert len(_paths(corpus, "alpha", embedder, weights=weights)) > 1
    result = search(corpus, "alpha", embedder=embedder, now=NOW, weights=weights, scope=scope)
    assert result.arms == (arm,)
    assert [h.path for h in result.hits] == ["projects/web/b.html"]


def test_tasks_and_archived_hidden_by_default(corpus: IndexDB, embedder: FakeEmbedder) -> None:
    default = _paths(corpus, "alpha sundays", embedder)
    assert "archive/2025/areas/inbox/old.html" not in default
    assert "projects/web/tasks/t.html" not in default
    widened = _paths(corpus, "alpha sundays", embedder, scope=Scope(include_archived=True))
    assert "archive/2025/areas/inbox/old.html" in widened
    lexical = _paths(corpus, "sundays", embedder, scope=Scope(include_archived=True), weights=ONLY["fts"])
    assert lexical == ["archive/2025/areas/inbox/old.html"]
    tasks = _paths(corpus, "alpha", embedder, scope=Scope(memory_types=("task",)))
    assert tasks == ["projects/web/tasks/t.html"]


def test_as_of_replaces_the_archived_filter(corpus: IndexDB, embedder: FakeEmbedder) -> None:
    then = _paths(corpus, "alpha", embedder, scope=Scope(as_of="2025-03-01T00:00:00Z"))
    assert then == ["archive/2025/areas/inbox/old.html"]
    assert "archive/2025/areas/inbox/old.html" not in _paths(
        corpus, "alpha", embedder, scope=Scope(as_of="2025-07-01T00:00:00Z"))


def test_hit_fields_and_superseded_by(corpus: IndexDB, embedder: FakeEmbedder) -> None:
    result = search(corpus, "Sundays", embedder=embedder, now=NOW, scope=Scope(include_archived=True))
    old = next(h for h in result.hits if h.path == "archive/2025/areas/inbox/old.html")
    assert old.superseded_by == "areas/inbox/new.html"
    assert old.snippet.startswith("Alpha used to deploy") and len(old.snippet) <= 700
    a = search(corpus, "mondays", embedder=embedder, now=NOW).hits
    hit = next(h for h in a if h.path == "areas/inbox/a.html")
    assert hit.entities == ("project:alpha",) and hit.superseded_by is None and hit.memory_type == "semantic"
    assert [h.score for h in a] == sorted((h.score for h in a), reverse=True)


def test_punctuation_only_query_has_no_fts_arm(corpus: IndexDB, embedder: FakeEmbedder) -> None:
    result = search(corpus, "?!… --", embedder=embedder, now=NOW)
    assert "fts" not in result.arms and "vector" not in result.arms and not result.degraded
    assert result.hits  # recency and salience still answer


def test_no_embedder_is_degraded_lexical(corpus: IndexDB) -> None:
    result = search(corpus, "caches", embedder=None, now=NOW)
    assert result.degraded and "vector" not in result.arms
    assert result.hits[0].path == "projects/web/b.html"


def test_salience_reads_access(corpus: IndexDB, embedder: FakeEmbedder) -> None:
    reinforce(corpus, ["areas/inbox/new.html"], signal="positive", now=NOW)
    ranked = _paths(corpus, "", embedder, weights=ONLY["salience"])
    assert ranked[0] == "areas/inbox/new.html"


@pytest.mark.parametrize("arm", sorted(ONLY))
def test_a_stub_is_no_result_and_a_fact_filed_with_the_people_is(corpus: IndexDB, embedder: FakeEmbedder,
                                                                 arm: str) -> None:
    """The minted "Ann appears in this agent's memory." says nothing: no arm ranks it, under any scope. A fact about
    Ann is a fact wherever it is filed: every arm ranks it, salience included (issue 27)."""
    for scope in (Scope(), Scope(entity="person:ann"), Scope(memory_types=("semantic",)),
                  Scope(include_archived=True)):
        ranked = _paths(corpus, "ann alpha releases memory", embedder, weights=ONLY[arm], scope=scope)
        assert "resources/people/ann.html" not in ranked
        assert "resources/people/ann-reviews-alpha.html" in ranked
    assert "resources/people/ann.html" not in _paths(corpus, "Ann appears in this agent's memory.", embedder)


def test_search_never_writes(corpus: IndexDB, embedder: FakeEmbedder) -> None:
    search(corpus, "alpha", embedder=embedder, now=NOW)
    assert corpus.query("SELECT count(*) FROM state.access") == [(0,)]


def test_query_sanitising() -> None:
    assert query_tokens("What is the Deploy-window of Café_2?") == ["deploy", "window", "café", "2"]
    assert fts_match("the deploy AND NEAR window") == '"deploy" OR "near" OR "window"'
    assert fts_match("the of?!") is None


def test_fusion_sql_is_pure_and_shares_the_scope() -> None:
    sql, params = fusion_sql({"fts": 1.0, "recency": 0.5}, Scope(workspace="w", tags=("x",)), match='"a"', now=NOW)
    assert sql.count("f.workspace = :s_workspace") == 2
    assert params["s_workspace"] == "w" and params["w_recency"] == 0.5 and params["arm_limit"] == 40
    assert "60.0" in sql and "ORDER BY score DESC, path ASC" in sql
