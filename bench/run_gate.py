"""The run gate on a synthetic 1k / 10k memory run: probe time, and the share spent building the base index
(issue 10 "Speed" and "Measure"; docs/gate.md §9).

``python bench/run_gate.py --sizes 1000,10000 --repeat 3 --cli 10000`` reuses (or builds) the corpora of
``bench/synth.py`` (``fake:hash@256``), clones each into ``/tmp/memhtml-bench/rungate-<size>`` with a copy of its
index (the user's index: it describes ``main``) and crafts there one finished run ``sleep/2026-01-16-<hex>``, cut
from ``main``, that changes 1.5 % of the memories the way sleep does (:func:`craft_run`), one phase commit each
with sleep's typed trailers (``Memhtml-Run``, ``Memhtml-Phase``, ``Memhtml-Counts``) in canonical order, the last
one ``report`` (a crafted run is reused: delete the folder to craft it again):

- ``dedup-merge``: a third of them is folded into its nearest neighbour on the base (the first other memory its
  claim ranks in the top k): archived with ``superseded-by`` → the keeper, the keeper given ``supersedes`` →
  the archive copy, ``updated`` stamped and the dropped memory's entity (a fold keeps the subject), a ``folded``
  journal line each;
- ``entity-resolution``: a third has its entity meta rewritten ``service:svcN`` → ``service:acme-svcN`` (a vendor
  prefix), one distinct entity value each; half of them journaled (``entity-renamed``), half not. All of them are
  lost: the unjournaled ones for want of a record, the journaled ones because the entity rule would never join the
  two names, so the journal line is an unbacked claim (docs/gate.md §9.2);
- ``confidence-decay``: the last third gets ``updated`` stamped;
- ``report``: the run's report page.

Measured per size, ``--repeat`` times each (medians printed, every sample kept in ``--out``), 500 claim probes
(``--probes``) and k 10:

a. ``reuse``: :func:`probe_commits` alone over the user's index (the base) and a tip index built once with
   ``build_commit_index`` (the merge case: main's index describes the base, the run worktree's the tip);
b. ``built``: :func:`probe_run` with no user index (forge CI, or a user without one): base build, tip build,
   probes, total, and the base build's share of the total;
c. ``cli`` (``--cli <size>``): ``git memhtml eval run <run> --json`` in a subprocess, its timing block and wall
   time. The CLI's ``fake`` embedder is ``fake:hash@1024``, not the corpus's 256 dimensions, so it builds both
   indexes (case b in another space).

Wall times are of a shared machine: each figure has its CPU seconds beside it (``process_time`` of this process, its
threads included; ``RUSAGE_CHILDREN`` for the CLI), which a loaded machine does not inflate as much.

Every verdict is checked against what the crafted run must give (:func:`check_verdict`): the entity rewrites,
journaled or not, are the only losses (entity family), the folds are explained, the claim family loses nothing and
explains the sampled folds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import synth
from synth import DIM, corpus
from timing import Stopwatch, loadavg

from git_memhtml.document.editors import get_metas
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.index.probe_rows import claim_candidates, texts_of
from git_memhtml.index.snapshot import build_commit_index
from git_memhtml.sleep.engine.journal import EntityRenamed, Folded, JournalEntry, render_entry
from git_memhtml.sleep.engine.runfiles import journal_file, report_path
from git_memhtml.sleep.probes.gate import ProbeSettings, probe_commits, probe_run, run_instant
from git_memhtml.sleep.probes.ranker import Ranker, query_vectors
from git_memhtml.sleep.probes.sample import probe_sample
from git_memhtml.store import edits

EMBEDDER = FakeEmbedder(dim=DIM)
RUN_DATE = "2026-01-16"
"""The crafted run's date: the day after the corpus's write instant (bench/synth.py ``NOW``)."""
AT = f"{RUN_DATE}T00:00:00Z"
"""What the run stamps as ``updated`` / ``archived`` (a run stamps its own date at midnight UTC)."""
SHARE = 0.015
"""Memories the crafted run changes (1.5 %), split in three equal parts: folds, entity rewrites, stamps."""
TARGET_S = 30.0
"""Issue 10 "Speed": 500 probes on a 10k-memory run in at most 30 s, base index build excluded."""


def run_id_of(size: int) -> str:
    """The crafted run's id at ``size``: ``sleep/<RUN_DATE>-<size in hex, 6 digits>``."""
    return f"sleep/{RUN_DATE}-{size:06x}"


@dataclass
class CraftedRun:
    """One crafted run and what it changed (tree paths of the base)."""

    size: int
    run_id: str
    base: str
    tip: str
    folds: dict[str, str]
    """dropped memory → its keeper."""
    journaled: list[str]
    """memories whose entity was rewritten, with an ``entity-renamed`` line."""
    silent: list[str]
    """memories whose entity was rewritten with no journal line (each loses its entity probe)."""
    stamped: list[str]
    craft_s: float


def _phase(repo: GitRepo, run_id: str, phase: str, subject: str, counts: dict[str, int]) -> None:
    sha = repo.commit(f"memhtml(sleep({phase})): {subject}", trailers=[
        ("Memhtml-Run", run_id), ("Memhtml-Phase", phase),
        ("Memhtml-Counts", json.dumps(counts, separators=(",", ":")))])
    if sha is None:
        raise SystemExit(f"error: phase {phase} of {run_id} changed nothing\nhint: rm -rf the rungate folder")


def _journal(repo: GitRepo, run_id: str, entries: list[JournalEntry]) -> None:
    path = journal_file(run_id)
    file = repo.root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    old = file.read_text(encoding="utf-8") if file.is_file() else ""
    file.write_text(old + "".join(render_entry(e) + "\n" for e in entries), encoding="utf-8")
    repo.stage([path])


def _entity(repo: GitRepo, path: str) -> str:
    return get_metas((repo.root / path).read_text(encoding="utf-8"), "entity")[0]


def _pick(size: int, base_db: IndexDB, rng: random.Random) -> tuple[dict[str, str], list[str], list[str]]:
    """(folds drop → keeper, entity rewrites, stamps): disjoint memories, each rewrite on its own entity value,
    a keeper the drop's claim ranks in the top k of the base (its nearest neighbour)."""
    part = max(2, round(size * SHARE / 3))
    paths = [c.path for c in claim_candidates(base_db)]
    rng.shuffle(paths)
    used: set[str] = set()
    ranker = Ranker.open(base_db, EMBEDDER, now=AT, k=10)
    folds: dict[str, str] = {}
    claims = {p: claim for p, (claim, _) in texts_of(base_db, paths[:part * 3]).items()}
    vectors, _ = query_vectors(EMBEDDER, list(claims.values()))
    for drop in paths[:part * 3]:
        if len(folds) == part:
            break
        if drop in used:
            continue
        keeper = next((p for p in ranker.ranked(claims[drop], vectors[claims[drop]])
                       if p != drop and p not in used), None)
        if keeper is not None:
            folds[drop] = keeper
            used.update((drop, keeper))
    rest = [p for p in paths if p not in used]
    return folds, rest[:part], rest[part:2 * part]


def craft_run(root: Path, size: int, base_db: IndexDB) -> CraftedRun:
    """Cut ``run_id_of(size)`` from ``main`` in ``root`` and commit the phases of the module docstring in a linked
    worktree (removed afterwards). Deterministic for a size."""
    started = time.perf_counter()
    repo = GitRepo.discover(root)
    run_id = run_id_of(size)
    base = repo.commit_sha("main")
    folds, rewrites, stamped = _pick(size, base_db, random.Random(size))
    repo.create_branch(run_id, base)
    work = repo.add_worktree("rungate-craft", root.parent / f"{root.name}-craft", run_id)
    # one entity value per rewrite: drop rewrites whose value another rewrite already takes
    seen: set[str] = set()
    distinct = []
    for path in rewrites:
        value = _entity(work, path)
        if value not in seen:
            seen.add(value)
            distinct.append(path)
    rewrites = distinct
    journaled, silent = rewrites[: len(rewrites) // 2], rewrites[len(rewrites) // 2:]

    entries: list[JournalEntry] = []
    for drop, keep in sorted(folds.items()):
        value = _entity(work, drop)
        archived = edits.archive_file(work, drop, at=AT, extra=[edits.set_meta("superseded-by", "/" + keep)])
        assert archived is not None, drop
        edits.stamp_file(work, keep, [edits.link("supersedes", "/" + archived), edits.set_meta("updated", AT),
                                      edits.add_meta("entity", value)])
        entries.append(Folded(keep=keep, drop=drop, archived=archived))
    _journal(work, run_id, entries)
    _phase(work, run_id, "dedup-merge", f"fold {len(folds)} near-duplicates into canonicals", {"merged": len(folds)})

    renamed: list[JournalEntry] = []
    for path in rewrites:
        old = _entity(work, path)
        kind, name = old.split(":", 1)
        edits.stamp_file(work, path, [edits.remove_meta("entity", old), edits.add_meta("entity", f"{kind}:acme-{name}"),
                                      edits.set_meta("updated", AT)], stage=False)
        if path in journaled:
            renamed.append(EntityRenamed(entity_type=kind, old=name, new=f"acme-{name}"))
    work.stage(rewrites)
    _journal(work, run_id, renamed)
    _phase(work, run_id, "entity-resolution", f"normalize {len(rewrites)} entity names, merge 0 aliases",
           {"renamed": len(rewrites), "filesRewritten": len(rewrites)})

    for path in stamped:
        edits.stamp_file(work, path, [edits.set_meta("updated", AT)], stage=False)
    work.stage(stamped)
    _phase(work, run_id, "confidence-decay", f"decay {len(stamped)} memories", {"decayed": len(stamped)})

    page = work.root / report_path(run_id)
    page.write_text(f"<!doctype html><title>{run_id}</title><p>crafted by bench/run_gate.py</p>\n", encoding="utf-8")
    work.stage([report_path(run_id)])
    _phase(work, run_id, "report", f"record run {run_id}", {"phases": 17, "committed": 4})
    tip = work.commit_sha("HEAD")
    repo.remove_worktree("rungate-craft")
    return CraftedRun(size, run_id, base, tip, dict(sorted(folds.items())), journaled, silent, stamped,
                      time.perf_counter() - started)


def prepared(size: int) -> tuple[Path, CraftedRun]:
    """``(clone root, crafted run)`` at ``size``, cached in ``synth.CACHE/rungate-<size>`` (``crafted.json``)."""
    source = corpus(size, log=False)
    root = synth.CACHE / f"rungate-{size}"
    marker = root / ".git" / "memhtml" / "crafted.json"
    if marker.is_file():
        return root, CraftedRun(**json.loads(marker.read_text(encoding="utf-8")))
    if root.exists():
        shutil.rmtree(root)
        shutil.rmtree(root.parent / f"{root.name}-craft", ignore_errors=True)
    subprocess.run(["git", "clone", "-q", "--local", str(source), str(root)], check=True)
    (root / ".git" / "memhtml").mkdir(parents=True, exist_ok=True)
    for name in ("index.db", "state.db"):
        shutil.copyfile(source / ".git" / "memhtml" / name, root / ".git" / "memhtml" / name)
    repo = GitRepo.discover(root)
    with IndexDB.for_repo(repo) as db:
        crafted = craft_run(root, size, db)
    marker.write_text(json.dumps(asdict(crafted)), encoding="utf-8")
    return root, crafted


def expected(crafted: CraftedRun, root: Path, probes: int) -> dict[str, dict[str, int]]:
    """``{family: {"lost", "explained"}}`` the crafted run must give with ``probes`` claim probes."""
    with IndexDB.for_repo(GitRepo.discover(root)) as db:
        touched = set(crafted.folds)  # the folded memories leave the live tree; rewrites and stamps keep the article
        sample = {c.path for c in probe_sample(claim_candidates(db), touched, crafted.run_id, probes)}
    return {
        "claim": {"lost": 0, "explained": len(sample & set(crafted.folds))},
        "entity": {"lost": len(crafted.silent) + len(crafted.journaled), "explained": len(crafted.folds)},
    }


def check_verdict(verdict: dict[str, Any], want: dict[str, dict[str, int]], crafted: CraftedRun) -> list[str]:
    """Differences between a verdict's JSON and :func:`expected` (``[]`` = as the crafted run must give)."""
    out = []
    for family, figures in want.items():
        got = verdict["families"][family]
        for name, value in figures.items():
            if got[name] != value:
                out.append(f"{family} {name}: {got[name]}, expected {value}")
    lost = sorted(m["path"] for m in verdict["lost"])
    if lost != sorted([*crafted.silent, *crafted.journaled]):
        out.append(f"lost paths {lost[:3]}… are not the rewrites")
    if any(m["phases"] != ["entity-resolution"] for m in verdict["lost"]):
        out.append("a lost memory is not attributed to entity-resolution alone")
    return out


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def measure(size: int, repeat: int, probes: int, k: int, cli: bool) -> dict[str, Any]:
    """The figures of one size (module docstring)."""
    root, crafted = prepared(size)
    repo = GitRepo.discover(root)
    settings = ProbeSettings(sample_size=probes, k=k)
    want = expected(crafted, root, probes)
    out: dict[str, Any] = {"size": size, "runId": crafted.run_id, "changed": {
        "folds": len(crafted.folds), "journaledRewrites": len(crafted.journaled),
        "silentRewrites": len(crafted.silent), "stamped": len(crafted.stamped)},
        "craft_s": round(crafted.craft_s, 3), "expected": want, "problems": []}
    now = run_instant(crafted.run_id, AT)
    with tempfile.TemporaryDirectory(prefix="memhtml-rungate-") as folder, IndexDB.for_repo(repo) as main_db:
        watch = Stopwatch()
        tip_db = build_commit_index(repo, crafted.tip, Path(folder) / "tip", EMBEDDER, now=now)
        out["tipBuildOnce_s"] = round(watch.wall(), 3)
        try:
            reuse, reuse_cpu = [], []
            for _ in range(repeat):
                watch = Stopwatch()
                verdict = probe_commits(repo, crafted.run_id, crafted.base, crafted.tip, base=main_db, tip=tip_db,
                                        embedder=EMBEDDER, settings=settings)
                reuse.append(watch.wall())
                reuse_cpu.append(watch.cpu())
                out["problems"] += [f"reuse: {p}" for p in check_verdict(verdict.as_json(), want, crafted)]
        finally:
            tip_db.close()
        out["reuse_probe_s"] = {"median": _median(reuse), "cpuMedian": _median(reuse_cpu),
                                "samples": [round(s, 3) for s in reuse]}
        out["verdict"] = {"passed": verdict.passed, "lostCount": verdict.lost_count,
                          "families": verdict.as_json()["families"]}
    built: list[dict[str, float]] = []
    for _ in range(repeat):
        watch = Stopwatch()
        report = probe_run(repo, None, crafted.run_id, embedder=EMBEDDER, settings=settings, base_sha=crafted.base,
                           tip_sha=crafted.tip)
        total, cpu = watch.wall(), watch.cpu()
        timing = report.timing
        assert timing["baseIndex"]["source"] == timing["tipIndex"]["source"] == "built", timing
        built.append({"total": total, "base": timing["baseIndex"]["seconds"], "tip": timing["tipIndex"]["seconds"],
                      "probes": timing["probeSeconds"], "cpu": cpu})
        out["problems"] += [f"built: {p}" for p in check_verdict(report.verdict.as_json(), want, crafted)]
    out["built_s"] = {key: _median([b[key] for b in built]) for key in ("total", "base", "tip", "probes", "cpu")}
    out["built_s"]["baseShare"] = round(statistics.median(b["base"] / b["total"] for b in built), 3)
    out["built_s"]["samples"] = [{key: round(v, 3) for key, v in b.items()} for b in built]
    if cli:
        out["cli"] = measure_cli(root, crafted, repeat, probes, k)
    return out


def measure_cli(root: Path, crafted: CraftedRun, repeat: int, probes: int, k: int) -> dict[str, Any]:
    """``git memhtml eval run <run> --json`` ``repeat`` times: medians of wall time and of its timing block."""
    env = {**os.environ, "MEMHTML_EMBED": "fake"}
    samples = []
    verdict: dict[str, Any] = {}
    for _ in range(repeat):
        t, c = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run([sys.executable, "-m", "git_memhtml", "-C", str(root), "eval", "run", crafted.run_id,
                               "--probes", str(probes), "--k", str(k), "--json"],
                              capture_output=True, text=True, env=env, check=False)
        wall, after = time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - c.ru_utime - c.ru_stime
        if done.returncode not in (0, 1):
            raise SystemExit(f"error: eval run exited {done.returncode}: {done.stderr[-2000:]}")
        data = json.loads(done.stdout)["data"]
        timing, verdict = data["timing"], data["verdict"]
        samples.append({"wall": wall, "cpu": cpu, "base": timing["baseIndex"]["seconds"],
                        "tip": timing["tipIndex"]["seconds"], "probes": timing["probeSeconds"], "exit": done.returncode,
                        "sources": f"{timing['baseIndex']['source']}/{timing['tipIndex']['source']}"})
    out: dict[str, Any] = {key: _median([s[key] for s in samples]) for key in ("wall", "cpu", "base", "tip", "probes")}
    out["baseShare"] = round(statistics.median(s["base"] / s["wall"] for s in samples), 3)
    out["exit"] = samples[-1]["exit"]
    out["sources"] = samples[-1]["sources"]
    out["space"] = verdict["space"]
    out["lostCount"] = verdict["lostCount"]
    out["families"] = verdict["families"]
    out["samples"] = [{key: round(v, 3) if isinstance(v, float) else v for key, v in s.items()} for s in samples]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--probes", type=int, default=500)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--cli", type=int, default=None, help="also time `git memhtml eval run` at this size")
    parser.add_argument("--out", type=Path, default=None, help="write every figure as JSON here")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} CPUs, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; embedder "
          f"{EMBEDDER.space}", file=sys.stderr)
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        result = measure(size, args.repeat, args.probes, args.k, args.cli == size)
        result["load"] = loadavg()
        results.append(result)
        print(json.dumps({key: v for key, v in result.items() if key not in ("expected",)}), flush=True)
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    problems = [p for r in results for p in r["problems"]]
    for problem in problems:
        print(f"verdict check: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
