"""rebuild/update against real git history (docs/index.md §3.6–3.7)."""

from __future__ import annotations

import pytest

from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.errors import EmbedModelMismatch
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB
from tests.index.index_helpers import NOW, Repo, memory_html


def _paths(db: IndexDB) -> list[str]:
    return [r[0] for r in db.query("SELECT path FROM files ORDER BY path")]


def _vectors(db: IndexDB, path: str) -> list[tuple[str, bytes]]:
    return db.query(
        "SELECT e.chunk_id, e.vec FROM embeddings e JOIN chunks c USING (chunk_id) WHERE c.path = ? "
        "ORDER BY c.ordinal", (path,))


def _seed(repo: Repo) -> str:
    repo.write("areas/inbox/a.html", memory_html("A", "Alpha deploys on Mondays."))
    repo.write("projects/web/b.html", memory_html("B", "Beta caches pages for an hour.", tags=("cache",)))
    repo.write("areas/index.html", memory_html("Idx", "Generated listing."))
    repo.write("notes/c.html", memory_html("C", "Outside any bucket."))
    return repo.commit("seed", "areas/inbox/a.html", "projects/web/b.html", "areas/index.html", "notes/c.html")


def test_rebuild_indexes_head_and_records_space(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    head = _seed(repo)
    report = indexer.rebuild(repo.git, db, embedder, now=NOW)
    assert report.rebuilt and report.head_sha == head and report.added == 2 and report.errors == ()
    assert _paths(db) == ["areas/inbox/a.html", "projects/web/b.html"]
    assert report.embeddings_written == 2
    st = indexer.status(repo.git, db)
    assert (st.fresh, st.files, st.chunks, st.embeddings, st.space) == (True, 2, 2, 2, "fake:hash@64")


def test_update_follows_add_modify_rename_delete(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    _seed(repo)
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    before = _vectors(db, "projects/web/b.html")
    repo.write("areas/inbox/d.html", memory_html("D", "Delta retries three times."))
    repo.write("areas/inbox/a.html", memory_html("A", "Alpha deploys on Fridays now."))
    repo.git.move("projects/web/b.html", "resources/cache/b.html")
    head = repo.commit("change", "areas/inbox/d.html", "areas/inbox/a.html")
    report = indexer.update(repo.git, db, embedder, now=NOW)
    assert (report.rebuilt, report.added, report.modified, report.renamed, report.removed) == (False, 1, 1, 1, 0)
    assert report.head_sha == head
    assert _paths(db) == ["areas/inbox/a.html", "areas/inbox/d.html", "resources/cache/b.html"]
    assert _vectors(db, "resources/cache/b.html") == before  # the rename kept the vector rows
    assert db.query("SELECT tag FROM file_tags WHERE path = 'resources/cache/b.html'") == [("cache",)]
    assert report.embeddings_written == 2  # only the new and the modified chunk
    assert "fridays" in db.query("SELECT lower(gist) FROM files WHERE path = 'areas/inbox/a.html'")[0][0]
    (repo.root / "areas/inbox/d.html").unlink()
    repo.commit("drop", "areas/inbox/d.html")
    report = indexer.update(repo.git, db, embedder, now=NOW)
    assert report.removed == 1 and "areas/inbox/d.html" not in _paths(db)
    assert db.query("SELECT count(*) FROM chunks WHERE path = 'areas/inbox/d.html'") == [(0,)]


def test_update_equals_rebuild(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    _seed(repo)
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    repo.write("areas/inbox/a.html", memory_html("A", "Alpha moved.", links=(("relates_to", "/projects/web/b.html"),)))
    repo.git.move("projects/web/b.html", "archive/2026/projects/web/b.html")
    repo.commit("edit", "areas/inbox/a.html")
    indexer.update(repo.git, db, embedder, now=NOW)
    query = "SELECT path, content_hash, archived, workspace FROM files ORDER BY path"
    incremental = (db.query(query), db.query("SELECT * FROM edges ORDER BY src_path"),
                   db.query("SELECT chunk_id, path FROM chunks ORDER BY chunk_id"))
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    assert incremental == (db.query(query), db.query("SELECT * FROM edges ORDER BY src_path"),
                           db.query("SELECT chunk_id, path FROM chunks ORDER BY chunk_id"))
    arch = incremental[0][0]
    assert (arch[0], arch[2], arch[3]) == ("archive/2026/projects/web/b.html", 1, "web")


def test_dirty_uncommitted_edit_wins_and_reverts(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    _seed(repo)
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    repo.write("areas/inbox/a.html", memory_html("A", "Alpha deploys hourly (uncommitted)."))
    repo.write("areas/inbox/new.html", memory_html("N", "Untracked but indexable."))
    (repo.root / "projects/web/b.html").unlink()
    report = indexer.update(repo.git, db, embedder, now=NOW)
    assert (report.modified, report.added, report.removed) == (1, 1, 1)
    assert "hourly" in db.query("SELECT gist FROM files WHERE path = 'areas/inbox/a.html'")[0][0]
    assert _paths(db) == ["areas/inbox/a.html", "areas/inbox/new.html"]
    # discard the edits: the next update restores HEAD's versions
    repo.git.restore_paths(["areas/inbox/a.html", "projects/web/b.html", "areas/inbox/new.html"])
    indexer.update(repo.git, db, embedder, now=NOW)
    assert _paths(db) == ["areas/inbox/a.html", "projects/web/b.html"]
    assert "Mondays" in db.query("SELECT gist FROM files WHERE path = 'areas/inbox/a.html'")[0][0]


def test_malformed_file_is_reported_and_the_rest_indexed(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    _seed(repo)
    repo.write("areas/inbox/bad.html", memory_html("Bad", "x").replace("memhtml-type\" content=\"semantic",
                                                                         "memhtml-type\" content=\"bogus"))
    repo.commit("bad", "areas/inbox/bad.html")
    report = indexer.rebuild(repo.git, db, embedder, now=NOW)
    assert report.skipped == 1 and report.added == 2
    assert report.errors[0][0] == "areas/inbox/bad.html" and report.errors[0][1]
    assert "areas/inbox/bad.html" not in _paths(db)


def test_duplicate_active_content_is_reported_not_fatal(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    _seed(repo)
    repo.write("areas/inbox/copy.html", (repo.root / "areas/inbox/a.html").read_text())
    repo.commit("copy", "areas/inbox/copy.html")
    report = indexer.rebuild(repo.git, db, embedder, now=NOW)
    assert report.added == 2 and [p for p, _ in report.errors] == ["areas/inbox/copy.html"]


def test_space_mismatch_is_refused_and_rebuild_switches(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    _seed(repo)
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    other = FakeEmbedder(dim=32)
    with pytest.raises(EmbedModelMismatch) as err:
        indexer.update(repo.git, db, other, now=NOW)
    assert err.value.hint == "git memhtml index rebuild"
    report = indexer.rebuild(repo.git, db, other, now=NOW)
    assert report.embeddings_written == 2
    assert indexer.status(repo.git, db).space == "fake:hash@32"
    assert db.query("SELECT DISTINCT dim FROM embeddings") == [(32,)]


class _Failing:
    provider, model, dim = "fake", "hash", 64

    @property
    def space(self) -> str:
        return "fake:hash@64"

    def embed(self, texts: object) -> object:
        raise RuntimeError("model down")


def test_embedder_failure_never_fails_the_pass(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    _seed(repo)
    report = indexer.rebuild(repo.git, db, _Failing(), now=NOW)  # type: ignore[arg-type]
    assert report.added == 2 and report.embeddings_written == 0 and "model down" in (report.embed_error or "")
    report = indexer.update(repo.git, db, embedder, now=NOW)  # same space: fills the missing vectors
    assert report.embeddings_written == 2


def test_embedding_off_indexes_lexically(repo: Repo, db: IndexDB) -> None:
    _seed(repo)
    report = indexer.rebuild(repo.git, db, None, now=NOW)
    assert report.added == 2 and report.embeddings_written == 0
    assert indexer.status(repo.git, db).space is None
