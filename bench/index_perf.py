"""Index and retrieval speed on synthetic corpora (issue 4 "Measure", issue 12 item 1).

``python bench/index_perf.py --sizes 1000,10000,100000 [--embed wordllama] [--work DIR]`` builds (or reuses) the
corpora of ``bench/synth.py``, copies each into ``DIR/corpus-N`` (default ``/tmp/index-perf-work``; the shared
corpora are never opened for writing: opening migrates the index and writes the vector matrix) and prints, per size:

- ``--embed wordllama``: the copy's vectors are replaced by wordllama's (same 256 dims; ``reembed_s``), and every
  search embeds its query with wordllama;
- the vector arm on the persistent matrix (``matrix_read.vector_ranks``, index/matrix_read.py: exact, SQL-equal) against
  numpy brute force ``M @ q`` + ``argpartition`` top-40 over the same memory-mapped matrix, with BLAS (``@``) and
  with einsum (``matrix_p50_ms``, ``brute_blas_p50_ms``, ``brute_einsum_p50_ms``; ``matrix_over_brute`` divides
  by the faster), the matrix's full build and a no-op sync;
- a breakdown of one search into its parts (query embedding, vector arm, fts arm, fixed arms, fusion, hydration);
- with ``--embed wordllama``, the cold CLI ``git memhtml search`` (a new process each, the matrix already built;
  p50 of 5; the CLI's fake embedder is ``fake:hash@1024``, so the fake corpus cannot be searched from the CLI);

- search latency p50/p95 (ms) of ``retrieval.search`` (four arms, limit 10, no MMR) over 50 queries after 5
  warm-ups, fake embedder ``fake:hash@256``;
- the vector arm alone (the SQL of ``retrieval_sql.vector_arm_sql``, exact scan with sqlite-vec's C scalar)
  against a numpy brute-force ``M @ q`` + per-path min + top-40 over the same vectors held in memory (ms p50),
  plus the one-off cost of loading the vectors into numpy;
- rebuild throughput (files/s): the corpus build's rebuild (parse, write, embed) and, up to 10k, a fresh rebuild;
- at 10k: the post-commit incremental ``update`` after a one-file commit (ms p50 of 5, embedding included).

Timings are wall-clock on whatever machine runs it; print them with the machine (``nproc``) beside.

BLAS runs as the CLI runs it for a search (``cli/blas.py``: ``OPENBLAS_NUM_THREADS=1``, both for our arm and for the
brute force), unless ``--default-blas`` (numpy's own default, one thread per core) or the variable is already set.
"""

from __future__ import annotations

import os
import sys

if "--default-blas" not in sys.argv:  # before numpy's first import: the CLI's setting for a search (cli/blas.py)
    from git_memhtml.cli.blas import limit_blas_threads

    limit_blas_threads(["search"], os.environ)

import argparse
import json
import random
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np
from synth import DIM, NOW, corpus, query
from timing import Stopwatch, ms, pct

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.template import render_memory
from git_memhtml.embed.base import Embedder
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index import indexer, matrix, matrix_file, matrix_read
from git_memhtml.index.db import IndexDB, open_index
from git_memhtml.index.embedding import embed_missing
from git_memhtml.index.resident import FIXED_ARMS, fixed_arm_ranks
from git_memhtml.index.retrieval import _query_vector, fts_ranks, hydrate, search
from git_memhtml.index.retrieval_sql import (
    ARM_LIMIT,
    Arm,
    ArmWeights,
    Ranking,
    Scope,
    arm_ranks_sql,
    fts_match,
    fusion_sql,
    scope_sql,
    vector_arm_sql,
)

EMBEDDER: Embedder = FakeEmbedder(dim=DIM)
WORK = Path("/tmp/index-perf-work")
SQL_QUERIES = 50
"""Queries timed on the SQL scan of the vector arm (``--sql-queries``: ~2.5 s each at 100k under load)."""
QUERIES = 50
WARMUP = 5


def search_latency(db: IndexDB, queries: list[str]) -> tuple[float, float]:
    for q in queries[:WARMUP]:
        search(db, q, embedder=EMBEDDER, now=NOW)
    times = [ms(lambda q=q: search(db, q, embedder=EMBEDDER, now=NOW)) for q in queries]
    return pct(times, 0.5), pct(times, 0.95)


def vector_arm(db: IndexDB, queries: list[str]) -> tuple[float, float, float]:
    """(sqlite p50 ms, numpy p50 ms, numpy load ms) for the vector arm of the default scope."""
    scope_filter, params = scope_sql(Scope())
    sql = vector_arm_sql(scope_filter)
    qvecs = [np.asarray(EMBEDDER.embed([q])[0], dtype="<f4") for q in queries]
    base = {**params, "space": EMBEDDER.space, "arm_limit": ARM_LIMIT}
    for v in qvecs[:WARMUP]:
        db.query(sql, {**base, "qvec": v.tobytes()})
    sqlite = [ms(lambda v=v: db.query(sql, {**base, "qvec": v.tobytes()})) for v in qvecs[:SQL_QUERIES]]
    watch = Stopwatch()
    rows = db.query(
        "SELECT c.path, e.vec FROM files f JOIN chunks c ON c.path = f.path JOIN embeddings e ON "
        f"e.chunk_id = c.chunk_id WHERE e.model = :space AND {scope_filter}", {**params, "space": EMBEDDER.space})
    paths = np.array([r[0] for r in rows])
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), DIM)
    norms = np.linalg.norm(matrix, axis=1)
    matrix = matrix / np.where(norms == 0, 1, norms)[:, None]
    load = watch.wall() * 1000

    def brute(v: np.ndarray) -> list[str]:
        dist = 1.0 - matrix @ (v / (np.linalg.norm(v) or 1.0))
        k = min(ARM_LIMIT * 4, len(dist))  # head-room for several chunks of one path
        top = np.argpartition(dist, k - 1)[:k]
        best: dict[str, float] = {}
        for i in top[np.argsort(dist[top])]:
            best.setdefault(str(paths[i]), float(dist[i]))
        return sorted(best, key=lambda p: (best[p], p))[:ARM_LIMIT]

    numpy_times = [ms(brute, v) for v in qvecs]
    return pct(sqlite, 0.5), pct(numpy_times, 0.5), load


def incremental(root: Path, reps: int = 5) -> float:
    """p50 ms of ``update`` after a one-file commit (a new claim in one memory), embedding included."""
    repo = GitRepo.discover(root)
    times = []
    with IndexDB.for_repo(repo) as db:
        indexer.update(repo, db, EMBEDDER, now=NOW)
        for rep in range(reps):
            path = "areas/area001/m000600.html"
            html = render_memory(
                MemoryDraft(
                    title=f"Edited {rep} {time.time_ns()}",
                    memory_type="semantic",
                    claim=f"Edited claim number {time.time_ns()}.",
                ),
                now=NOW,
            )
            (root / path).write_text(html, encoding="utf-8")
            repo.stage([path])
            repo.commit(f"bench: edit {path}")
            times.append(ms(lambda: indexer.update(repo, db, EMBEDDER, now=NOW)))
    return statistics.median(times)


def fresh_rebuild(root: Path) -> float:
    """Files/s of a rebuild into a new in-memory index (parse, write, embed)."""
    repo = GitRepo.discover(root)
    db = open_index(":memory:", ":memory:")
    try:
        watch = Stopwatch()
        report = indexer.rebuild(repo, db, EMBEDDER, now=NOW)
        return report.added / watch.wall()
    finally:
        db.close()


def matrix_arm(db: IndexDB, queries: list[str]) -> dict[str, float]:
    """The persistent matrix: full build, no-op sync, and the vector arm on it against numpy brute force over the
    same mapped matrix (ms p50), after checking the arm equals the SQL scan for every query."""
    out: dict[str, float] = {}
    path = matrix_file.matrix_path(db)
    assert path is not None
    path.unlink(missing_ok=True)
    watch = Stopwatch()
    assert matrix.sync(db).result == "built"
    out["matrix_build_ms"] = watch.wall() * 1000
    out["matrix_noop_sync_ms"] = ms(matrix.sync, db)
    out["matrix_mib"] = path.stat().st_size / 2**20
    scope_filter, params = scope_sql(Scope())
    sql = vector_arm_sql(scope_filter)
    qvecs = [_query_vector(EMBEDDER, q)[0] for q in queries]
    vecs = [v for v in qvecs if v is not None]
    for v in vecs[:10]:
        want = [r[0] for r in db.query(sql, {**params, "space": EMBEDDER.space, "arm_limit": ARM_LIMIT, "qvec": v})]
        assert matrix_read.vector_ranks(db, v, EMBEDDER.space, Scope()) == want
    for v in vecs[:WARMUP]:
        matrix_read.vector_ranks(db, v, EMBEDDER.space, Scope())
    fast = [ms(matrix_read.vector_ranks, db, v, EMBEDDER.space, Scope()) for v in vecs]
    mapped = matrix_read.mapped_file(path, EMBEDDER.dim)
    assert mapped is not None
    rows = mapped.rows[:, : EMBEDDER.dim]

    def brute(v: bytes, einsum: bool) -> np.ndarray:
        q = np.frombuffer(v, dtype="<f4")
        q = q / np.linalg.norm(q)
        scores = np.einsum("ij,j->i", rows, q) if einsum else rows @ q
        top = np.argpartition(-scores, ARM_LIMIT)[:ARM_LIMIT]
        return top[np.argsort(-scores[top])]

    for v in vecs[:WARMUP]:
        brute(v, True)
        brute(v, False)
    blas = [ms(brute, v, False) for v in vecs]
    loop = [ms(brute, v, True) for v in vecs]
    out["matrix_p50_ms"], out["matrix_p95_ms"] = pct(fast, 0.5), pct(fast, 0.95)
    out["brute_blas_p50_ms"], out["brute_einsum_p50_ms"] = pct(blas, 0.5), pct(loop, 0.5)
    out["matrix_over_brute"] = out["matrix_p50_ms"] / min(out["brute_blas_p50_ms"], out["brute_einsum_p50_ms"])
    return out


def breakdown(db: IndexDB, queries: list[str]) -> dict[str, float]:
    """p50 ms of each part of a default search (limit 10, no MMR), run one after the other as ``search`` does."""
    parts: dict[str, list[float]] = {k: [] for k in ("embed", "vector", "fts", "fixed", "fusion", "hydrate",
                                                     "fts_one_statement")}
    scope = Scope()
    weights = ArmWeights()
    for q in queries:
        t0 = time.perf_counter()
        qvec, _ = _query_vector(EMBEDDER, q)
        t1 = time.perf_counter()
        given: dict[Arm, Ranking] = {}
        if qvec is not None:
            ranks = matrix_read.vector_ranks(db, qvec, EMBEDDER.space, scope)
            assert ranks is not None
            given["vector"] = ranks
        t2 = time.perf_counter()
        match = fts_match(q)
        if match is not None:
            given["fts"] = fts_ranks(db, match, scope)
        t3 = time.perf_counter()
        for arm in FIXED_ARMS:
            given[arm] = fixed_arm_ranks(db, arm, scope, now=NOW)
        t4 = time.perf_counter()
        every: dict[Arm, float] = {"fts": weights.fts, "vector": weights.vector, "recency": weights.recency,
                                   "salience": weights.salience}
        arms = {a: w for a, w in every.items() if a in given}
        sql, params = fusion_sql(arms, scope, now=NOW, limit=10, given_ranks=given)
        fused = [(str(p), float(sc)) for p, sc in db.query(sql, params)]
        t5 = time.perf_counter()
        hydrate(db, [p for p, _ in fused], dict(fused), qvec=qvec, space=EMBEDDER.space)
        t6 = time.perf_counter()
        if match is not None:  # the one-statement lexical arm, for comparison (not part of the search)
            sql, params = arm_ranks_sql("fts", scope, match=match)
            assert [r[0] for r in db.query(sql, params)] == given["fts"]
        t7 = time.perf_counter()
        for name, a, b in (("embed", t0, t1), ("vector", t1, t2), ("fts", t2, t3), ("fixed", t3, t4),
                           ("fusion", t4, t5), ("hydrate", t5, t6), ("fts_one_statement", t6, t7)):
            parts[name].append((b - a) * 1000)
    return {f"part_{k}_p50_ms": pct(v, 0.5) for k, v in parts.items()}


def cold_cli(root: Path, queries: list[str], embed: str, reps: int = 5) -> float:
    """p50 ms of ``git memhtml search`` in a new process (the matrix already built)."""
    env = {**os.environ, "MEMHTML_EMBED": embed}
    exe = shutil.which("git-memhtml")
    cmd = [exe] if exe else [sys.executable, "-m", "git_memhtml.cli.main"]
    times = []
    for q in queries[:reps]:
        times.append(ms(subprocess.run, [*cmd, "search", q], cwd=root, env=env, check=True, capture_output=True))
    return statistics.median(times)


def work_copy(size: int, work: Path) -> Path:
    """``work/corpus-<size>``: a copy of the shared corpus (made once; never the shared folder itself)."""
    source = corpus(size)
    target = work / f"corpus-{size}"
    if not (target / ".git" / "memhtml" / "bench.json").is_file():
        shutil.rmtree(target, ignore_errors=True)
        work.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cp", "-a", str(source), str(target)], check=True)
        # the copy has new inodes and ctimes: refresh git's stat cache, or every status re-hashes every file
        subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=target, check=False)
    return target


def reembed(db: IndexDB) -> float:
    """Replace every vector of the copy by :data:`EMBEDDER`'s (s); nothing to do when it already holds them."""
    if db.query_one("SELECT 1 FROM index_state WHERE embed_model = ?", (EMBEDDER.space,)):
        return 0.0
    watch = Stopwatch()
    with db.atomic():
        db.execute("DELETE FROM embeddings")
        db.execute("UPDATE index_state SET embed_model = NULL, embed_dim = NULL")
    _written, error = embed_missing(db, EMBEDDER, now=NOW)
    assert error is None, error
    return watch.wall()


def run(size: int, work: Path, embed: str) -> dict[str, float]:
    root = work_copy(size, work)
    meta = json.loads((root / ".git" / "memhtml" / "bench.json").read_text())
    rng = random.Random(size)
    queries = [query(rng) for _ in range(QUERIES)]
    out: dict[str, float] = {"size": size, "build_rebuild_files_s": size / meta["rebuild_s"]}
    repo = GitRepo.discover(root)
    with IndexDB.for_repo(repo) as db:
        out["reembed_s"] = reembed(db)
        out.update(matrix_arm(db, queries))
        out["search_p50_ms"], out["search_p95_ms"] = search_latency(db, queries)
        out.update(breakdown(db, queries))
        out["vector_sqlite_p50_ms"], out["vector_numpy_p50_ms"], out["numpy_load_ms"] = vector_arm(db, queries)
    if embed == "wordllama":  # the CLI's fake embedder is fake:hash@1024, not the corpus' @256
        out["cold_cli_search_ms"] = cold_cli(root, queries, embed)
    if size <= 10_000 and embed == "fake":
        out["fresh_rebuild_files_s"] = fresh_rebuild(root)
    if size >= 10_000:
        out["incremental_one_file_ms"] = incremental(root)
    return out


def main() -> None:
    global EMBEDDER, SQL_QUERIES
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--embed", choices=("fake", "wordllama"), default="fake")
    parser.add_argument("--work", type=Path, default=WORK, help="where the corpora are copied (default %(default)s)")
    parser.add_argument("--default-blas", action="store_true",
                        help="numpy's default BLAS threads instead of the CLI's one thread (read before argparse)")
    parser.add_argument("--sql-queries", type=int, default=SQL_QUERIES, help="queries timed on the SQL vector scan")
    args = parser.parse_args()
    SQL_QUERIES = args.sql_queries
    if args.embed == "wordllama":
        from git_memhtml.embed.wordllama import WordLlamaEmbedder  # noqa: PLC0415

        EMBEDDER = WordLlamaEmbedder()
        assert EMBEDDER.dim == DIM, EMBEDDER.space
    print(f"machine: {os.cpu_count()} CPUs; embedder {EMBEDDER.space}; load {os.getloadavg()[0]:.2f}; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(default)')}")
    for size in (int(s) for s in args.sizes.split(",")):
        result = run(size, args.work / args.embed, args.embed)
        print(json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in result.items()}), flush=True)
        print(f"load after {size}: {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
