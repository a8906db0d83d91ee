"""Index and retrieval speed on synthetic corpora (issue 4 "Measure").

``python bench/index_perf.py --sizes 1000,10000,100000`` builds (or reuses) the corpora of ``bench/synth.py``
and prints, per size:

- search latency p50/p95 (ms) of ``retrieval.search`` (four arms, limit 10, no MMR) over 50 queries after 5
  warm-ups, fake embedder ``fake:hash@256``;
- the vector arm alone (the SQL of ``retrieval_sql.vector_arm_sql``, exact scan with sqlite-vec's C scalar)
  against a numpy brute-force ``M @ q`` + per-path min + top-40 over the same vectors held in memory (ms p50),
  plus the one-off cost of loading the vectors into numpy;
- rebuild throughput (files/s): the corpus build's rebuild (parse, write, embed) and, up to 10k, a fresh rebuild;
- at 10k: the post-commit incremental ``update`` after a one-file commit (ms p50 of 5, embedding included).

Timings are wall-clock on whatever machine runs it; print them with the machine (``nproc``) beside.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from pathlib import Path

import numpy as np
from synth import DIM, NOW, corpus, query

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.template import render_memory
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB, open_index
from git_memhtml.index.retrieval import search
from git_memhtml.index.retrieval_sql import ARM_LIMIT, Scope, scope_sql, vector_arm_sql

EMBEDDER = FakeEmbedder(dim=DIM)
QUERIES = 50
WARMUP = 5


def pct(values: list[float], q: float) -> float:
    """``q``-quantile (0..1) of ``values`` by nearest rank, in the values' unit."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


def _ms(fn: object, *args: object) -> float:
    t = time.perf_counter()
    fn(*args)  # type: ignore[operator]
    return (time.perf_counter() - t) * 1000


def search_latency(db: IndexDB, queries: list[str]) -> tuple[float, float]:
    for q in queries[:WARMUP]:
        search(db, q, embedder=EMBEDDER, now=NOW)
    times = [_ms(lambda q=q: search(db, q, embedder=EMBEDDER, now=NOW)) for q in queries]
    return pct(times, 0.5), pct(times, 0.95)


def vector_arm(db: IndexDB, queries: list[str]) -> tuple[float, float, float]:
    """(sqlite p50 ms, numpy p50 ms, numpy load ms) for the vector arm of the default scope."""
    scope_filter, params = scope_sql(Scope())
    sql = vector_arm_sql(scope_filter)
    qvecs = [np.asarray(EMBEDDER.embed([q])[0], dtype="<f4") for q in queries]
    base = {**params, "space": EMBEDDER.space, "arm_limit": ARM_LIMIT}
    for v in qvecs[:WARMUP]:
        db.query(sql, {**base, "qvec": v.tobytes()})
    sqlite = [_ms(lambda v=v: db.query(sql, {**base, "qvec": v.tobytes()})) for v in qvecs]
    t = time.perf_counter()
    rows = db.query(
        "SELECT c.path, e.vec FROM files f JOIN chunks c ON c.path = f.path JOIN embeddings e ON "
        f"e.chunk_id = c.chunk_id WHERE e.model = :space AND {scope_filter}", {**params, "space": EMBEDDER.space})
    paths = np.array([r[0] for r in rows])
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), DIM)
    norms = np.linalg.norm(matrix, axis=1)
    matrix = matrix / np.where(norms == 0, 1, norms)[:, None]
    load = (time.perf_counter() - t) * 1000

    def brute(v: np.ndarray) -> list[str]:
        dist = 1.0 - matrix @ (v / (np.linalg.norm(v) or 1.0))
        k = min(ARM_LIMIT * 4, len(dist))  # head-room for several chunks of one path
        top = np.argpartition(dist, k - 1)[:k]
        best: dict[str, float] = {}
        for i in top[np.argsort(dist[top])]:
            best.setdefault(str(paths[i]), float(dist[i]))
        return sorted(best, key=lambda p: (best[p], p))[:ARM_LIMIT]

    numpy_times = [_ms(brute, v) for v in qvecs]
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
            times.append(_ms(lambda: indexer.update(repo, db, EMBEDDER, now=NOW)))
    return statistics.median(times)


def fresh_rebuild(root: Path) -> float:
    """Files/s of a rebuild into a new in-memory index (parse, write, embed)."""
    repo = GitRepo.discover(root)
    db = open_index(":memory:", ":memory:")
    try:
        t = time.perf_counter()
        report = indexer.rebuild(repo, db, EMBEDDER, now=NOW)
        return report.added / (time.perf_counter() - t)
    finally:
        db.close()


def run(size: int) -> dict[str, float]:
    root = corpus(size)
    meta = json.loads((root / ".git" / "memhtml" / "bench.json").read_text())
    rng = random.Random(size)
    queries = [query(rng) for _ in range(QUERIES)]
    out: dict[str, float] = {"size": size, "build_rebuild_files_s": size / meta["rebuild_s"]}
    repo = GitRepo.discover(root)
    with IndexDB.for_repo(repo) as db:
        out["search_p50_ms"], out["search_p95_ms"] = search_latency(db, queries)
        out["vector_sqlite_p50_ms"], out["vector_numpy_p50_ms"], out["numpy_load_ms"] = vector_arm(db, queries)
    if size <= 10_000:
        out["fresh_rebuild_files_s"] = fresh_rebuild(root)
    if size == 10_000:
        out["incremental_one_file_ms"] = incremental(root)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPUs; embedder {EMBEDDER.space}")
    for size in (int(s) for s in args.sizes.split(",")):
        result = run(size)
        print(json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in result.items()}), flush=True)


if __name__ == "__main__":
    main()
