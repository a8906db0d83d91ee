"""``embed_missing`` finds the chunks without a vector at the cost of what is missing (issue 12: a one-file pass at
100k spent 50-70 ms joining every chunk), and still finds every one of them, old or new."""

from __future__ import annotations

import pytest

from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB
from git_memhtml.index.embedding import embed_missing
from tests.index.index_helpers import NOW, Repo, memory_html


def _missing(db: IndexDB) -> list[str]:
    return [str(r[0]) for r in db.query("SELECT c.chunk_id FROM chunks c LEFT JOIN embeddings e "
                                        "ON e.chunk_id = c.chunk_id WHERE e.chunk_id IS NULL ORDER BY 1")]


def _corpus(repo: Repo, n: int) -> list[str]:
    paths = [f"areas/a{i % 3}/m{i:03d}.html" for i in range(n)]
    for i, path in enumerate(paths):
        repo.write(path, memory_html(f"Fact {i}", f"Fact number {i} is about topic {i % 7}."))
    repo.commit("corpus", *paths)
    return paths


CASES = [
    ("nothing missing", []),
    ("the newest chunk", [-1]),
    ("the oldest chunk", [0]),
    ("old and new", [0, 5, -1]),
    ("every chunk", list(range(12))),
]
"""``(case, indexes into the chunks by insertion order whose vectors are deleted before the call)``."""


@pytest.mark.parametrize("drop", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_every_chunk_without_a_vector_is_embedded(repo: Repo, db: IndexDB, embedder: FakeEmbedder,
                                                  drop: list[int]) -> None:
    _corpus(repo, 12)
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    chunks = [str(r[0]) for r in db.query("SELECT chunk_id FROM chunks ORDER BY rowid")]
    assert len(chunks) >= 12 and _missing(db) == []
    gone = sorted({chunks[i] for i in drop})
    before = {str(r[0]): bytes(r[1]) for r in db.query("SELECT chunk_id, vec FROM embeddings")}
    with db.atomic():
        db.executemany("DELETE FROM embeddings WHERE chunk_id = ?", [(c,) for c in gone])
    assert _missing(db) == gone
    written, error = embed_missing(db, embedder, now=NOW)
    assert (written, error) == (len(gone), None)
    assert _missing(db) == []
    after = {str(r[0]): bytes(r[1]) for r in db.query("SELECT chunk_id, vec FROM embeddings")}
    assert after == before  # the same vectors as the rebuild wrote


def test_a_one_file_pass_embeds_its_new_chunk_and_nothing_else(repo: Repo, db: IndexDB,
                                                                embedder: FakeEmbedder) -> None:
    paths = _corpus(repo, 12)
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    repo.write(paths[4], memory_html("Edited", "An edited fact about zebras."))
    repo.commit("edit one", paths[4])
    report = indexer.update(repo.git, db, embedder, now=NOW, worktree=False)
    assert report.embeddings_written >= 1 and _missing(db) == []
    assert embed_missing(db, embedder, now=NOW) == (0, None)


def test_without_an_embedder_nothing_is_counted(db: IndexDB) -> None:
    assert embed_missing(db, None, now=NOW) == (0, None)
    assert embed_missing(db, FakeEmbedder(dim=8), now=NOW) == (0, None)  # an empty index
