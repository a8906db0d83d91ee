"""A keeper is found by what it absorbed (docs/retrieval.md §4.15).

The corpus is a dedup fold as the night leaves it (conv-44's first lost question, bench/curation.py): the keeper
``KEEP`` ("devoted to keeping her dogs healthy") ``supersedes`` the archived ``DROP`` ("taking care of her four
dogs"), which carries ``superseded-by`` → the keeper. A question in the dropped memory's words must find the keeper
on the lexical and on the vector arm, by every way the vector arm is read (the matrix, the SQL scan, resident
vectors), without the archived file ever being a hit, and without the keeper entering a scope that hides it.
"""

from __future__ import annotations

import pytest

from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB
from git_memhtml.index.resident import ResidentVectors
from git_memhtml.index.retrieval import ArmWeights, Scope, keeper_ranks, search
from tests.index.index_helpers import NOW, Repo, memory_html

KEEP = "projects/conv-44/audrey-session-26-observation-4.html"
DROP = "archive/2026/projects/conv-44/audrey-session-6-observation-5.html"
OTHER = "projects/conv-44/audrey-session-14-observation-6.html"
ELSE = "projects/kitchen/andrew-session-3-observation-1.html"
NEAR = "projects/conv-44/audrey-session-9-observation-2.html"
DROP_CLAIM = "Audrey is taking care of her four dogs and ensuring they are happy and healthy."
QUESTION = "taking care four"
FILES = {
    KEEP: memory_html("Audrey, session 26, observation 4", "Audrey is devoted to keeping her dogs healthy and happy.",
                      memory_type="episodic", tags=("locomo",), entities=("person:Audrey",),
                      links=(("supersedes", "/" + DROP),)),
    DROP: memory_html("Audrey, session 6, observation 5", DROP_CLAIM, memory_type="episodic", tags=("locomo",),
                      entities=("person:Audrey",),
                      extra_metas=(("archived", "2026-01-02T00:00:00Z"), ("superseded-by", "/" + KEEP))),
    OTHER: memory_html("Audrey, session 14, observation 6", "Audrey joined a dog-owners group to learn training.",
                       memory_type="episodic", tags=("locomo",), entities=("person:Audrey",)),
    # nearer the dropped claim than the keeper is, by the fake embedder's tokens, with none of QUESTION's words
    NEAR: memory_html("Audrey, session 9, observation 2",
                      "Audrey is minding her dogs and ensuring they are happy and healthy.", memory_type="episodic",
                      tags=("locomo",), entities=("person:Audrey",)),
    ELSE: memory_html("Andrew, session 3, observation 1", "Andrew bakes sourdough bread every weekend.",
                      memory_type="episodic", tags=("kitchen",), entities=("person:Andrew",)),
}
FTS_ONLY = ArmWeights(1, 0, 0, 0)
VECTOR_ONLY = ArmWeights(0, 1, 0, 0)


@pytest.fixture
def folded(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> IndexDB:
    for path, html in FILES.items():
        repo.write(path, html)
    repo.commit("a night's fold", *FILES)
    assert indexer.rebuild(repo.git, db, embedder, now=NOW).errors == ()
    return db


def _paths(db: IndexDB, embedder: FakeEmbedder, weights: ArmWeights, *, query: str = QUESTION,
           scope: Scope | None = None, use_matrix: bool = True, resident: ResidentVectors | None = None) -> list[str]:
    result = search(db, query, scope=scope, embedder=embedder, weights=weights, now=NOW, limit=10,
                    use_matrix=use_matrix, resident=resident)
    return [h.path for h in result.hits]


def test_the_lexical_arm_finds_the_keeper_by_the_dropped_memorys_words(folded: IndexDB,
                                                                       embedder: FakeEmbedder) -> None:
    # "taking", "care", "four" are only in the dropped memory: before §4.15 the keeper was not a hit at all
    assert _paths(folded, embedder, FTS_ONLY)[0] == KEEP


@pytest.mark.parametrize("read", ["matrix", "sql", "resident"])
def test_the_vector_arm_ranks_the_keeper_where_its_member_ranked(folded: IndexDB, embedder: FakeEmbedder,
                                                                 read: str) -> None:
    resident = ResidentVectors.load(folded, embedder.space) if read == "resident" else None
    # the dropped memory's own claim as the query: its vector is the nearest, and the keeper takes its rank (before
    # §4.15 the keeper came after NEAR)
    assert _paths(folded, embedder, VECTOR_ONLY, query=DROP_CLAIM, use_matrix=read == "matrix",
                  resident=resident)[:2] == [KEEP, NEAR]


def test_an_absorbed_memory_is_never_a_hit_and_each_file_comes_once(folded: IndexDB, embedder: FakeEmbedder) -> None:
    for weights in (FTS_ONLY, VECTOR_ONLY, ArmWeights()):
        found = _paths(folded, embedder, weights, query="Audrey dogs caring healthy happy")
        assert DROP not in found
        assert len(found) == len(set(found))


def test_a_scope_that_hides_the_keeper_does_not_admit_it_through_its_member(folded: IndexDB,
                                                                            embedder: FakeEmbedder) -> None:
    assert _paths(folded, embedder, FTS_ONLY, scope=Scope(workspace="kitchen")) == []
    assert _paths(folded, embedder, FTS_ONLY, scope=Scope(memory_types=("semantic",))) == []
    assert _paths(folded, embedder, FTS_ONLY, scope=Scope(entity="person:Audrey"))[0] == KEEP


def test_with_archived_rows_in_scope_the_archived_file_is_itself_the_hit(folded: IndexDB,
                                                                        embedder: FakeEmbedder) -> None:
    found = _paths(folded, embedder, FTS_ONLY, scope=Scope(include_archived=True))
    assert found[0] == DROP
    assert KEEP not in found  # the keeper has none of the question's words: nothing stands in for anything


def test_keeper_ranks_gives_each_file_its_best_rank(folded: IndexDB) -> None:
    ranking = [OTHER, DROP, KEEP, "archive/2026/areas/inbox/orphan.html", ELSE]
    assert keeper_ranks(folded, ranking, Scope()) == [OTHER, KEEP, ELSE]
    assert keeper_ranks(folded, ranking, Scope(), arm_limit=2) == [OTHER, KEEP]
    # a keeper outside the scope: its member's row is dropped, not handed to it
    assert keeper_ranks(folded, [DROP, ELSE], Scope(workspace="kitchen")) == [ELSE]


def test_a_supersedes_edge_into_an_active_file_lifts_nothing(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    live = "areas/inbox/walks.html"
    pointer = "areas/inbox/bread.html"
    files = {
        live: memory_html("Walks", "Audrey walks the dogs at dawn."),
        pointer: memory_html("Bread", "Andrew bakes sourdough bread.", links=(("supersedes", "/" + live),)),
    }
    for path, html in files.items():
        repo.write(path, html)
    repo.commit("an edge into a live file", *files)
    assert indexer.rebuild(repo.git, db, embedder, now=NOW).errors == ()
    assert _paths(db, embedder, FTS_ONLY, query="walks dawn") == [live]
