"""Deep relationship-mining: the grouping band [0.72, 0.85) as derived ``laterally_related`` rows, mined on its own,
read by compress's grouping only (docs/deep-sleep.md, docs/phases.md §1.5)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from git_memhtml.domain.neighbors import top_neighbor_pairs
from git_memhtml.index.neighbors import neighbors
from git_memhtml.index.retrieval import search
from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.sleep.phases import relationship_mining
from git_memhtml.sleep.phases.scoring import retention_pass
from tests.sleep.deep_corpus import band_claims, doc, loose_claims
from tests.sleep.sleep_corpus_helpers import AT, EMBEDDER, make_env, make_repo, tree_files

BAND = [f"areas/inbox/band-{i}.html" for i in range(3)]


def corpus() -> dict[str, str]:
    files = {p: doc(c, title=f"band {i}") for i, (p, c) in enumerate(zip(BAND, band_claims(3), strict=True))}
    files.update({f"areas/inbox/loose-{i}.html": doc(c, title=f"loose {i}") for i, c in enumerate(loose_claims(5, 3))})
    return files


def derived(env: PhaseEnv, rel: str) -> list[tuple[str, str, float]]:
    return [(str(a), str(b), float(s)) for a, b, s in env.db.query(
        "SELECT src_path, dst_path, strength FROM edges WHERE derived = 1 AND rel = ? ORDER BY src_path, dst_path",
        (rel,))]


def test_deep_mines_the_band_as_laterally_related_rows_and_a_plain_night_drops_them(tmp_path: Path) -> None:
    env = replace(make_env(make_repo(tmp_path, corpus())), deep=True)
    before = tree_files(env.repo)
    outcome = relationship_mining.run(env)
    assert outcome.counts.wire() == {"candidates": 0, "mined": 0, "grouped": 3}
    band = derived(env, "laterally_related")
    assert [(a, b) for a, b, _ in band] == [(BAND[0], BAND[1]), (BAND[0], BAND[2]), (BAND[1], BAND[2])]
    assert all(0.72 <= s < 0.85 for _, _, s in band) and derived(env, "relates_to") == []
    assert env.db.query("SELECT DISTINCT edge_class, provenance, sleep_run, created_at FROM edges WHERE derived = 1"
                        ) == [("memory", "sleep", env.run_id, AT)]
    assert tree_files(env.repo) == before and env.repo.commit("nothing") is None
    plain = relationship_mining.run(replace(env, deep=False))
    assert plain.counts.wire() == {"candidates": 0, "mined": 0}  # no grouped key without --deep
    assert derived(env, "laterally_related") == []


def test_a_deep_dry_run_counts_the_band_and_writes_no_row(tmp_path: Path) -> None:
    env = replace(make_env(make_repo(tmp_path, corpus()), dry_run=True), deep=True)
    assert relationship_mining.run(env).counts.wire()["grouped"] == 3
    assert env.db.query("SELECT count(*) FROM edges WHERE derived = 1") == [(0,)]


def test_the_band_is_mined_on_its_own_and_not_crowded_out_by_stronger_pairs() -> None:
    """A node with five neighbours above 0.85 still keeps its band partner: the band has its own top 5."""
    eye = np.eye(12)
    rows = [eye[0]]
    rows += [0.95 * eye[0] + np.sqrt(1 - 0.95**2) * eye[2 + i] for i in range(5)]  # cosine 0.95 to m0
    partner = 0.8 * eye[0] + 0.6 * eye[1]  # cosine 0.80 to m0: in the band
    rows.append(partner)
    rows += [0.95 * partner + np.sqrt(1 - 0.95**2) * eye[7 + i] for i in range(5)]  # m6's own five strong ones
    vectors = np.stack(rows)
    paths = [f"m{i:02d}" for i in range(len(rows))]
    one_scan = [p for p in top_neighbor_pairs(paths, vectors, floor=0.72, k=5, limit=2000) if p[2] < 0.85]
    assert ("m00", "m06") not in {(a, b) for a, b, _ in one_scan}  # what a single scan would have lost
    own = top_neighbor_pairs(paths, vectors, floor=0.72, k=5, limit=2000, ceiling=0.85)
    assert ("m00", "m06") in {(a, b) for a, b, _ in own} and all(0.72 <= s < 0.85 for _, _, s in own)


def test_band_edges_change_no_search_no_neighbors_and_no_score(tmp_path: Path) -> None:
    """The band is for grouping only: every read a user or a scorer makes is the same with and without it."""
    env = replace(make_env(make_repo(tmp_path, corpus())), deep=True)

    def reads() -> tuple[object, ...]:
        hits = [(h.path, h.score) for h in search(env.db, "band", embedder=EMBEDDER, now=AT, limit=10).hits]
        walks = [neighbors(env.db, p, depth=2) for p in BAND]
        scores = [(s.row.path, s.score, s.band, s.community) for s in retention_pass(env.db, at=AT)]
        return hits, walks, scores

    without = reads()
    relationship_mining.run(env)
    assert len(derived(env, "laterally_related")) == 3
    assert reads() == without
    assert all(walk.nodes == () for walk in without[1])  # type: ignore[attr-defined]
