"""One ``sleep run`` over a copy of a synthetic corpus: wall, CPU, files changed and peak RSS per phase (issue 12).

The corpus (``bench/synth.py --size N`` → ``/tmp/memhtml-bench/corpus-N``, indexed with ``fake:hash@256``) is
never touched: it is copied (``cp -a``) into ``--workdir`` first, and the copy is deleted at the end unless
``--keep``. The run is :func:`run_sleep` in process with the fake embedder, timed per phase by
``bench/import_sleep.py``'s :class:`PhaseTimer` (a window per phase between the runner's ``clock()`` calls) and
its RSS sampler. ``files`` is the number of paths the phase's commit changed (``git diff --name-only`` of the
commit against its parent); ``setup`` is cutting the branch and the worktree, ``teardown`` keeping the run's index
and removing the worktree.

Usage::

    python bench/sleep_scale.py --corpus /tmp/memhtml-bench/corpus-10000 --date 2026-02-01
    python bench/sleep_scale.py --corpus /tmp/memhtml-bench/corpus-10000 --date 2026-07-15 --profile /tmp/s.prof
    python bench/sleep_scale.py --corpus /tmp/memhtml-bench/corpus-100000 --out /tmp/s100k.json
"""

from __future__ import annotations

import argparse
import cProfile
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.errors import UsageError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.output import emit, table
from git_memhtml.sleep.engine.env import PhaseReport
from git_memhtml.sleep.engine.run import run_sleep

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from timing import load_script, loadavg, write_json  # noqa: E402  (a script beside this one)

FAKE_DIM = 256
"""The synthetic corpora are indexed with ``fake:hash@256`` (bench/synth.py); the run uses the same space so the
checkout's index seeds the run's."""
DEFAULT_DATE = "2026-02-01"
"""Default run date: about two weeks after the synthetic corpus instant (2026-01-15), so decay is due."""


def _changed_files(repo: GitRepo, sha: str | None) -> int:
    """Paths commit ``sha`` changed against its first parent (0 for no commit)."""
    if not sha:
        return 0
    parents = repo.parents(sha)
    return len(repo.changed_paths(parents[0], sha)) if parents else 0


def measure(corpus: Path, workdir: Path, *, date: str, profile: Path | None = None,
            keep: bool = False, stream: bool = False) -> dict[str, Any]:
    """Copy ``corpus`` under ``workdir``, run sleep once on the copy, and return the figures (JSON-ready).

    ``stream`` prints one line per phase as it ends (a 100k run takes long on a loaded box).

    Raises:
        UsageError: ``corpus`` is not a git repository with an index.
    """
    if not (corpus / ".git" / "memhtml" / "index.db").is_file():
        raise UsageError(f"{corpus}: no .git/memhtml/index.db", hint="build it: python bench/synth.py --size N")
    importer = load_script("import_sleep")
    copy = workdir / corpus.name
    started_copy = time.perf_counter()
    subprocess.run(["cp", "-a", str(corpus), str(copy)], check=True)
    copy_s = time.perf_counter() - started_copy
    load_before = loadavg()
    repo = GitRepo.discover(copy)
    db = IndexDB.for_repo(repo)
    profiler = cProfile.Profile() if profile is not None else None
    try:
        with importer.RssSampler(0.05) as sampler:
            timer = importer.PhaseTimer(sampler, f"{date}T09:00:00Z")
            started, cpu_started = sampler.mark()[0], time.process_time()
            if profiler is not None:
                profiler.enable()
            def after_phase(phase: PhaseReport) -> None:
                timer.after_phase(phase)
                if stream:
                    w = timer.windows[-1]
                    emit(f"{w.name:20s} {w.status:7s} wall {w.end - w.start:8.2f} s  CPU {w.cpu:8.2f} s  files "
                         f"{_changed_files(repo, phase.commit_sha):6d}  max RSS {w.max_rss_kib / 1024:7.1f} MiB")

            report = run_sleep(repo, db, date=date, embedder=FakeEmbedder(dim=FAKE_DIM), clock=timer.clock,
                               after_phase=after_phase)
            if profiler is not None:
                profiler.disable()
            ended, cpu_ended = sampler.mark()[0], time.process_time()
        phases = []
        for window, phase in zip(timer.windows, report.phases, strict=True):
            stage = asdict(importer._close(sampler, window))
            stage["files"] = _changed_files(repo, phase.commit_sha)
            phases.append(stage)
        first = timer.windows[0].start if timer.windows else ended
        last = timer.windows[-1].end if timer.windows else started
        peak, _ = sampler.window(started, ended)
        worktrees = repo.run_git(["worktree", "list", "--porcelain"]).count("worktree ")
    finally:
        db.close()
        if profiler is not None and profile is not None:
            profiler.dump_stats(str(profile))
        if not keep:
            shutil.rmtree(copy, ignore_errors=True)
    return {
        "config": {"corpus": str(corpus), "date": date, "nproc": os.cpu_count(), "copy_s": round(copy_s, 2),
                   "loadavg_before": load_before, "loadavg_after": loadavg()},
        "sleep": {
            "run_id": report.run_id, "wall_s": round(ended - started, 3), "cpu_s": round(cpu_ended - cpu_started, 3),
            "setup_s": round(first - started, 3), "teardown_s": round(ended - last, 3),
            "peak_rss_mib": round(peak / 1024, 1), "max_rss_mib": round(importer.max_rss_kib() / 1024, 1),
            "failed": report.failed_phases, "commits": len(report.commits), "worktrees_after": worktrees,
            "phases": phases,
        },
    }


def render(result: dict[str, Any]) -> str:
    """The per-phase table and the totals line."""
    c, s = result["config"], result["sleep"]
    load = "/".join(str(x) for x in c["loadavg_before"]) or "?"
    head = ["phase", "status", "wall s", "CPU s", "files", "peak RSS MiB"]
    rows = [[p["name"], p["status"], f"{p['wall_s']:.2f}", f"{p['cpu_s']:.2f}", p["files"], p["peak_rss_mib"]]
            for p in s["phases"]]
    lines = [f"{c['corpus']} --date {c['date']}, load average at start {load}", "", table(head, rows), ""]
    lines.append(f"sleep {s['run_id']}: {s['wall_s']:.2f} s wall, {s['cpu_s']:.2f} s CPU, setup {s['setup_s']:.2f} s,"
                 f" teardown {s['teardown_s']:.2f} s, peak RSS {s['peak_rss_mib']} MiB (process max"
                 f" {s['max_rss_mib']} MiB), {s['commits']} commits, failed: {', '.join(s['failed']) or 'none'},"
                 f" worktrees after: {s['worktrees_after']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, measure, print the table (and write JSON with ``--out``); returns the exit code."""
    p = argparse.ArgumentParser(prog="sleep_scale.py", description="sleep run on a copy of a synthetic corpus")
    p.add_argument("--corpus", type=Path, required=True, help="a bench/synth.py corpus (copied, never modified)")
    p.add_argument("--date", default=DEFAULT_DATE, help=f"run date YYYY-MM-DD (default {DEFAULT_DATE})")
    p.add_argument("--workdir", type=Path, default=None, help="where the copy goes (default: a temp folder)")
    p.add_argument("--profile", type=Path, default=None, help="write a cProfile of the run here")
    p.add_argument("--keep", action="store_true", help="keep the copy")
    p.add_argument("--stream", action="store_true", help="print each phase's line as it ends")
    p.add_argument("--out", type=Path, default=None, help="also write the figures as JSON here")
    args = p.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="sleep-scale-"))
    workdir.mkdir(parents=True, exist_ok=True)
    result = measure(args.corpus.resolve(), workdir, date=args.date, profile=args.profile, keep=args.keep,
                     stream=args.stream)
    emit(render(result))
    write_json(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
