"""Regressions found by the incremental == rebuild property test (issue 4 item 6): the index plane is a function
of the tree (HEAD + work tree), never of the order in which files reached it."""

from __future__ import annotations

from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB, open_index
from tests.index.index_helpers import NOW, Repo, memory_html


def _owner(db: IndexDB) -> list[str]:
    return sorted({r[0] for r in db.query("SELECT path FROM chunks")})


def _paths(db: IndexDB) -> list[str]:
    return [r[0] for r in db.query("SELECT path FROM files ORDER BY path")]


def _rebuilt_paths(repo: Repo) -> list[str]:
    fresh = open_index(":memory:", ":memory:")
    try:
        indexer.rebuild(repo.git, fresh, None, now=NOW)
        return _paths(fresh)
    finally:
        fresh.close()


def test_duplicate_live_content_goes_to_the_smallest_path_whatever_came_first(
        repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    repo.write("areas/inbox/b.html", memory_html("B", "Alpha deploys on Mondays."))
    repo.commit("b", "areas/inbox/b.html")
    indexer.update(repo.git, db, embedder, now=NOW)
    repo.write("areas/inbox/a.html", memory_html("A", "Alpha deploys on Mondays."))
    repo.commit("a copies b", "areas/inbox/a.html")
    report = indexer.update(repo.git, db, embedder, now=NOW)
    assert _paths(db) == ["areas/inbox/a.html"] == _rebuilt_paths(repo)
    assert [p for p, _ in report.errors] == ["areas/inbox/b.html"]
    assert db.query("SELECT path FROM index_refusals") == [("areas/inbox/b.html",)]


def test_refused_twin_is_indexed_when_the_holder_goes(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    for path in ("areas/inbox/a.html", "areas/inbox/b.html"):
        repo.write(path, memory_html("T", "Beta caches pages."))
    repo.commit("twins", "areas/inbox/a.html", "areas/inbox/b.html")
    indexer.update(repo.git, db, embedder, now=NOW)
    assert _paths(db) == ["areas/inbox/a.html"]
    repo.git.move("areas/inbox/a.html", "archive/2026/areas/inbox/a.html")
    repo.commit("archive a", "areas/inbox/a.html", "archive/2026/areas/inbox/a.html")
    report = indexer.update(repo.git, db, embedder, now=NOW)
    assert report.errors == ()
    assert _paths(db) == ["archive/2026/areas/inbox/a.html", "areas/inbox/b.html"] == _rebuilt_paths(repo)
    assert _owner(db) == ["areas/inbox/b.html"]  # the shared chunks belong to the live twin


def test_shared_chunks_survive_when_their_owner_is_edited(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    repo.write("areas/inbox/a.html", memory_html("A", "Gamma retries thrice."))
    repo.write("archive/2026/areas/inbox/z.html", memory_html("Z", "Gamma retries thrice."))
    repo.commit("live and archived twin", "areas/inbox/a.html", "archive/2026/areas/inbox/z.html")
    indexer.update(repo.git, db, embedder, now=NOW)
    vectors = db.query("SELECT chunk_id, vec FROM embeddings")
    repo.write("areas/inbox/a.html", memory_html("A", "Gamma retries four times."))
    repo.commit("edit a", "areas/inbox/a.html")
    indexer.update(repo.git, db, embedder, now=NOW)
    twin = db.query("SELECT e.chunk_id, e.vec FROM chunks c JOIN embeddings e USING (chunk_id) "
                    "WHERE c.path = 'archive/2026/areas/inbox/z.html'")
    assert twin == vectors  # re-pointed, not deleted and re-embedded


def test_an_edit_that_no_longer_parses_drops_the_stale_rows(repo: Repo, db: IndexDB) -> None:
    repo.write("areas/inbox/a.html", memory_html("A", "Delta logs to disk."))
    repo.commit("a", "areas/inbox/a.html")
    indexer.update(repo.git, db, None, now=NOW)
    repo.write("areas/inbox/a.html", "<!doctype html><html><head><title></title></head><body>x</body></html>\n")
    repo.commit("break a", "areas/inbox/a.html")
    report = indexer.update(repo.git, db, None, now=NOW)
    assert [p for p, _ in report.errors] == ["areas/inbox/a.html"]
    assert _paths(db) == [] == _rebuilt_paths(repo)


def test_a_renamed_file_linking_to_its_old_path_gains_that_edge(repo: Repo, db: IndexDB) -> None:
    html = memory_html("A", "Alpha deploys.", links=(("relates_to", "/areas/inbox/a.html"),))
    repo.write("areas/inbox/a.html", html)
    repo.commit("a links to itself", "areas/inbox/a.html")
    indexer.update(repo.git, db, None, now=NOW)
    assert db.query("SELECT * FROM edges") == []  # a self-loop is dropped
    repo.git.move("areas/inbox/a.html", "areas/inbox/b.html")
    repo.commit("rename", "areas/inbox/a.html", "areas/inbox/b.html")
    indexer.update(repo.git, db, None, now=NOW)
    assert db.query("SELECT src_path, rel, dst_path FROM edges") == [
        ("areas/inbox/b.html", "relates_to", "areas/inbox/a.html")]
