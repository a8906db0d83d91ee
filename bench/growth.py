"""Growth table (issue 12 "Targets"): each operation at several corpus sizes, with its growth exponent.

``python bench/growth.py --sizes 1000,10000,100000 --out growth.json`` times every operation below on a copy of
``bench/synth.py``'s corpus of each size (``/tmp/memhtml-bench/corpus-<n>``, built on first use, never modified:
it is copied to ``--workdir`` first and the copy removed afterwards), then prints one table: a row per figure, a
column per size and the growth exponent ``k`` (time ∝ n^k: the least-squares slope of ``log t`` on ``log n``
over the sizes measured). A time figure with ``k > 1.1`` is flagged ``!``.

Operations (``--ops`` takes a comma-separated subset; they always run in this order, because ``rebuild`` moves
the copy's index from the corpus's embedding space ``fake:hash@256`` to the CLI's):

- ``version``: ``git memhtml --version`` (a new process; median of 5, wall and CPU);
- ``search``: ``retrieval.search`` in process (default scope, limit 10, no MMR, as the bench of issue 4) with
  ``fake:hash@256``; p50 / p95 over ``--queries`` corpus-like queries after 3 warm-ups, and the first query;
- ``update``: a one-file commit (a new claim in one memory), then ``indexer.update`` in process (median of 5,
  ``update_inproc_ms``); then the same commit caught up as the post-commit hook does it,
  ``indexer.update(worktree=False)`` (``update_post_commit_ms``: the commit's delta, no work-tree status,
  docs/hooks.md "Deferred work-tree status"), and the next reader's full pass after it (``update_reader_ms``);
- ``hook``: ``git commit`` of one new memory with the post-commit hook in the foreground
  (``MEMHTML_HOOK_DETACH=0``), against a plain ``git commit`` (``core.hooksPath`` → an empty folder), median of 3;
  the hook's own pass time is read from ``hooks.log``;
- ``apply``: import + index from scratch: ``git memhtml init`` then ``git memhtml apply --file`` of the ``n``
  synthetic ops of ``synth.op`` (the same memories as the corpus), one process (``apply`` indexes its commit);
- ``rebuild``: ``git memhtml index rebuild``;
- ``search-wordllama``: as ``search`` with wordllama (only with ``--embed wordllama``, after ``rebuild``);
- ``cli-search``: ``git memhtml search QUERY --json`` in a new process: one untimed call, then :data:`CLI_SEARCH_RUNS`
  timed ones over the next queries in turn; median and minimum of wall and of CPU (user + sys);
- ``validate``: ``git memhtml validate`` of the whole tree;
- ``sleep``: ``sleep run --date`` (default 2026-02-01, two weeks after the corpus instant) in a child process
  running the same ``run_sleep`` the CLI calls; wall, CPU and peak RSS; ``--phase-table`` prints its phases;
- ``worktree``: a linked worktree of HEAD is added (``GitRepo.add_worktree``) then removed
  (``GitRepo.remove_worktree``, what a sleep run's teardown does).

A new process is measured with ``os.wait4``: wall seconds, CPU (user + system of the process and the children it
waited for) and peak RSS (``ru_maxrss``). The CLI runs with ``MEMHTML_EMBED`` = ``fake`` (``fake:hash@1024``) or,
with ``--embed wordllama``, ``wordllama``; the copy's index is moved into that space by ``rebuild`` (or by an
untimed rebuild when ``rebuild`` is not selected) before the first CLI operation that reads vectors. Figures are
wall-clock on whatever machine runs them: the load average is recorded around every operation.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import import_sleep  # noqa: E402  (scripts beside this one)
import synth  # noqa: E402

from git_memhtml.document.draft import MemoryDraft  # noqa: E402
from git_memhtml.document.template import render_memory  # noqa: E402
from git_memhtml.embed.base import Embedder  # noqa: E402
from git_memhtml.embed.fake import FakeEmbedder  # noqa: E402
from git_memhtml.embed.registry import get_embedder  # noqa: E402
from git_memhtml.gitrepo import GitRepo  # noqa: E402
from git_memhtml.index import indexer  # noqa: E402
from git_memhtml.index.db import IndexDB  # noqa: E402
from git_memhtml.index.retrieval import search  # noqa: E402
from git_memhtml.sleep.engine.run import run_sleep  # noqa: E402

OPS = ("version", "search", "update", "apply", "rebuild", "search-wordllama", "hook", "cli-search", "validate",
       "sleep", "worktree")
CORPUS_SPACE = f"fake:hash@{synth.DIM}"
"""The embedding space ``bench/synth.py`` indexes its corpora in."""
FLAG_K = 1.1
"""Issue 12: an operation whose time grows faster than n^1.1 is explained or fixed."""
DEFAULT_DATE = "2026-02-01"
"""The sleep run date: two weeks after ``synth.NOW`` (2026-01-15), so confidence-decay has a due step."""
EDIT_PATH_INDEX = 3
"""The memory the ``update`` and ``hook`` operations edit: ``synth.memory_path(EDIT_PATH_INDEX)``."""


# --- measuring ----------------------------------------------------------------------------------------------


def loadavg() -> float:
    """The 1-minute load average (0.0 where the OS has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return 0.0


@dataclass(frozen=True)
class Proc:
    """One finished child process: ``wall_s`` seconds, ``cpu_s`` user + system seconds (its own and its
    waited-for children's), ``rss_mib`` peak resident set (MiB), ``code`` exit code, ``out``/``err`` text."""

    wall_s: float
    cpu_s: float
    rss_mib: float
    code: int
    out: str
    err: str


def run_proc(cmd: Sequence[str], *, cwd: Path, env: dict[str, str]) -> Proc:
    """Run ``cmd`` and measure it with ``os.wait4`` (stdout and stderr go through temporary files so that the
    wait is ours)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(list(cmd), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Proc(wall, usage.ru_utime + usage.ru_stime, round(usage.ru_maxrss / 1024, 1), child.returncode,
                    out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"))


def checked(proc: Proc, what: str) -> Proc:
    """``proc`` if it exited 0, else :class:`SystemExit` naming ``what`` with its stderr."""
    if proc.code != 0:
        raise SystemExit(f"error: {what} exited {proc.code}\n{proc.err.strip()[-2000:]}\n"
                         "hint: run the same command by hand in the copy (--keep keeps it)")
    return proc


def pct(values: Sequence[float], q: float) -> float:
    """``q``-quantile (0..1) of ``values`` by nearest rank, in their unit."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def exponent(points: Sequence[tuple[int, float]]) -> float | None:
    """Least-squares slope of ``log t`` on ``log n`` over ``(n, t)`` points with ``t > 0``; ``None`` with fewer
    than two distinct sizes."""
    pts = [(math.log(n), math.log(t)) for n, t in points if t > 0 and n > 0]
    if len({x for x, _ in pts}) < 2:
        return None
    mx = statistics.fmean(x for x, _ in pts)
    my = statistics.fmean(y for _, y in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)


# --- context --------------------------------------------------------------------------------------------------


@dataclass
class Ctx:
    """One size's run: ``root`` the corpus copy, ``space`` the embedding space its index holds now, ``env`` the
    CLI's environment, ``figures`` ``{figure: value}`` and ``notes`` what each operation saw."""

    size: int
    root: Path
    work: Path
    cli_embed: str
    env: dict[str, str]
    queries: list[str]
    date: str
    query_count: int
    space: str = CORPUS_SPACE
    figures: dict[str, float] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)

    def cli(self, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> Proc:
        return run_proc([*git_memhtml_cmd(), *args], cwd=cwd or self.root, env=env or self.env)


def git_memhtml_cmd() -> list[str]:
    """``git memhtml`` as a user types it (git finds ``git-memhtml`` on the PATH :func:`cli_env` sets)."""
    return ["git", "memhtml"]


def cli_env(embed: str) -> dict[str, str]:
    """The environment of every CLI child: this interpreter's ``bin`` first on PATH (the console scripts, not a
    version manager's shim), the embedder, a fixed identity, hooks off unless an operation turns them on."""
    bindir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""), "MEMHTML_EMBED": embed,
            "MEMHTML_HOOK_DETACH": "0", "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
            "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}


def cli_space(embed: str) -> str:
    """The embedding space the CLI's embedder ``embed`` writes (``fake`` is 1,024 dims there)."""
    embedder = get_embedder(embed)
    return embedder.space if embedder is not None else "off"


def ensure_cli_space(ctx: Ctx) -> None:
    """Move the copy's index into the CLI's space with an untimed ``index rebuild`` (once)."""
    wanted = cli_space(ctx.cli_embed)
    if ctx.space != wanted:
        checked(ctx.cli("index", "rebuild"), "git memhtml index rebuild (preparation)")
        ctx.space = wanted
        ctx.notes.setdefault("prepared", []).append(f"untimed index rebuild into {wanted}")


def embedder_for(space: str, cli_embed: str) -> Embedder | None:
    """The embedder whose space is ``space``: the corpus's ``fake:hash@256`` or the CLI's."""
    if space == CORPUS_SPACE:
        return FakeEmbedder(dim=synth.DIM)
    return get_embedder(cli_embed)


# --- operations -----------------------------------------------------------------------------------------------


def op_version(ctx: Ctx) -> None:
    procs = [checked(ctx.cli("--version"), "git memhtml --version") for _ in range(5)]
    ctx.figures["version_ms"] = statistics.median(p.wall_s for p in procs) * 1000
    ctx.figures["version_cpu_ms"] = statistics.median(p.cpu_s for p in procs) * 1000


def _search(ctx: Ctx, embedder: Embedder | None, prefix: str) -> None:
    repo = GitRepo.discover(ctx.root)
    with IndexDB.for_repo(repo) as db:
        t = time.perf_counter()
        search(db, ctx.queries[0], embedder=embedder, now=synth.NOW)
        first = time.perf_counter() - t
        for q in ctx.queries[1:4]:
            search(db, q, embedder=embedder, now=synth.NOW)
        times = []
        for q in ctx.queries[4:4 + ctx.query_count]:
            t = time.perf_counter()
            search(db, q, embedder=embedder, now=synth.NOW)
            times.append(time.perf_counter() - t)
    ctx.figures[f"{prefix}_first_ms"] = first * 1000
    ctx.figures[f"{prefix}_p50_ms"] = pct(times, 0.5) * 1000
    ctx.figures[f"{prefix}_p95_ms"] = pct(times, 0.95) * 1000


def op_search(ctx: Ctx) -> None:
    if ctx.space != CORPUS_SPACE:
        ctx.notes["search"] = f"skipped: the copy's index is in {ctx.space}"
        return
    _search(ctx, FakeEmbedder(dim=synth.DIM), "search_fake")


def op_search_wordllama(ctx: Ctx) -> None:
    if ctx.cli_embed != "wordllama":
        ctx.notes["search-wordllama"] = "skipped: pass --embed wordllama"
        return
    ensure_cli_space(ctx)
    _search(ctx, get_embedder("wordllama"), "search_wordllama")


def _edit(ctx: Ctx, rep: int) -> str:
    """Write a new version of the edited memory (a fresh claim) and return its path."""
    path = synth.memory_path(EDIT_PATH_INDEX)
    stamp = f"{rep} {time.time_ns()}"
    html = render_memory(MemoryDraft(title=f"Edited memory {stamp}", memory_type="semantic",
                                     claim=f"Edited claim number {stamp}."), now=synth.NOW)
    (ctx.root / path).write_text(html, encoding="utf-8")
    return path


def op_update(ctx: Ctx) -> None:
    repo = GitRepo.discover(ctx.root)
    embedder = embedder_for(ctx.space, ctx.cli_embed)
    times = []
    with IndexDB.for_repo(repo) as db:
        indexer.update(repo, db, embedder, now=synth.NOW)
        for rep in range(5):
            path = _edit(ctx, rep)
            repo.stage([path])
            repo.commit(f"bench: edit {path}")
            t = time.perf_counter()
            report = indexer.update(repo, db, embedder, now=synth.NOW)
            times.append(time.perf_counter() - t)
            if report.errors:
                raise SystemExit(f"error: update of {path} reported {report.errors[:1]}")
        deferred, readers = [], []
        for rep in range(5):
            path = _edit(ctx, 10 + rep)
            repo.stage([path])
            repo.commit(f"bench: edit {path}")
            t = time.perf_counter()
            report = indexer.update(repo, db, embedder, now=synth.NOW, worktree=False)
            deferred.append(time.perf_counter() - t)
            t = time.perf_counter()
            indexer.update(repo, db, embedder, now=synth.NOW)
            readers.append(time.perf_counter() - t)
            if report.errors:
                raise SystemExit(f"error: post-commit update of {path} reported {report.errors[:1]}")
    ctx.figures["update_inproc_ms"] = statistics.median(times) * 1000
    ctx.figures["update_post_commit_ms"] = statistics.median(deferred) * 1000
    ctx.figures["update_reader_ms"] = statistics.median(readers) * 1000


def _hook_log_seconds(root: Path) -> float | None:
    """The ``(<seconds>)`` of the last ``post-commit`` line of ``hooks.log`` (docs/hooks.md), if any."""
    log = root / ".git" / "memhtml" / "hooks.log"
    lines = [ln for ln in log.read_text(encoding="utf-8").splitlines() if " post-commit " in ln] if log.exists() else []
    if not lines or not lines[-1].endswith("s)"):
        return None
    try:
        return float(lines[-1].rsplit("(", 1)[1].rstrip("s)"))
    except ValueError:
        return None


def op_hook(ctx: Ctx) -> None:
    ensure_cli_space(ctx)
    checked(ctx.cli("install"), "git memhtml install")
    empty = ctx.work / "no-hooks"
    empty.mkdir(exist_ok=True)
    hooked: list[float] = []
    plain: list[float] = []
    passes: list[float] = []
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    for rep in range(3):
        for mode in ("plain", "hooked"):
            path = _edit(ctx, rep)
            checked(run_proc(["git", "add", path], cwd=ctx.root, env=ctx.env), "git add")
            cmd = [*git, *(["-c", f"core.hooksPath={empty}"] if mode == "plain" else []), "commit", "-qm",
                   f"bench: {mode} edit"]
            proc = checked(run_proc(cmd, cwd=ctx.root, env=ctx.env), f"git commit ({mode})")
            (hooked if mode == "hooked" else plain).append(proc.wall_s)
            if mode == "hooked" and (seconds := _hook_log_seconds(ctx.root)) is not None:
                passes.append(seconds)
    status = checked(ctx.cli("index", "status", "--json"), "git memhtml index status")
    ctx.notes["hook"] = {"index_status": json.loads(status.out).get("data", {})}
    ctx.figures["hook_commit_ms"] = statistics.median(hooked) * 1000
    ctx.figures["plain_commit_ms"] = statistics.median(plain) * 1000
    ctx.figures["hook_added_ms"] = (statistics.median(hooked) - statistics.median(plain)) * 1000
    if passes:
        ctx.figures["hook_pass_ms"] = statistics.median(passes) * 1000


def op_apply(ctx: Ctx) -> None:
    folder = ctx.work / "apply"
    stream = ctx.work / "ops.jsonl"
    with stream.open("w", encoding="utf-8") as out:
        for i in range(ctx.size):
            out.write(json.dumps(synth.op(i)) + "\n")
    checked(ctx.cli("init", str(folder), cwd=ctx.work), "git memhtml init")
    proc = checked(ctx.cli("apply", "--file", str(stream), "--json", cwd=folder), "git memhtml apply")
    summary = json.loads(proc.out)["data"]["summary"]
    if summary["written"] != ctx.size:
        raise SystemExit(f"error: apply wrote {summary['written']} of {ctx.size} ops\nhint: {summary}")
    ctx.figures.update(apply_wall_s=proc.wall_s, apply_cpu_s=proc.cpu_s, apply_rss_mib=proc.rss_mib)
    shutil.rmtree(folder)
    stream.unlink()


def op_rebuild(ctx: Ctx) -> None:
    proc = checked(ctx.cli("index", "rebuild"), "git memhtml index rebuild")
    ctx.space = cli_space(ctx.cli_embed)
    ctx.figures.update(rebuild_wall_s=proc.wall_s, rebuild_cpu_s=proc.cpu_s, rebuild_rss_mib=proc.rss_mib)


CLI_SEARCH_RUNS = 9
"""Timed cold searches of ``cli-search`` (the issue-12 measuring rule: min and median of 9 after one warm-up)."""


def op_cli_search(ctx: Ctx) -> None:
    ensure_cli_space(ctx)
    checked(ctx.cli("search", ctx.queries[0], "--json"), "git memhtml search (warm-up)")
    others = ctx.queries[1:] or ctx.queries
    procs = [checked(ctx.cli("search", others[i % len(others)], "--json"), "git memhtml search")
             for i in range(CLI_SEARCH_RUNS)]
    ctx.figures["cli_search_ms"] = statistics.median(p.wall_s for p in procs) * 1000
    ctx.figures["cli_search_min_ms"] = min(p.wall_s for p in procs) * 1000
    ctx.figures["cli_search_cpu_ms"] = statistics.median(p.cpu_s for p in procs) * 1000
    ctx.figures["cli_search_min_cpu_ms"] = min(p.cpu_s for p in procs) * 1000
    ctx.figures["cli_search_rss_mib"] = max(p.rss_mib for p in procs)


def op_validate(ctx: Ctx) -> None:
    proc = checked(ctx.cli("validate"), "git memhtml validate")
    ctx.figures.update(validate_wall_s=proc.wall_s, validate_cpu_s=proc.cpu_s, validate_rss_mib=proc.rss_mib)


def op_sleep(ctx: Ctx) -> None:
    embed = "corpus" if ctx.space == CORPUS_SPACE else ctx.cli_embed
    out = ctx.work / "sleep.json"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--sleep-child", str(ctx.root), "--date", ctx.date,
           "--child-embed", embed, "--out", str(out)]
    proc = checked(run_proc(cmd, cwd=ctx.root, env=ctx.env), "sleep run (child)")
    result = json.loads(out.read_text(encoding="utf-8"))
    ctx.figures.update(sleep_wall_s=proc.wall_s, sleep_cpu_s=proc.cpu_s, sleep_rss_mib=proc.rss_mib,
                       sleep_teardown_s=result["sleep"]["teardown_s"])
    ctx.notes["sleep"] = {"run_id": result["sleep"]["run_id"], "failed": result["sleep"]["failed"],
                          "commits": result["sleep"]["commits"], "embed": embed, "phases": result["sleep"]["phases"]}
    if result["sleep"]["failed"]:
        raise SystemExit(f"error: sleep run failed phases {result['sleep']['failed']}")


def op_worktree(ctx: Ctx) -> None:
    repo = GitRepo.discover(ctx.root)
    head = repo.head_sha()
    assert head is not None
    branch, name = "bench/growth-worktree", "bench-growth-worktree"
    repo.create_branch(branch, head)
    t = time.perf_counter()
    repo.add_worktree(name, repo.common_dir / "memhtml" / "worktrees" / name, branch)
    added = time.perf_counter() - t
    t = time.perf_counter()
    repo.remove_worktree(name)
    ctx.figures["worktree_add_s"] = added
    ctx.figures["worktree_remove_s"] = time.perf_counter() - t


OPERATIONS: dict[str, Callable[[Ctx], None]] = {
    "version": op_version, "search": op_search, "update": op_update, "hook": op_hook, "apply": op_apply,
    "rebuild": op_rebuild, "search-wordllama": op_search_wordllama, "cli-search": op_cli_search,
    "validate": op_validate, "sleep": op_sleep, "worktree": op_worktree,
}
NEEDS_COPY = frozenset(OPS) - {"apply"}


# --- the sleep child -------------------------------------------------------------------------------------------


def sleep_child(root: Path, date: str, embed: str, out: Path) -> int:
    """Run ``run_sleep`` on ``root`` at ``date`` as ``git memhtml sleep run`` does, with ``bench/import_sleep.py``'s
    phase timer, and write its ``sleep`` figures as JSON to ``out``. ``embed`` ``corpus`` is ``fake:hash@256``."""
    repo = GitRepo.discover(root)
    embedder = FakeEmbedder(dim=synth.DIM) if embed == "corpus" else get_embedder(embed)
    with import_sleep.RssSampler(0.01) as sampler, IndexDB.for_repo(repo) as db:
        timer = import_sleep.PhaseTimer(sampler, f"{date}T09:00:00Z")
        started = sampler.mark()[0]
        report = run_sleep(repo, db, date=date, embedder=embedder, clock=timer.clock, after_phase=timer.after_phase)
        ended = sampler.mark()[0]
    phases = [import_sleep._close(sampler, w) for w in timer.windows]
    last = timer.windows[-1].end if timer.windows else started
    first = timer.windows[0].start if timer.windows else ended
    result = {"sleep": {"run_id": report.run_id, "wall_s": ended - started, "setup_s": first - started,
                        "teardown_s": ended - last, "failed": list(report.failed_phases),
                        "commits": len(report.commits),
                        "phases": [{"name": p.name, "status": p.status, "wall_s": p.wall_s, "cpu_s": p.cpu_s,
                                    "peak_rss_mib": p.peak_rss_mib} for p in phases]}}
    out.write_text(json.dumps(result), encoding="utf-8")
    return 0


# --- driver ------------------------------------------------------------------------------------------------------


def measure_size(size: int, ops: Sequence[str], *, work: Path, cli_embed: str, date: str, queries: int,
                 keep: bool) -> Ctx:
    """Run ``ops`` (in :data:`OPS` order) at ``size`` on a fresh copy of the corpus under ``work``."""
    folder = work / f"size-{size}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    rng = random.Random(size)
    ctx = Ctx(size, folder / "corpus", folder, cli_embed, cli_env(cli_embed),
              [synth.query(rng) for _ in range(4 + queries)], date, queries)
    try:
        if any(op in NEEDS_COPY for op in ops):
            source = synth.corpus(size)
            t = time.perf_counter()
            subprocess.run(["cp", "-a", str(source), str(ctx.root)], check=True)
            # the copy has new inodes: refresh git's stat cache, as a user's own checkout has it, or every
            # work-tree status re-hashes every file
            subprocess.run(["git", "-C", str(ctx.root), "update-index", "-q", "--refresh"], check=False)
            ctx.notes["copy_s"] = round(time.perf_counter() - t, 2)
        for op in OPS:
            if op in ops:
                before = loadavg()
                t = time.perf_counter()
                OPERATIONS[op](ctx)
                ctx.notes.setdefault("ops", {})[op] = {"s": round(time.perf_counter() - t, 2), "load": [before,
                                                                                                     loadavg()]}
                print(f"  {size:>7} {op:<17} {time.perf_counter() - t:8.2f} s  load {before} → {loadavg()}",
                      file=sys.stderr, flush=True)
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    return ctx


UNITS = {"_ms": "ms", "_s": "s", "_mib": "MiB"}


def unit_of(figure: str) -> str:
    return next(u for suffix, u in UNITS.items() if figure.endswith(suffix))


def table_of(sizes: Sequence[int], results: dict[str, dict[int, float]]) -> tuple[str, dict[str, float | None]]:
    """The growth table (markdown) and ``{figure: k}``; time figures with ``k > FLAG_K`` carry ``!``."""
    exps: dict[str, float | None] = {}
    head = ["figure", "unit", *[f"{n:,}" for n in sizes], "k"]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(["---"] * 2 + ["---:"] * (len(sizes) + 1)) + " |"]
    for figure, by_size in results.items():
        k = exponent(sorted(by_size.items()))
        exps[figure] = k
        unit = unit_of(figure)
        flag = " !" if k is not None and k > FLAG_K and unit != "MiB" else ""
        cells = [_fmt(by_size[n]) if n in by_size else "—" for n in sizes]
        lines.append(f"| {figure} | {unit} | " + " | ".join(cells) + f" | {'—' if k is None else f'{k:.2f}'}{flag} |")
    return "\n".join(lines), exps


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}" if value < 10 else f"{value:.1f}"


def main(argv: Sequence[str] | None = None) -> int:
    """Script entry: measure every size, print the table on stdout (progress on stderr), write ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated corpus sizes")
    parser.add_argument("--ops", default=",".join(OPS), help=f"comma-separated subset of {','.join(OPS)}")
    parser.add_argument("--embed", choices=("fake", "wordllama"), default="fake",
                        help="the CLI's embedder (wordllama also adds search-wordllama)")
    parser.add_argument("--date", default=DEFAULT_DATE, help=f"sleep run date (default {DEFAULT_DATE})")
    parser.add_argument("--queries", type=int, default=30, help="timed in-process queries (default 30)")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/memhtml-bench-growth"),
                        help="where the copies live (removed after each size)")
    parser.add_argument("--cache", type=Path, default=None, help=f"corpus cache (default {synth.CACHE})")
    parser.add_argument("--keep", action="store_true", help="keep each size's copy")
    parser.add_argument("--phase-table", action="store_true", help="also print the sleep run's phases")
    parser.add_argument("--out", type=Path, default=None, help="also write the figures as JSON here")
    parser.add_argument("--sleep-child", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-embed", default="corpus", help=argparse.SUPPRESS)
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.sleep_child is not None:
        return sleep_child(args.sleep_child, args.date, args.child_embed, args.out)
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--sizes {args.sizes!r}: comma-separated integers, e.g. 1000,10000")
    if not sizes or min(sizes) < 10:
        parser.error("--sizes: at least one size, each ≥ 10")
    ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    if unknown := sorted(set(ops) - set(OPS)):
        parser.error(f"--ops: unknown {', '.join(unknown)}; choose from {','.join(OPS)}")
    if args.cache is not None:
        synth.CACHE = args.cache
    args.workdir.mkdir(parents=True, exist_ok=True)
    started = loadavg()
    contexts = [measure_size(n, ops, work=args.workdir, cli_embed=args.embed, date=args.date, queries=args.queries,
                             keep=args.keep) for n in sizes]
    results: dict[str, dict[int, float]] = {}
    for ctx in contexts:
        for figure, value in ctx.figures.items():
            results.setdefault(figure, {})[ctx.size] = value
    text, exps = table_of(sizes, results)
    flagged = [f for f, k in exps.items() if k is not None and k > FLAG_K and unit_of(f) != "MiB"]
    print(f"nproc {os.cpu_count()}, CLI embed {args.embed}, load average {started} → {loadavg()}\n")
    print(text)
    print(f"\nk > {FLAG_K}: {', '.join(flagged) if flagged else 'none'}")
    if args.phase_table:
        for ctx in contexts:
            if "sleep" in ctx.notes:
                print(f"\nsleep run at {ctx.size:,} ({ctx.notes['sleep']['embed']}):\n"
                      "| phase | status | wall s | CPU s | peak RSS MiB |\n| --- | --- | ---: | ---: | ---: |")
                for p in ctx.notes["sleep"]["phases"]:
                    print(f"| {p['name']} | {p['status']} | {p['wall_s']:.2f} | {p['cpu_s']:.2f} | "
                          f"{p['peak_rss_mib']} |")
    if args.out is not None:
        payload = {"config": {"sizes": sizes, "ops": ops, "embed": args.embed, "date": args.date,
                              "nproc": os.cpu_count(), "load_start": started, "load_end": loadavg()},
                   "figures": {f: {str(n): v for n, v in by.items()} for f, by in results.items()},
                   "exponents": exps, "flagged": flagged,
                   "notes": {str(ctx.size): ctx.notes for ctx in contexts}}
        args.out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
