"""The named reads of the index plane: files (memories), edges, the watermark and the plan/preflight counts."""

from __future__ import annotations

from typing import Any

import pytest

from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB
from git_memhtml.index.edges import EdgeKey, MinedEdge, StoredEdge, authored_edges, memory_edges, replace_mined_edges
from git_memhtml.index.memories import file_exists, indexed_blobs, list_page, listing_rows
from git_memhtml.index.stats import corpus_counts, plan_counts
from git_memhtml.index.watermark import IndexState, index_state, indexed_head, overlay_rows, vector_space
from tests.index.index_helpers import NOW, Repo, memory_html

PAST = "2020-01-01T00:00:00Z"
FILES = {
    "areas/inbox/a.html": memory_html("A", "Alpha deploys on Mondays.", tags=("ops",), entities=("project:alpha",),
                                      links=(("supports", "/projects/web/b.html"), ("relates_to", "/gone.html"))),
    "projects/web/b.html": memory_html("B", "Alpha caches pages.", memory_type="procedural", tags=("cache",),
                                       updated="2026-01-05T00:00:00Z", extra_metas=(("valid-until", PAST),)),
    "areas/arcs/arc.html": memory_html("Arc", "The alpha arc spans the quarter.", memory_type="arc",
                                       extra_metas=(("valid-until", PAST),)),
    "projects/web/tasks/t.html": memory_html("T", "Alpha task to fix.", memory_type="task", tags=("ops",)),
    "archive/2025/areas/inbox/old.html": memory_html("Old", "Alpha used to deploy on Sundays.", tags=("ops",)),
}


@pytest.fixture
def corpus(repo: Repo, db: IndexDB) -> IndexDB:
    for path, html in FILES.items():
        repo.write(path, html)
    repo.commit("corpus", *FILES)
    assert indexer.rebuild(repo.git, db, None, now=NOW).errors == ()
    return db


def _page(db: IndexDB, **kw: Any) -> list[str]:
    args: dict[str, Any] = {"memory_type": None, "workspace": None, "para": None, "tag": None,
                               "entity_key": None, "include_archived": False, "after": None, "limit": 50}
    args.update(kw)
    return [r.path for r in list_page(db, **args)]


def test_file_reads(corpus: IndexDB) -> None:
    assert file_exists(corpus, "archive/2025/areas/inbox/old.html") and not file_exists(corpus, "nope.html")
    blobs = indexed_blobs(corpus)
    assert set(blobs) == set(FILES) and all(len(sha) == 40 for sha in blobs.values())
    rows = {r.path: r for r in listing_rows(corpus)}
    assert set(rows) == set(FILES)
    b = rows["projects/web/b.html"]
    assert (b.blob_sha, b.title, b.memory_type, b.updated_at, b.gist) == (
        blobs[b.path], "B", "procedural", "2026-01-05T00:00:00Z", "Alpha caches pages.")


def test_list_page_filters_and_keyset(corpus: IndexDB) -> None:
    live = sorted(set(FILES) - {"archive/2025/areas/inbox/old.html"})
    assert _page(corpus) == live
    assert _page(corpus, include_archived=True) == sorted(FILES)
    assert _page(corpus, tag="ops") == ["areas/inbox/a.html", "projects/web/tasks/t.html"]
    assert _page(corpus, tag="ops", include_archived=True, para="archive") == ["archive/2025/areas/inbox/old.html"]
    assert _page(corpus, memory_type="task") == ["projects/web/tasks/t.html"]
    assert _page(corpus, entity_key="project:alpha") == ["areas/inbox/a.html"]
    assert _page(corpus, limit=2) == live[:2]
    assert _page(corpus, after=live[1], limit=2) == live[2:4]
    task = list_page(corpus, memory_type="task", workspace=None, para=None, tag=None, entity_key=None,
                     include_archived=False, after=None, limit=1)[0]
    assert (task.archived, task.task_status, task.title) == (False, "todo", "T")


def test_edges(corpus: IndexDB) -> None:
    authored = [EdgeKey("areas/inbox/a.html", "relates_to", "gone.html"),
                EdgeKey("areas/inbox/a.html", "supports", "projects/web/b.html")]
    assert authored_edges(corpus) == authored
    mined = [MinedEdge("areas/inbox/a.html", "projects/web/b.html", 0.9),
             MinedEdge("areas/arcs/arc.html", "areas/inbox/a.html", 0.95)]
    near = [MinedEdge("areas/arcs/arc.html", "projects/web/b.html", 0.8)]
    replace_mined_edges(corpus, [("relates_to", mined), ("laterally_related", near)], run_id="r1", at=NOW)
    stored = memory_edges(corpus, skip_derived_rel="laterally_related")
    assert stored == [
        StoredEdge("areas/arcs/arc.html", "relates_to", "areas/inbox/a.html", 1, 0.95),
        StoredEdge("areas/inbox/a.html", "relates_to", "gone.html", 0, 1.0),
        StoredEdge("areas/inbox/a.html", "relates_to", "projects/web/b.html", 1, 0.9),
        StoredEdge("areas/inbox/a.html", "supports", "projects/web/b.html", 0, 1.0),
    ]
    assert len(memory_edges(corpus, skip_derived_rel="none")) == 5
    replace_mined_edges(corpus, [("relates_to", mined[:1]), ("laterally_related", [])], run_id="r2", at=NOW)
    assert [(e.src, e.derived) for e in memory_edges(corpus, skip_derived_rel="x") if e.derived] == [
        ("areas/inbox/a.html", 1)]
    clash = [MinedEdge("areas/inbox/a.html", "gone.html", 0.99)]  # the authored edge of that key wins
    replace_mined_edges(corpus, [("relates_to", clash)], run_id="r3", at=NOW)
    assert authored_edges(corpus) == authored


def test_watermark(repo: Repo, db: IndexDB) -> None:
    assert index_state(db) is None and indexed_head(db) is None and vector_space(db) is None
    repo.write("areas/inbox/a.html", FILES["areas/inbox/a.html"])
    sha = repo.commit("one", "areas/inbox/a.html")
    embedder = FakeEmbedder(dim=8)
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    assert index_state(db) == IndexState(sha, embedder.space)
    assert indexed_head(db) == sha and vector_space(db) == embedder.space
    assert overlay_rows(db) == 0
    repo.write("areas/inbox/dirty.html", memory_html("D", "Dirty, not committed."))
    indexer.update(repo.git, db, embedder, now=NOW)
    assert overlay_rows(db) == 1


def test_plan_and_preflight_counts(corpus: IndexDB) -> None:
    plan = plan_counts(corpus, since="2026-01-03T00:00:00Z")
    assert plan.memories_since == 1  # b only: a and the arc were updated on 2026-01-02
    assert plan.active == 3 and plan.inbox == 1
    assert plan.ttl_passed == 1  # b; the arc is never TTL-expired
    assert plan.dangling_authored_links == 1  # a → gone.html
    assert plan.unembedded_chunks > 0 and plan.pending_entity_merges == 0
    snapshot = corpus_counts(corpus, space=None)
    assert (snapshot.live, snapshot.archived, snapshot.embeddings) == (4, 1, 0)
    assert snapshot.chunks == plan.unembedded_chunks and snapshot.edges == 2 and snapshot.derived_edges == 0
