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

``python bench/resident_arm.py --crc DIR[,DIR…]`` instead measures the matrix's body CRCs (docs/index.md §3.12)
on copies of corpora (each ``DIR`` a copied ``bench/synth.py`` corpus: its matrix is rewritten, so never pass the
shared one), CPU seconds (user + system) and wall: ``build`` a full build (``sync(full=True)``, CRC table
included) and ``crc_table`` the CRC pass alone over the mapped body; ``first_check`` a reader's first check in a
new process (``vector_ranks`` of one query minus a second, checked call), ``verify_damage`` what ``index verify``
reads (``matrix_read.damage``); ``one_row_sync`` the in-place sync after one vector changed (median of 5) and
``one_row_recheck`` a reader re-checking after it (only the changed block).

Timings are wall-clock; print them with the machine (``nproc``) beside.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
from synth import DIM, NOW, corpus, query, sentence
from timing import Stopwatch, ms, pct

from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index import matrix_read
from git_memhtml.index.db import IndexDB
from git_memhtml.index.matrix import sync
from git_memhtml.index.matrix_file import HEADER_BYTES, body_crcs, matrix_path, read_header, row_bytes
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


def _cpu_wall(fn: Callable[[], object]) -> tuple[float, float]:
    """``(CPU ms, wall ms)`` of one call."""
    watch = Stopwatch()
    fn()
    return watch.cpu() * 1000, watch.wall() * 1000


def crc_costs(root: Path) -> dict[str, object]:
    """The CRC costs of the matrix of the copied corpus at ``root`` (see the module docstring)."""
    out: dict[str, object] = {"corpus": str(root)}
    with IndexDB.for_repo(GitRepo.discover(root)) as db:
        path = matrix_path(db)
        assert path is not None
        out["build_cpu_ms"], out["build_wall_ms"] = _cpu_wall(lambda: sync(db, full=True))
        header, size = read_header(path)
        assert header is not None
        out["rows"], out["file_mb"] = header.capacity, round(size / 2**20, 1)
        data = path.read_bytes()
        body = memoryview(data)[HEADER_BYTES : HEADER_BYTES + header.capacity * row_bytes(header.dim)]
        out["crc_table_cpu_ms"], out["crc_table_wall_ms"] = _cpu_wall(
            lambda: body_crcs(body, header.capacity, header.dim))
        out["verify_damage_cpu_ms"], out["verify_damage_wall_ms"] = _cpu_wall(lambda: matrix_read.damage(db))
        assert matrix_read.damage(db) is None
        mapped = matrix_read.mapped_file(path, header.dim)  # a new mapping: nothing of it verified yet
        assert mapped is not None
        out["first_check_cpu_ms"], out["first_check_wall_ms"] = _cpu_wall(lambda: mapped.intact(header))
        assert mapped.verified == header, "the corpus's fresh matrix failed its CRCs"
        out["known_header_us"] = _cpu_wall(lambda: mapped.intact(header))[1] * 1000
        syncs: list[tuple[float, float]] = []
        rechecks: list[tuple[float, float]] = []
        row = db.query_one("SELECT chunk_id, vec FROM embeddings WHERE model = ? LIMIT 1", (EMBEDDER.space,))
        assert row is not None
        vec = np.frombuffer(row[1], dtype="<f4")
        for i in range(5):
            vec = (vec * np.float32(2.0 if i % 2 == 0 else 0.5)).astype("<f4")  # every cosine stays the same
            with db.atomic():
                db.execute("UPDATE embeddings SET vec = ? WHERE chunk_id = ?", (vec.tobytes(), row[0]))
            syncs.append(_cpu_wall(lambda: sync(db)))
            now_header = mapped.header()
            assert now_header is not None
            rechecks.append(_cpu_wall(functools.partial(mapped.intact, now_header)))
            assert mapped.verified == now_header
        out["one_row_sync_cpu_ms"] = statistics.median(c for c, _ in syncs)
        out["one_row_sync_wall_ms"] = statistics.median(w for _, w in syncs)
        out["one_row_recheck_cpu_ms"] = statistics.median(c for c, _ in rechecks)
        out["one_row_recheck_wall_ms"] = statistics.median(w for _, w in rechecks)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--crc", default=None, help="comma-separated copied corpora: measure the matrix CRCs only")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPUs; embedder {EMBEDDER.space}")
    if args.crc:
        for folder in args.crc.split(","):
            costs = crc_costs(Path(folder))
            print(json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in costs.items()}), flush=True)
        return
    for size in (int(s) for s in args.sizes.split(",")):
        result = run(size)
        print(json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in result.items()}), flush=True)


if __name__ == "__main__":
    main()
