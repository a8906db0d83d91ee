"""``sleep rebase`` on the LoCoMo store after new writes on main: wall time (issue 8 item 8, "Measure").

Stages, in this process through the core functions the CLI calls:

1. build: ``bench/import_sleep.py``'s ``measure`` — convert, import and index the LoCoMo turns (3,435 memories
   for ``--conversation all``), then one ``sleep run`` (not timed here; ``import_sleep.py`` reports it);
2. writes: ``--writes`` new memories (default 10) written to main one commit each, as an agent writes while the
   run waits for review (``store.writer.apply_batch`` per memory), then ``index.indexer.update``;
3. rebase: ``sleep.rebase.rebase_run`` with ``gate=None`` (the gate measures its own fixture corpus, whatever the
   store: its time is reported apart with ``--gate``) — replay of every phase commit in memory, listings and
   sitemap re-rendered in the integrity commit, report page re-rendered, branch moved;
4. merge: ``sleep.merge.merge_run`` (``gate=None``) must fast-forward; its time is reported too.

Usage::

    python bench/sleep_rebase.py                       # all turns, fake embedder, 10 writes
    python bench/sleep_rebase.py --conversation conv-26 --units observations   # 184 memories, seconds
    python bench/sleep_rebase.py --gate --out rebase.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from git_memhtml.embed.registry import get_embedder
from git_memhtml.errors import MemhtmlError, UsageError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.index.indexer import update
from git_memhtml.output import emit, log, table
from git_memhtml.sleep.landing.merge import merge_run
from git_memhtml.sleep.landing.rebase import rebase_run
from git_memhtml.store.ops import parse_op_stream
from git_memhtml.store.writer import apply_batch

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from timing import failure, load_script, scratch, write_json  # noqa: E402  (a script beside this one)

LOCOMO = BENCH_DIR.parent.parent / "shared" / "data" / "locomo" / "locomo-dev.json"
"""The LoCoMo dev set laid beside the project (as ``import_sleep.py`` finds it); never copied into it."""





def _clock() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def measure(*, root: Path, conversation: str, units: str, embed: str, writes: int, gate: bool,
            data: Path | None = None) -> dict[str, Any]:
    """Build the store and its run at ``root``, write ``writes`` memories on main, time rebase (and merge).

    Returns ``{"memories", "runId", "commitsReplayed", "regenerated", "build_s", "writes_s", "rebase_s",
    "gate_s" (or None), "merge_s", "fastForward"}``.

    Raises:
        UsageError: bad inputs (see ``import_sleep.measure``). MemhtmlError: the rebase or merge refused.
    """
    bench = load_script("import_sleep")
    started = time.perf_counter()
    built = bench.measure(data_path=data or LOCOMO, conversation=conversation, units=units,
                          embed=embed, root=root, now=bench.DEFAULT_NOW)
    build_s = time.perf_counter() - started
    run_id = built["sleep"]["run_id"]
    repo = GitRepo.discover(root)
    embedder = get_embedder(embed)
    db = IndexDB.for_repo(repo)
    try:
        started = time.perf_counter()
        for i in range(writes):
            op = {"op": "write", "title": f"Note written during review {i + 1}", "type": "semantic",
                  "body": f"While the run waited for review, the agent learned fact number {i + 1}."}
            result = apply_batch(repo, parse_op_stream(json.dumps(op) + "\n", source="bench"), now=_clock(),
                                 dedupe_view=bench._dedupe(db))
            if not result.ok:
                raise UsageError(f"write {i + 1} refused", hint="check the op")
        update(repo, db, embedder, now=_clock())
        writes_s = time.perf_counter() - started
        started = time.perf_counter()
        report = rebase_run(repo, db, run_id, gate=None, clock=_clock)
        rebase_s = time.perf_counter() - started
        gate_s = None
        if gate:
            from git_memhtml.eval.discriminate import gate as discrimination_gate  # noqa: PLC0415

            started = time.perf_counter()
            with tempfile.TemporaryDirectory(prefix="memhtml-gate-") as folder:
                discrimination_gate(workdir=Path(folder))
            gate_s = time.perf_counter() - started
        started = time.perf_counter()
        merged = merge_run(repo, db, run_id, gate=None, embedder=embedder, clock=_clock)
        merge_s = time.perf_counter() - started
    finally:
        db.close()
    return {
        "memories": built["throughput"]["memories"], "runId": run_id, "writes": writes,
        "commitsReplayed": len(report.commits), "regenerated": len(report.regenerated),
        "build_s": round(build_s, 3), "writes_s": round(writes_s, 3), "rebase_s": round(rebase_s, 3),
        "gate_s": None if gate_s is None else round(gate_s, 3), "merge_s": round(merge_s, 3),
        "fastForward": merged.merged, "mergeRefusal": merged.refusal,
    }


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sleep_rebase.py", description="sleep rebase time on LoCoMo after new writes")
    p.add_argument("--conversation", default="all", help="sample id (e.g. conv-26) or all (default)")
    p.add_argument("--units", choices=("turns", "observations"), default="turns")
    p.add_argument("--embed", choices=("fake", "wordllama", "off"), default="fake",
                   help="embedder of the store (default fake; the rebase embeds nothing)")
    p.add_argument("--writes", type=int, default=10, help="memories written on main after the run (default 10)")
    p.add_argument("--gate", action="store_true", help="also time the discrimination gate")
    p.add_argument("--data", type=Path, default=None, help=f"LoCoMo JSON (default {LOCOMO})")
    p.add_argument("--out", type=Path, default=None, help="also write the figures as JSON here")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Script entry: measure in a temporary folder, print a table, write ``--out``; refusals exit 1."""
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        with scratch(None, "memhtml-rebase-bench-") as folder:
            result = measure(root=folder / "memory", conversation=args.conversation, units=args.units,
                             embed=args.embed, writes=args.writes, gate=args.gate, data=args.data)
    except MemhtmlError as exc:
        log(failure(exc))
        return exc.exit_code
    emit(table(["figure", "value"], [[k, v] for k, v in result.items()]))
    write_json(args.out, result)
    return 0 if result["fastForward"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
