"""The resident vector arm equals the SQL arm: same paths, same order, same fused scores (docs/retrieval.md §4.11).

Table-driven over real corpora (the demo corpus, and a generated one with shared and near-shared chunk texts,
archived files, tasks, texts the fake embedder maps to a zero vector, multi-chunk files) × scopes × many queries:
``search(resident=)`` against ``search()``, and ``ResidentVectors.ranked`` against the rows of ``vector_arm_sql``.
Then the float32 corner: sqlite-vec's distance is repeated bit for bit, a tie in float32 that float64 would break
goes to the smaller path as in SQL, and rows with tiny, huge, NaN or zero components rank (or not) as SQL ranks them.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from git_memhtml.cli.common import init_memory
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.errors import EmbedModelMismatch, IndexStale, StorageError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index import indexer
from git_memhtml.index.access import reinforce
from git_memhtml.index.cosine import sqlite_vec_cosine, squared_norms_f32
from git_memhtml.index.db import IndexDB, open_index
from git_memhtml.index.resident import (
    FIXED_ARMS,
    ResidentVectors,
    eligible_paths,
    fixed_arm_ranks,
)
from git_memhtml.index.retrieval import search
from git_memhtml.index.retrieval_sql import (
    ARM_LIMIT,
    ArmWeights,
    Scope,
    arm_ranks_sql,
    fusion_sql,
    scope_sql,
    vector_arm_sql,
)
from git_memhtml.store.ops import parse_op_stream
from git_memhtml.store.writer import apply_batch
from tests.index.index_helpers import NOW, Repo, memory_html

DEMO = Path(__file__).resolve().parents[2] / "git_memhtml" / "resources" / "demo" / "memories.jsonl"
WORDS = ("alpha", "beta", "gamma", "delta", "cache", "deploy", "ledger", "queue", "retry", "shard", "token", "vault")


@dataclass
class Corpus:
    db: IndexDB
    embedder: FakeEmbedder
    queries: list[str]
    resident: ResidentVectors


def _queries(texts: list[str], rng: random.Random) -> list[str]:
    """Claims of the corpus (each query finds its own memory), word mixes, and a query without a known token."""
    mixes = [" ".join(rng.sample(WORDS, rng.randint(1, 4))) for _ in range(25)]
    return texts[:25] + mixes + ["déjà vu ωμέγα", "ALPHA alpha alpha"]


def _demo(root: Path, dim: int) -> Corpus:
    init_memory(root)
    repo = GitRepo.discover(root)
    apply_batch(repo, parse_op_stream(DEMO.read_text(encoding="utf-8")), now="2026-01-10T00:00:00Z",
                dedupe=lambda _h: None)
    embedder = FakeEmbedder(dim=dim)
    db = open_index(":memory:", ":memory:")
    indexer.rebuild(repo, db, embedder, now=NOW)
    claims = [str(r[0]) for r in db.query("SELECT title FROM files ORDER BY path")]
    return Corpus(db, embedder, _queries(claims, random.Random(dim)), ResidentVectors.load(db, embedder.space))


def _generated(root: Path, dim: int) -> Corpus:
    """60 memories: near-duplicate pairs (chunk texts that differ by a token the embedder ignores: equal vectors),
    archived ones, tasks, two whose text holds no ASCII token (a zero vector), long ones cut into several chunks."""
    rng = random.Random(11)
    repo = Repo(root)
    paths: list[str] = []
    claims: list[str] = []
    for i in range(60):
        words = rng.sample(WORDS, 3)
        claim = f"{words[0].capitalize()} {words[1]} {words[2]} {i % 7}."
        kind = i % 10
        bucket = ("areas/inbox", "projects/web", "resources/topic")[i % 3]
        path = f"{bucket}/m{i:03d}.html"
        body = ""
        memory_type = "semantic"
        if kind == 1:  # near-duplicate of the previous one: one more token the fake embedder cannot read
            claim = claims[-1] + " Ω"
        elif kind == 2:
            path = f"archive/2025/{bucket}/m{i:03d}.html"
        elif kind == 3:
            memory_type = "task"
        elif kind == 4 and i < 20:
            claim = f"Ωμέγα λάμδα {'σ' * (i + 1)}."  # no [a-z0-9] token: the fake embedder's zero vector
        elif kind == 5:
            body = " ".join(f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS)} {n}." for n in range(260))
        html = memory_html(
            "Ωμέγα" if kind == 4 and i < 20 else f"Memory {i}", claim, body=body, memory_type=memory_type,
            tags=(words[0],), entities=(f"service:{words[1]}",), updated=f"2026-01-{1 + i % 28:02d}T00:00:00Z",
        )
        repo.write(path, html)
        paths.append(path)
        claims.append(claim)
    repo.commit("generated corpus", *paths)
    embedder = FakeEmbedder(dim=dim)
    db = open_index(":memory:", ":memory:")
    report = indexer.rebuild(repo.git, db, embedder, now=NOW)
    assert report.errors == ()
    multi = db.query_one("SELECT count(*) FROM (SELECT path FROM chunks GROUP BY path HAVING count(*) > 1)")
    assert multi is not None and multi[0] >= 3
    zero = db.query_one("SELECT count(*) FROM embeddings WHERE vec = zeroblob(length(vec))")
    assert zero is not None and zero[0] >= 2
    for k, path in enumerate(paths[::4]):  # access counts and outcomes, so the salience arm is not recency again
        for n in range(1 + k % 3):
            reinforce(db, [path], signal=("positive", "negative", "neutral")[k % 3],
                      now=f"2026-01-{10 + n:02d}T00:00:00Z")
    return Corpus(db, embedder, _queries(claims, random.Random(dim)), ResidentVectors.load(db, embedder.space))


CORPORA = {"demo@64": (_demo, 64), "generated@8": (_generated, 8), "generated@64": (_generated, 64)}
SCOPES = {
    "default": Scope(),
    "include_archived": Scope(include_archived=True),
    "type-task": Scope(memory_types=("task",)),
    "type-semantic-episodic": Scope(memory_types=("semantic", "episodic"), include_archived=True),
    "tags": Scope(tags=("alpha", "cache", "services")),
    "as-of": Scope(as_of="2026-01-05T00:00:00Z"),
}
OWN_SCOPES = {
    "demo@64": {"entity": Scope(entity="service:checkout-api"), "workspace": Scope(workspace="checkout-v2")},
    "generated@8": {"entity": Scope(entity="service:alpha"), "workspace": Scope(workspace="web")},
    "generated@64": {"entity": Scope(entity="SERVICE:Alpha"), "workspace": Scope(workspace="web")},
}
"""Scopes whose value names something of one corpus (the entity key is case-insensitive: ``SERVICE:Alpha``)."""
ROWS = [(corpus, scope) for corpus in CORPORA for scope in [*SCOPES, *OWN_SCOPES[corpus]]]
"""One row per (corpus, scope): a new corpus or scope joins by adding a key."""


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Corpus]]:
    built = {name: build(tmp_path_factory.mktemp(name.replace("@", "-")), dim)
             for name, (build, dim) in CORPORA.items()}
    yield built
    for corpus in built.values():
        corpus.db.close()


def _sql_arm(db: IndexDB, qvec: bytes, space: str, scope: Scope) -> list[str]:
    scope_filter, params = scope_sql(scope)
    rows = db.query(vector_arm_sql(scope_filter), {**params, "qvec": qvec, "space": space, "arm_limit": ARM_LIMIT})
    return [str(r[0]) for r in rows]


@pytest.mark.parametrize(("corpus_name", "scope_name"), ROWS)
def test_resident_search_equals_sql_search(corpora: dict[str, Corpus], corpus_name: str, scope_name: str) -> None:
    corpus, scope = corpora[corpus_name], {**SCOPES, **OWN_SCOPES[corpus_name]}[scope_name]
    ranked_any = False
    for query in corpus.queries:
        qvec = np.asarray(corpus.embedder.embed([query])[0], dtype="<f4").tobytes()
        sql_arm = _sql_arm(corpus.db, qvec, corpus.embedder.space, scope)
        assert corpus.resident.ranked(qvec, eligible_paths(corpus.db, scope)) == sql_arm, query
        ranked_any = ranked_any or bool(sql_arm)
        for limit, mmr_lambda in ((10, None), (40, None), (10, 0.9)):
            plain = search(corpus.db, query, scope=scope, embedder=corpus.embedder, now=NOW, limit=limit,
                           mmr_lambda=mmr_lambda, use_matrix=False)
            fast = search(corpus.db, query, scope=scope, embedder=corpus.embedder, now=NOW, limit=limit,
                          mmr_lambda=mmr_lambda, resident=corpus.resident)
            assert fast.arms == plain.arms and fast.degraded == plain.degraded
            assert [h.path for h in fast.hits] == [h.path for h in plain.hits], query
            assert [h.score for h in fast.hits] == pytest.approx([h.score for h in plain.hits], abs=1e-9, rel=0)
            assert fast.hits == plain.hits
            assert (fast.archived_matches, fast.archived) == (plain.archived_matches, plain.archived)
    assert ranked_any, "this row never exercises the vector arm"


def test_ties_of_shared_chunk_texts_break_by_path(corpora: dict[str, Corpus]) -> None:
    """Near-duplicates share a chunk text, so their distances are equal: both arms list them smaller path first."""
    corpus = corpora["generated@64"]
    seen_tie = False
    for query in corpus.queries:
        qvec = np.asarray(corpus.embedder.embed([query])[0], dtype="<f4").tobytes()
        scope_filter, params = scope_sql(Scope())
        rows = corpus.db.query(
            "SELECT f.path, min(vec_distance_cosine(e.vec, :qvec)) AS d FROM files f JOIN chunks c ON c.path = "
            f"f.path JOIN embeddings e ON e.chunk_id = c.chunk_id WHERE e.model = :space AND {scope_filter} "
            "GROUP BY f.path HAVING d IS NOT NULL ORDER BY d, f.path LIMIT 40",
            {**params, "qvec": qvec, "space": corpus.embedder.space},
        )
        distances = [r[1] for r in rows]
        seen_tie = seen_tie or len(set(distances)) < len(distances)
        assert corpus.resident.ranked(qvec, eligible_paths(corpus.db, Scope())) == [r[0] for r in rows]
    assert seen_tie


# ---- the float32 arithmetic of sqlite-vec --------------------------------------------------------------------

def _sql_distance(db: IndexDB, a: np.ndarray, b: np.ndarray) -> float | None:
    row = db.query_one("SELECT vec_distance_cosine(?, ?)", (a.astype("<f4").tobytes(), b.astype("<f4").tobytes()))
    assert row is not None
    return None if row[0] is None else float(row[0])


def _emulated(a: np.ndarray, b: np.ndarray) -> float | None:
    rows = a.astype(np.float32)[None, :]
    query = b.astype(np.float32)
    value = float(sqlite_vec_cosine(rows, squared_norms_f32(rows), query, squared_norms_f32(query[None, :])[0])[0])
    return None if np.isnan(value) else value


@pytest.mark.parametrize("dim", [1, 3, 8, 17, 64, 256, 384])
def test_sqlite_vec_cosine_is_bit_exact(db: IndexDB, dim: int) -> None:
    rng = np.random.default_rng(dim)
    for scale in (1e-3, 1.0, 1e3):
        for _ in range(60):
            a = (rng.standard_normal(dim) * scale).astype(np.float32)
            b = rng.standard_normal(dim).astype(np.float32)
            assert _emulated(a, b) == _sql_distance(db, a, b)
    odd = [np.zeros(dim), np.full(dim, 1e-30), np.full(dim, 1e20), np.full(dim, np.nan), np.full(dim, np.inf)]
    for row in odd:
        for query in (np.ones(dim), np.full(dim, 1e-30)):
            assert _emulated(row, query) == _sql_distance(db, row, query)


def _set_vectors(db: IndexDB, vectors: dict[str, np.ndarray], space: str) -> None:
    """Give every chunk of each named path the vector given (the crafted-vector cases below)."""
    with db.atomic():
        for path, vec in vectors.items():
            db.execute("UPDATE embeddings SET vec = ? WHERE model = ? AND chunk_id IN "
                       "(SELECT chunk_id FROM chunks WHERE path = ?)", (vec.astype("<f4").tobytes(), space, path))


@pytest.fixture
def crafted(repo: Repo, db: IndexDB) -> tuple[IndexDB, FakeEmbedder, list[str]]:
    """Eight one-chunk memories under a 4-dimensional fake space, vectors set by each test."""
    paths = [f"areas/inbox/c{i}.html" for i in range(8)]
    for i, path in enumerate(paths):
        repo.write(path, memory_html(f"Crafted {i}", f"Crafted memory number {i} alpha."))
    repo.commit("crafted", *paths)
    embedder = FakeEmbedder(dim=4)
    assert indexer.rebuild(repo.git, db, embedder, now=NOW).errors == ()
    return db, embedder, paths


def _near_tie(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A query and two vectors whose sqlite-vec distances are equal while their float64 distances are not."""
    query = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
    while True:
        base = rng.standard_normal(4).astype(np.float32)
        other = base.copy()
        other[1] = np.nextafter(other[1], np.float32(0.0))  # a hair closer to the query's axis
        e = [_emulated(v, query) for v in (base, other)]
        exact = [1.0 - float(v.astype(np.float64) @ query.astype(np.float64)) / float(np.linalg.norm(
            v.astype(np.float64))) for v in (base, other)]
        if e[0] == e[1] and exact[1] < exact[0]:
            return query, base, other


def test_float32_tie_goes_to_the_smaller_path_as_in_sql(crafted: tuple[IndexDB, FakeEmbedder, list[str]]) -> None:
    """float64 says the second vector is closer; sqlite-vec's float32 says they tie, and SQL lists the smaller path
    first. The resident arm follows SQL (docs/retrieval.md §4.11)."""
    db, embedder, paths = crafted
    query, far, near = _near_tie(np.random.default_rng(5))
    rng = np.random.default_rng(6)
    vectors = {p: rng.standard_normal(4).astype(np.float32) for p in paths}
    vectors[paths[0]], vectors[paths[1]] = far, near  # float64 would rank paths[1] before paths[0]
    _set_vectors(db, vectors, embedder.space)
    resident = ResidentVectors.load(db, embedder.space)
    qvec = query.astype("<f4").tobytes()
    sql_arm = _sql_arm(db, qvec, embedder.space, Scope())
    assert sql_arm.index(paths[0]) == sql_arm.index(paths[1]) - 1
    assert resident.ranked(qvec, None) == sql_arm
    for limit in range(1, 9):
        assert resident.ranked(qvec, None, limit) == sql_arm[:limit]


def test_tiny_huge_nan_and_zero_vectors_rank_as_in_sql(crafted: tuple[IndexDB, FakeEmbedder, list[str]]) -> None:
    """A vector whose float32 squared norm underflows ranks first in SQL (distance −inf), a huge one at 1.0, NaN
    and zero never rank: the resident arm scores those rows the sqlite-vec way."""
    db, embedder, paths = crafted
    rng = np.random.default_rng(8)
    vectors = {p: rng.standard_normal(4).astype(np.float32) for p in paths}
    vectors[paths[2]] = np.full(4, 1e-30, dtype=np.float32)
    vectors[paths[3]] = np.full(4, 1e20, dtype=np.float32)
    vectors[paths[4]] = np.array([np.nan, 1, 1, 1], dtype=np.float32)
    vectors[paths[5]] = np.zeros(4, dtype=np.float32)
    _set_vectors(db, vectors, embedder.space)
    resident = ResidentVectors.load(db, embedder.space)
    for query in (np.array([1, 2, 3, 4]), np.array([-1, 0.5, 0, 0]), np.full(4, 1e-30), np.array([np.inf, 0, 0, 0])):
        qvec = query.astype("<f4").tobytes()
        sql_arm = _sql_arm(db, qvec, embedder.space, Scope())
        assert resident.ranked(qvec, None) == sql_arm
        assert paths[4] not in sql_arm and paths[5] not in sql_arm


# ---- the guards ---------------------------------------------------------------------------------------------

def test_a_changed_or_foreign_index_is_refused(crafted: tuple[IndexDB, FakeEmbedder, list[str]]) -> None:
    db, embedder, paths = crafted
    resident = ResidentVectors.load(db, embedder.space)
    assert search(db, "alpha", embedder=embedder, now=NOW, resident=resident).hits
    other = open_index(":memory:", ":memory:")
    try:
        with pytest.raises(IndexStale):
            search(other, "alpha", embedder=embedder, now=NOW, resident=resident)
    finally:
        other.close()
    with pytest.raises(EmbedModelMismatch):
        search(db, "alpha", embedder=FakeEmbedder(dim=8), now=NOW, resident=resident)
    with pytest.raises(EmbedModelMismatch):
        resident.ranked(b"\0" * 12, None)
    for bad_space in ("fake:hash", "fake:hash@0", "fake:hash@x"):
        with pytest.raises(EmbedModelMismatch):
            ResidentVectors.load(db, bad_space)
    with db.atomic():
        db.execute("DELETE FROM embeddings WHERE chunk_id IN (SELECT chunk_id FROM chunks WHERE path = ?)",
                   (paths[0],))
    with pytest.raises(IndexStale):
        search(db, "alpha", embedder=embedder, now=NOW, resident=resident)
    fresh = ResidentVectors.load(db, embedder.space)
    assert paths[0] not in fresh.paths
    assert search(db, "alpha", embedder=embedder, now=NOW, resident=fresh).hits == \
        search(db, "alpha", embedder=embedder, now=NOW).hits
    with db.atomic():
        db.execute("UPDATE embeddings SET vec = x'00000000', dim = 1 "
                   "WHERE chunk_id = (SELECT min(chunk_id) FROM chunks)")
    with pytest.raises(StorageError, match="not 4 float32 components") as caught:
        ResidentVectors.load(db, embedder.space)
    assert caught.value.hint and caught.value.path in paths


def test_eligible_paths_is_read_once_per_scope_until_the_index_changes(
        crafted: tuple[IndexDB, FakeEmbedder, list[str]]) -> None:
    db, _embedder, paths = crafted
    first = eligible_paths(db, Scope())
    assert first == frozenset(paths)
    assert eligible_paths(db, Scope()) is first
    assert eligible_paths(db, Scope(memory_types=("task",))) == frozenset()
    with db.atomic():
        db.execute("DELETE FROM files WHERE path = ?", (paths[7],))
    assert eligible_paths(db, Scope()) == frozenset(paths[:7])


def test_fusion_with_a_given_ranking(crafted: tuple[IndexDB, FakeEmbedder, list[str]]) -> None:
    """The vector relation is the ranking given, ranks from 1; an empty ranking adds no row; any arm may be given."""
    db, _embedder, paths = crafted
    sql, params = fusion_sql({"vector": 1.0}, Scope(), vector_ranks=[])
    assert db.query(sql, params) == []
    sql, params = fusion_sql({"vector": 2.0}, Scope(), vector_ranks=[paths[3], paths[1]])
    assert db.query(sql, params) == [(paths[3], 2.0 / 61), (paths[1], 2.0 / 62)]
    sql, params = fusion_sql({"vector": 1.0, "recency": 1.0}, Scope(), vector_ranks=[paths[3]],
                             given_ranks={"recency": [paths[1], paths[3]]})
    assert db.query(sql, params) == [(paths[3], 1 / 61 + 1 / 62), (paths[1], 1 / 61)]
    with pytest.raises(ValueError, match="without their arm"):
        fusion_sql({"fts": 1.0}, Scope(), match='"alpha"', vector_ranks=[])
    with pytest.raises(ValueError, match="twice"):
        fusion_sql({"vector": 1.0}, Scope(), vector_ranks=[], given_ranks={"vector": []})


@pytest.mark.parametrize(("corpus_name", "scope_name"), ROWS)
def test_fixed_arms_equal_their_sql_inside_the_fusion(corpora: dict[str, Corpus], corpus_name: str,
                                                      scope_name: str) -> None:
    """Each query-independent arm alone, read once and handed back, fuses to the hits of its SQL CTE."""
    corpus, scope = corpora[corpus_name], {**SCOPES, **OWN_SCOPES[corpus_name]}[scope_name]
    for arm in FIXED_ARMS:
        ranks = fixed_arm_ranks(corpus.db, arm, scope, now=NOW)
        sql, params = arm_ranks_sql(arm, scope, now=NOW)
        assert ranks == [(str(r[0]), int(r[1])) for r in corpus.db.query(sql, params)]
        alone = ArmWeights(**{name: float(name == arm) for name in ("fts", "vector", "recency", "salience")})
        plain = search(corpus.db, "anything", scope=scope, embedder=corpus.embedder, now=NOW, weights=alone,
                       limit=40)
        fast = search(corpus.db, "anything", scope=scope, embedder=corpus.embedder, now=NOW, weights=alone,
                      limit=40, resident=corpus.resident)
        assert [h.path for h in plain.hits] == [path for path, _ in ranks[:40]] and fast == plain
    with pytest.raises(ValueError, match="depends on the query"):
        fixed_arm_ranks(corpus.db, "fts", scope, now=NOW)


def test_a_state_change_makes_the_copy_stale(crafted: tuple[IndexDB, FakeEmbedder, list[str]]) -> None:
    """A reinforce changes the salience arm's input (state.access): the cached rankings and the copy are stale."""
    db, embedder, paths = crafted
    resident = ResidentVectors.load(db, embedder.space)
    before = fixed_arm_ranks(db, "salience", Scope(), now=NOW)
    reinforce(db, [paths[5]], signal="positive", now=NOW)
    assert fixed_arm_ranks(db, "salience", Scope(), now=NOW) != before
    with pytest.raises(IndexStale):
        search(db, "alpha", embedder=embedder, now=NOW, resident=resident)
    with pytest.raises(IndexStale):
        search(db, "alpha", embedder=None, now=NOW, resident=resident)


# ---- hostile vectors: many ties, near-ties, extreme magnitudes, non-finite values -------------------------------

KINDS = ("ternary", "near-ties", "magnitudes", "non-finite")
"""How a case draws its vectors: components in {-1, 0, 1} (exact ties and zero rows), one vector nudged by one
float32 step per row (float32 near-ties), Gaussian rows scaled by 10^±30 (rows outside the error bound), and
Gaussian rows with NaN and ±inf sprinkled in."""


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[IndexDB, str, list[str], list[str]]]:
    """60 memories (three of them several chunks long) indexed under a 6-dimensional fake space."""
    repo = Repo(tmp_path_factory.mktemp("many") / "mem")
    paths = [f"areas/inbox/h{i:02d}.html" for i in range(60)]
    for i, path in enumerate(paths):
        body = " ".join(f"Sentence {n} of memory {i} about the ledger." for n in range(150)) if i % 20 == 0 else ""
        repo.write(path, memory_html(f"Hostile {i}", f"Hostile memory {i} alpha.", body=body))
    repo.commit("hostile", *paths)
    embedder = FakeEmbedder(dim=6)
    db = open_index(":memory:", ":memory:")
    assert indexer.rebuild(repo.git, db, embedder, now=NOW).errors == ()
    chunks = [str(r[0]) for r in db.query("SELECT chunk_id FROM chunks ORDER BY chunk_id")]
    assert len(chunks) > len(paths)
    yield db, embedder.space, paths, chunks
    db.close()


def _draw(kind: str, rng: np.random.Generator, count: int) -> np.ndarray:
    if kind == "ternary":
        return rng.integers(-1, 2, size=(count, 6)).astype(np.float32)
    if kind == "near-ties":
        base = rng.standard_normal(6).astype(np.float32)
        out = np.repeat(base[None, :], count, axis=0)
        for row in out:
            k = rng.integers(0, 6)
            for _ in range(int(rng.integers(0, 4))):
                row[k] = np.nextafter(row[k], np.float32(np.inf) if rng.random() < 0.5 else np.float32(-np.inf))
        return out
    if kind == "magnitudes":
        return (rng.standard_normal((count, 6)) * 10.0 ** rng.uniform(-30, 30, size=(count, 1))).astype(np.float32)
    out = rng.standard_normal((count, 6)).astype(np.float32)
    mask = rng.random((count, 6)) < 0.05
    out[mask] = rng.choice(np.array([np.nan, np.inf, -np.inf], dtype=np.float32), size=int(mask.sum()))
    return out


@pytest.mark.parametrize(("kind", "seed"), [(kind, seed) for kind in KINDS for seed in range(8)])
def test_hostile_vectors_rank_as_in_sql(many: tuple[IndexDB, str, list[str], list[str]], kind: str,
                                        seed: int) -> None:
    db, space, paths, chunks = many
    rng = np.random.default_rng(seed)
    vectors = _draw(kind, rng, len(chunks))
    with db.atomic():
        db.executemany("UPDATE embeddings SET vec = ? WHERE chunk_id = ?",
                       [(v.astype("<f4").tobytes(), c) for v, c in zip(vectors, chunks, strict=True)])
    resident = ResidentVectors.load(db, space)
    subset = sorted(rng.choice(paths, size=25, replace=False).tolist())
    for query in _draw(kind, rng, 4):
        qvec = query.astype("<f4").tobytes()
        for eligible in (None, subset):
            names = {f"e{i}": p for i, p in enumerate(eligible or [])}
            where = f"f.path IN ({', '.join(':' + n for n in names)})" if eligible else "1"
            for limit in (1, 7, 40):
                sql = [str(r[0]) for r in db.query(vector_arm_sql(where),
                                                   {**names, "qvec": qvec, "space": space, "arm_limit": limit})]
                assert resident.ranked(qvec, eligible, limit) == sql, (kind, seed, limit)


@pytest.mark.parametrize("plane", ["index", "state"])
def test_a_commit_by_another_connection_makes_the_copy_stale(repo: Repo, tmp_path: Path, plane: str) -> None:
    """Another process writing ``index.db`` (a re-index) or ``state.db`` (a reinforce) is seen through SQLite's
    ``data_version`` of that file."""
    path = "areas/inbox/one.html"
    repo.write(path, memory_html("One", "Alpha deploys on Mondays."))
    repo.commit("one", path)
    embedder = FakeEmbedder(dim=8)
    files = (tmp_path / "index.db", tmp_path / "state.db")
    reader, writer = open_index(*files), open_index(*files)
    try:
        indexer.rebuild(repo.git, reader, embedder, now=NOW)
        resident = ResidentVectors.load(reader, embedder.space)
        assert search(reader, "alpha", embedder=embedder, now=NOW, resident=resident).hits
        if plane == "index":
            with writer.atomic():
                writer.execute("UPDATE files SET title = 'Renamed' WHERE path = ?", (path,))
        else:
            reinforce(writer, [path], signal="positive", now=NOW)
        with pytest.raises(IndexStale):
            search(reader, "alpha", embedder=embedder, now=NOW, resident=resident)
    finally:
        reader.close()
        writer.close()
