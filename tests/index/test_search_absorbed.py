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


def test_keeper_ranks_gives_each_file_its_best_rank_and_every_row_keeps_its_slot(folded: IndexDB) -> None:
    ranking = [OTHER, DROP, KEEP, "archive/2026/areas/inbox/orphan.html", ELSE]
    assert keeper_ranks(folded, ranking, Scope()) == [(OTHER, 1), (KEEP, 2), (ELSE, 5)]
    assert keeper_ranks(folded, ranking, Scope(), arm_limit=2) == [(OTHER, 1), (KEEP, 2)]
    assert keeper_ranks(folded, ranking, Scope(), arm_limit=4) == [(OTHER, 1), (KEEP, 2)]  # ELSE is 5th, not 3rd
    # a keeper outside the scope: its member's row is dropped, not handed to it, and its slot stays empty
    assert keeper_ranks(folded, [DROP, ELSE], Scope(workspace="kitchen")) == [(ELSE, 2)]
    # ranks a (path, rank) row carries are kept
    assert keeper_ranks(folded, [(DROP, 1), (KEEP, 1), (ELSE, 3)], Scope()) == [(KEEP, 1), (ELSE, 3)]


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


def _import(repo: Repo, db: IndexDB, embedder: FakeEmbedder, claims: dict[str, str]) -> None:
    """Commit one memory per ``claims`` item (title "Note <path stem>") and index them."""
    for path, claim in claims.items():
        repo.write(path, memory_html(f"Note {path.rsplit('/', 1)[-1][:-5]}", claim))
    repo.commit("an import", *claims)
    assert indexer.rebuild(repo.git, db, embedder, now=NOW).errors == ()


def _fold(repo: Repo, db: IndexDB, embedder: FakeEmbedder, claims: dict[str, str], member: str, keeper: str) -> None:
    """What a night's fold leaves: ``member`` archived with ``superseded-by`` → ``keeper``, which ``supersedes`` it;
    committed and indexed."""
    archived = "archive/2026/" + member
    (repo.root / member).unlink()
    stem = member.rsplit("/", 1)[-1][:-5]
    repo.write(archived, memory_html(f"Note {stem}", claims[member], extra_metas=(
        ("archived", "2026-01-02T00:00:00Z"), ("superseded-by", "/" + keeper))))
    repo.write(keeper, memory_html(f"Note {keeper.rsplit('/', 1)[-1][:-5]}", claims[keeper],
                                   links=(("supersedes", "/" + archived),)))
    repo.git.stage([member, archived, keeper])
    assert repo.git.commit("a night's fold") is not None
    assert indexer.rebuild(repo.git, db, embedder, now=NOW).errors == ()


def _lantern_claims(count: int) -> dict[str, str]:
    """``count`` claims that hold "lantern" fewer times down the list (one length): the lexical arm ranks them in
    path order, ``n00`` first."""
    return {f"areas/inbox/n{i:02d}.html": " ".join(["lantern"] * (count - i) + ["harbour"] * (i + 1)) + "."
            for i in range(count)}


def test_a_fold_moves_no_other_file_in_an_arm_and_lets_none_in_past_the_limit(repo: Repo, db: IndexDB,
                                                                              embedder: FakeEmbedder) -> None:
    """LoCoMo conv-50 (converter shape, bench/curation.py): one fold of two unrelated memories made a question worse.
    The member left the vector arm, the 41st file of that arm moved up to the 40th and entered the fusion (+0.1/100),
    which put it above the question's answer in the 10th place. With every row keeping its slot, a fold changes only
    its keeper's rank."""
    claims = _lantern_claims(45)
    _import(repo, db, embedder, claims)

    def scores() -> dict[str, float]:
        found = search(db, "lantern", embedder=embedder, weights=FTS_ONLY, now=NOW, limit=45)
        return {h.path: h.score for h in found.hits}

    before = scores()
    assert len(before) == 40 and "areas/inbox/n40.html" not in before
    member, keeper = "areas/inbox/n02.html", "areas/inbox/n30.html"
    _fold(repo, db, embedder, claims, member, keeper)
    after = scores()
    assert "areas/inbox/n40.html" not in after  # the 41st did not move up
    assert after[keeper] == before[member]  # the keeper ranks where its member ranked
    assert {p: s for p, s in after.items() if p != keeper} == {
        p: s for p, s in before.items() if p not in (member, keeper)}


def test_an_absorbed_row_tied_on_bm25_keeps_the_slot_its_active_path_held(repo: Repo, db: IndexDB,
                                                                          embedder: FakeEmbedder) -> None:
    """LoCoMo conv-49 (agent shape): five memories tied on bm25 for a question are ordered by path; the folded member's
    ``archive/…`` path sorted before every ``areas/…`` one, so its keeper jumped to the head of the tie and pushed
    the others down. Ties now go by the path the file had while active (``origin_path``)."""
    words = ["amber", "birch", "cedar", "dahlia", "elm"]
    claims = {f"areas/inbox/t{i}.html": f"lantern {w}." for i, w in enumerate(words, start=1)}
    _import(repo, db, embedder, claims)

    def order() -> list[tuple[str, float]]:
        found = search(db, "lantern", embedder=embedder, weights=FTS_ONLY, now=NOW, limit=10)
        return [(h.path, h.score) for h in found.hits]

    before = order()
    assert [p for p, _ in before] == list(claims)  # one tie, in path order
    member, keeper = "areas/inbox/t4.html", "areas/inbox/t5.html"
    _fold(repo, db, embedder, claims, member, keeper)
    assert order() == [(p, s) for p, s in before[:3]] + [(keeper, before[3][1])]
