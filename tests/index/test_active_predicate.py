"""One active-memory predicate (issue 9 item 3): every query that filters active memories returns the same set.

The corpus holds active memories of three types, a live task, an archived file a live one supersedes and a plain
archived file. "Active" is the live non-task set; "live" adds the task. Each row below is one named query function
that filters by one of the two predicates, reduced to the set of paths it returns.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from git_memhtml.index import indexer
from git_memhtml.index.active import ACTIVE_MEMORY, LIVE_FILE, active_memory, live_file
from git_memhtml.index.corpus import active_corpus, active_entities
from git_memhtml.index.db import IndexDB
from git_memhtml.index.memories import active_paths_with_hashes, list_page, live_reinforcements
from git_memhtml.index.retrieval_sql import Scope, scope_sql
from git_memhtml.index.stats import corpus_counts, plan_counts
from tests.index.index_helpers import NOW, Repo, memory_html

ACTIVE = {"areas/inbox/a.html", "projects/web/b.html", "areas/inbox/new.html", "resources/notes/p.html"}
TASK = "projects/web/tasks/t.html"
LIVE = ACTIVE | {TASK}
ARCHIVED = {"archive/2025/areas/inbox/old.html", "archive/2025/areas/inbox/gone.html"}

FILES = {
    "areas/inbox/a.html": memory_html("A", "Alpha deploys on Mondays.", entities=("project:alpha",)),
    "projects/web/b.html": memory_html("B", "Alpha caches pages.", memory_type="procedural",
                                       entities=("project:alpha",)),
    "resources/notes/p.html": memory_html("P", "Prefer short answers.", memory_type="user_preference",
                                          entities=("project:alpha",)),
    TASK: memory_html("T", "Alpha task to fix.", memory_type="task", entities=("project:alpha",)),
    "archive/2025/areas/inbox/old.html": memory_html("Old", "Alpha used to deploy on Sundays.",
                                                     entities=("project:alpha",)),
    "archive/2025/areas/inbox/gone.html": memory_html("Gone", "Alpha had a pager.", entities=("project:alpha",)),
    "areas/inbox/new.html": memory_html("New", "Alpha deploys on Mondays since June.", entities=("project:alpha",),
                                        links=(("supersedes", "/archive/2025/areas/inbox/old.html"),)),
}


@pytest.fixture
def corpus(repo: Repo, db: IndexDB) -> IndexDB:
    for path, html in FILES.items():
        repo.write(path, html)
    repo.commit("corpus", *FILES)
    assert indexer.rebuild(repo.git, db, None, now=NOW).errors == ()
    return db


def _by_hash(db: IndexDB) -> set[str]:
    found: set[str] = set()
    for (digest,) in db.query("SELECT content_hash FROM files"):
        found |= set(active_paths_with_hashes(db, [str(digest)]).get(str(digest), ()))
    return found


def _scope(db: IndexDB) -> set[str]:
    where, params = scope_sql(Scope())
    return {str(p) for (p,) in db.query(f"SELECT f.path FROM files f WHERE {where}", params)}


ACTIVE_READS: list[tuple[str, Callable[[IndexDB], set[str]]]] = [
    ("fragment", lambda db: {str(p) for (p,) in db.query(f"SELECT path FROM files WHERE {ACTIVE_MEMORY}")}),
    ("aliased fragment", lambda db: {str(p) for (p,) in db.query(
        f"SELECT f.path FROM files f WHERE {active_memory('f')}")}),
    ("corpus.active_corpus", lambda db: {r.path for r in active_corpus(db)}),
    ("corpus.active_entities", lambda db: {p for e in active_entities(db) for p in e.paths}),
    ("memories.active_paths_with_hashes", _by_hash),
    ("retrieval_sql.scope_sql default scope", _scope),
]

LIVE_READS: list[tuple[str, Callable[[IndexDB], set[str]]]] = [
    ("fragment", lambda db: {str(p) for (p,) in db.query(f"SELECT path FROM files WHERE {LIVE_FILE}")}),
    ("memories.live_reinforcements", lambda db: {r.path for r in live_reinforcements(db)}),
    ("memories.list_page", lambda db: {r.path for r in list_page(
        db, memory_type=None, workspace=None, para=None, tag=None, entity_key=None, include_archived=False,
        after=None, limit=100)}),
]


@pytest.mark.parametrize(("name", "read"), ACTIVE_READS, ids=[name for name, _ in ACTIVE_READS])
def test_every_active_read_returns_the_active_set(corpus: IndexDB, name: str,
                                                  read: Callable[[IndexDB], set[str]]) -> None:
    assert read(corpus) == ACTIVE


@pytest.mark.parametrize(("name", "read"), LIVE_READS, ids=[name for name, _ in LIVE_READS])
def test_every_live_read_returns_the_live_set(corpus: IndexDB, name: str,
                                              read: Callable[[IndexDB], set[str]]) -> None:
    assert read(corpus) == LIVE


def test_counts_agree_with_the_sets(corpus: IndexDB) -> None:
    plan = plan_counts(corpus, since="")
    assert (plan.active, plan.memories_since) == (len(ACTIVE), len(ACTIVE))
    assert plan.inbox == len({p for p in ACTIVE if p.startswith("areas/inbox/")})
    snapshot = corpus_counts(corpus, space=None)
    assert (snapshot.live, snapshot.archived) == (len(LIVE), len(ARCHIVED))


def test_the_fragment_is_the_partial_unique_index_predicate(db: IndexDB) -> None:
    (sql,) = db.query_one("SELECT sql FROM sqlite_schema WHERE name = 'files_active_content'") or ("",)
    assert str(sql).endswith(f"WHERE {ACTIVE_MEMORY}")
    assert f"{live_file()} AND memory_type <> 'task'" == ACTIVE_MEMORY
    assert active_memory("f") == "f.archived = 0 AND f.memory_type <> 'task'"


def test_extra_excluded_types_narrow_the_active_set_and_tasks_stay_out(corpus: IndexDB) -> None:
    rows = active_corpus(corpus, exclude_types=("procedural", "task", "procedural"))
    assert {r.path for r in rows} == ACTIVE - {"projects/web/b.html"}
    assert {p for e in active_entities(corpus, exclude_types=()) for p in e.paths} == ACTIVE
