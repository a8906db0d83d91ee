"""The resident vector arm and the commit index on synthetic corpora (issue 10 "Speed"; docs/retrieval.md §4.11).

``python bench/resident_arm.py --sizes 1000,10000`` reuses (or builds) the corpora of ``bench/synth.py`` and prints,
per size, one JSON line:

- ``load_ms``: the one-off ``ResidentVectors.load`` (median of 3), and ``eligible_ms`` the first
  ``eligible_paths`` read of the default scope;
- search latency p50/p95 (ms) of ``retrieval.search`` (four arms, limit 10, no MMR, fake embedder ``fake:hash@256``)
  without and with ``resident=``, for 50 short queries (3–4 corpus words) and 50 claim-like ones (8–14 words, the
  shape of the issue-10 claim probes), after 5 warm-ups; every pair of results is compared (``mismatches`` must
  be 0);
- ``probe_1000_s``: 1,000 claim-like searches with the resident arm, end to end (the 500 + 500 searches of the
  issue-10 gate on a base and a tip index);
- ``commit_index_s``: ``build_commit_index`` of the corpus commit into a new folder (parse, write, fake embedding).

Timings are wall-clock; print them with the machine (``nproc``) beside.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
from pathlib import Path

from synth import DIM, NOW, corpus, query, sentence
from timing import Stopwatch, ms, pct

from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.index.resident import ResidentVectors, eligible_paths
from git_memhtml.index.retrieval import search
from git_memhtml.index.retrieval_sql import Scope
from git_memhtml.index.snapshot import build_commit_index

EMBEDDER = FakeEmbedder(dim=DIM)
QUERIES = 50
WARMUP = 5
PROBES = 1000


def _timed(db: IndexDB, queries: list[str], resident: ResidentVectors | None) -> list[float]:
    for q in queries[:WARMUP]:
        search(db, q, embedder=EMBEDDER, now=NOW, resident=resident)
    return [ms(search, db, q, embedder=EMBEDDER, now=NOW, resident=resident) for q in queries]


def run(size: int) -> dict[str, float]:
    root = corpus(size)
    repo = GitRepo.discover(root)
    rng = random.Random(size)
    short = [query(rng) for _ in range(QUERIES)]
    claims = [sentence(rng, 8, 14) for _ in range(QUERIES)]
    out: dict[str, float] = {"size": size}
    with IndexDB.for_repo(repo) as db:
        loads = []
        for _ in range(3):
            watch = Stopwatch()
            resident = ResidentVectors.load(db, EMBEDDER.space)
            loads.append(watch.wall() * 1000)
        out["load_ms"] = statistics.median(loads)
        out["vectors"] = resident.rows
        out["eligible_ms"] = ms(eligible_paths, db, Scope())
        for name, queries in (("short", short), ("claim", claims)):
            sql = _timed(db, queries, None)
            fast = _timed(db, queries, resident)
            out[f"{name}_sql_p50_ms"], out[f"{name}_sql_p95_ms"] = pct(sql, 0.5), pct(sql, 0.95)
            out[f"{name}_resident_p50_ms"], out[f"{name}_resident_p95_ms"] = pct(fast, 0.5), pct(fast, 0.95)
        out["mismatches"] = sum(
            search(db, q, embedder=EMBEDDER, now=NOW) != search(db, q, embedder=EMBEDDER, now=NOW, resident=resident)
            for q in short + claims
        )
        probes = [sentence(rng, 8, 14) for _ in range(PROBES)]
        watch = Stopwatch()
        for q in probes:
            search(db, q, embedder=EMBEDDER, now=NOW, resident=resident)
        out["probe_1000_s"] = watch.wall()
    head = repo.head_sha()
    assert head is not None
    with tempfile.TemporaryDirectory(prefix="memhtml-commit-index-") as folder:
        watch = Stopwatch()
        build_commit_index(repo, head, Path(folder) / "base", EMBEDDER, now=NOW).close()
        out["commit_index_s"] = watch.wall()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPUs; embedder {EMBEDDER.space}")
    for size in (int(s) for s in args.sizes.split(",")):
        result = run(size)
        print(json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in result.items()}), flush=True)


if __name__ == "__main__":
    main()
