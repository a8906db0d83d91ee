"""The query-independent arms (recency, salience) rank a tie as a tie (docs/retrieval.md §4.2 "Ties").

An import writes every file at one instant and nothing has been accessed yet, so both arms see one value for every
file. Ranking those files by path gave ``areas/…`` and ``projects/…`` a bonus over ``resources/…`` that no fact
deserved, enough to beat the better lexical match (the demo's showcase search put the feature-flag memory above
the timeout it was asked for). Tied files share a rank, and a tie the arm limit cuts through is left out whole.
"""

from __future__ import annotations

import pytest

from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB
from git_memhtml.index.ranking import ranked_paths
from git_memhtml.index.retrieval import ArmWeights, Scope, search
from git_memhtml.index.retrieval_sql import arm_ranks_sql
from tests.index.index_helpers import NOW, Repo, memory_html

IMPORT = "2026-01-02T00:00:00Z"
WEIGHTS = ArmWeights(fts=1.0, vector=0.0, recency=0.05, salience=0.05)
"""The tie-breaking weights of the default embedder (docs/retrieval.md §4.3), lexical arm only."""


def _index(repo: Repo, db: IndexDB, files: dict[str, str]) -> IndexDB:
    for path, html in files.items():
        repo.write(path, html)
    repo.commit("corpus", *files)
    report = indexer.rebuild(repo.git, db, None, now=NOW)
    assert report.errors == ()
    return db


def _ranks(db: IndexDB, arm: str) -> list[tuple[str, int]]:
    sql, params = arm_ranks_sql(arm, Scope(), now=NOW)  # type: ignore[arg-type]
    return [(str(p), int(r)) for p, r in db.query(sql, params)]


def test_an_import_gives_the_fixed_arms_nothing_to_rank(repo: Repo, db: IndexDB) -> None:
    files = {f"areas/inbox/a{i:02d}.html": memory_html(f"Note {i}", f"Unrelated note number {i}.", updated=IMPORT)
             for i in range(45)}
    files["resources/services/timeout.html"] = memory_html(
        "Checkout to payments timeout", "The checkout request timeout for calls to payments is 30 seconds.",
        updated=IMPORT)
    files["areas/inbox/flag.html"] = memory_html(
        "Checkout flag name", "The checkout feature flag is named checkout_single_page.", updated=IMPORT)
    _index(repo, db, files)
    assert _ranks(db, "recency") == [] and _ranks(db, "salience") == []
    for hits in (search(db, "checkout timeout", now=NOW, weights=WEIGHTS).hits,):
        assert [h.path for h in hits][:2] == ["resources/services/timeout.html", "areas/inbox/flag.html"]
    assert ranked_paths(db, "checkout timeout", qvec=None, space=None, scope=Scope(), limit=2, weights=WEIGHTS,
                        now=NOW) == ["resources/services/timeout.html", "areas/inbox/flag.html"]


def test_tied_files_share_a_rank_and_a_tie_cut_by_the_limit_is_left_out(repo: Repo, db: IndexDB) -> None:
    files = {}
    for i in range(3):  # the newest instant, three files
        files[f"resources/x/new{i}.html"] = memory_html(f"New {i}", f"Newest note {i}.", updated="2026-03-01T00:00:00Z")
    for i in range(34):  # one instant each
        files[f"areas/y/mid{i:02d}.html"] = memory_html(f"Mid {i}", f"Middle note {i}.",
                                                        updated=f"2026-02-{1 + i % 27:02d}T{i:02d}:00:00Z")
    for i in range(10):  # one older instant, cut through by the limit of 40
        files[f"areas/z/old{i}.html"] = memory_html(f"Old {i}", f"Old note {i}.", updated="2026-01-01T00:00:00Z")
    _index(repo, db, files)
    ranks = _ranks(db, "recency")
    assert ranks[:3] == [(f"resources/x/new{i}.html", 1) for i in range(3)]
    assert ranks[3][1] == 4 and len(ranks) == 37
    assert not any(path.startswith("areas/z/") for path, _ in ranks)


@pytest.mark.parametrize("arm", ["recency", "salience"])
def test_a_small_scope_keeps_every_tie(repo: Repo, db: IndexDB, arm: str) -> None:
    files = {f"areas/inbox/n{i}.html": memory_html(f"N {i}", f"Note {i}.", updated=IMPORT) for i in range(5)}
    _index(repo, db, files)
    assert _ranks(db, arm) == [(path, 1) for path in sorted(files)]
