"""Shared sleep reads: corpus order, task exclusion, first-chunk vectors, entity counts."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from git_memhtml.index.corpus import active_corpus, active_entities, first_chunk_vectors
from git_memhtml.index.watermark import vector_space
from tests.sleep.sleep_corpus_helpers import EMBEDDER, make_env, make_repo, memory


def _files() -> dict[str, str]:
    return {
        "areas/inbox/b.html": memory("Beta fact about deploys.", created="2026-01-02T00:00:00Z",
                                     entities=["person:Priya", "service:checkout-api"]),
        "areas/inbox/a.html": memory("Alpha fact about caching.", created="2026-01-02T00:00:00Z",
                                     entities=["person:Priya"]),
        "areas/inbox/z.html": memory("Zeta is the oldest fact.", created="2026-01-01T00:00:00Z"),
        "areas/inbox/tasks/t.html": memory("Do the thing.", memory_type="task", entities=["person:Priya"]),
    }


def test_active_corpus_is_oldest_first_with_path_tiebreak_and_no_tasks(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, _files()))
    paths = [row.path for row in active_corpus(env.db)]
    assert paths == ["areas/inbox/z.html", "areas/inbox/a.html", "areas/inbox/b.html"]
    assert active_corpus(env.db, exclude_types=("semantic",)) == []


def test_first_chunk_vectors_rows_follow_paths_and_missing_is_zero(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, _files()))
    space = vector_space(env.db)
    assert space == EMBEDDER.space
    matrix = first_chunk_vectors(env.db, ["areas/inbox/a.html", "areas/inbox/nope.html"], space)
    assert matrix.shape == (2, EMBEDDER.dim) and matrix.dtype == np.float32
    assert np.isclose(np.linalg.norm(matrix[0]), 1.0)
    assert not matrix[1].any()


def test_active_entities_counts_claimants_excluding_tasks(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, _files()))
    entities = {(e.entity_type, e.entity_name): e for e in active_entities(env.db)}
    priya = entities[("person", "Priya")]
    assert priya.paths == ("areas/inbox/a.html", "areas/inbox/b.html")
    assert priya.count == 2
    assert list(entities) == sorted(entities)
