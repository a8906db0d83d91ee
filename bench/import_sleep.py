"""Import + index of LoCoMo memories, then one ``sleep run`` on that store: wall time and RSS per stage and phase.

Issue 2, "Measure": import + index of all turns of the six dev conversations (3,435 memories) — wall time and
memories/s — and ``sleep run`` on that store: wall time and peak RSS per phase.

Stages, all in this process through the core functions the CLI calls (no subprocess, so one RSS):

1. convert: ``bench/locomo.py`` ``load_data`` → ``convert`` → ``dumps_jsonl`` (not part of the throughput);
2. import: ``parse_op_stream`` of that JSONL, then ``store.writer.apply_batch`` (one commit, content-hash dedup
   against the index, exactly as ``git memhtml apply`` does) at the fixed instant ``--now``;
3. index: ``index.indexer.update`` with the chosen embedder (``wordllama`` is the product default);
4. sleep: ``sleep.run.run_sleep`` on ``--date`` (default two weeks after ``--now``, so confidence-decay has a
   due step), with an ``after_phase`` callback.

Memory: a daemon thread samples ``VmRSS`` from ``/proc/self/status`` every ``--sample-ms`` (default 10 ms) into a
list of ``(perf_counter, KiB)``; a sample is also taken synchronously at every stage and phase boundary. A
window's peak is the largest sample inside it ("peak RSS"); its growth is that peak minus the sample at the
window's start ("ΔRSS"). ``ru_maxrss`` (KiB on Linux) at each callback is the process's high-water mark so far.

Phase windows: the runner calls ``clock()`` right before a phase (``started``) and right after it (``ended``,
when it records the phase row), then ``after_phase``. A phase's wall time is ``ended - started`` from the two
``clock()`` calls preceding its callback; the time before the first phase (branch + linked worktree) is reported
as ``setup`` and the time after the last callback (worktree removal, run row) as ``teardown``.

Usage::

    python bench/import_sleep.py                                   # all turns, wordllama
    python bench/import_sleep.py --embed fake --out fake.json
    python bench/import_sleep.py --units observations --conversation conv-26 --embed fake --workdir /tmp/x

``--workdir DIR`` keeps the memory repository at ``DIR/memory`` (DIR must be absent or empty); without it a
temporary folder is used and removed at the end.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from git_memhtml.cli.common import init_memory as init_repo
from git_memhtml.embed.registry import get_embedder
from git_memhtml.errors import MemhtmlError, UsageError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.index.indexer import update
from git_memhtml.index.memories import hash_holders
from git_memhtml.output import emit, log, table
from git_memhtml.sleep.engine.env import PhaseReport
from git_memhtml.sleep.engine.run import run_sleep
from git_memhtml.store.ops import parse_op_stream
from git_memhtml.store.writer import DedupeView, apply_batch

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from timing import failure, load_script, loadavg, scratch, write_json  # noqa: E402  (a script beside this one)

DEFAULT_NOW = "2026-11-30T09:00:00Z"
"""The import instant (every memory's ``created``/``updated``); fixed so runs are comparable."""
DECAY_DELAY = timedelta(days=14)
"""Default run date = import date + two weeks: one confidence-decay step is due (docs/phases.md §1.6)."""
EMBED_CHOICES = ("wordllama", "fake", "off")
UNIT_CHOICES = ("turns", "observations")


# --- RSS sampling ------------------------------------------------------------------------------------------


def vm_rss_kib() -> int:
    """Current resident set size of this process in KiB (``VmRSS`` of ``/proc/self/status``; 0 if unreadable)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return 0


def max_rss_kib() -> int:
    """Process high-water RSS so far, KiB (``getrusage(RUSAGE_SELF).ru_maxrss``; KiB on Linux)."""
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


class RssSampler:
    """Samples ``VmRSS`` every ``interval_s`` seconds on a daemon thread; ``mark()`` adds a synchronous sample.

    ``samples`` is a list of ``(time.perf_counter(), KiB)`` in time order (appends from two threads are atomic
    in CPython; ``peak`` sorts nothing, it scans).
    """

    def __init__(self, interval_s: float = 0.01) -> None:
        self.interval_s = interval_s
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rss-sampler", daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.samples.append((time.perf_counter(), vm_rss_kib()))

    def __enter__(self) -> RssSampler:
        self.mark()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.mark()

    def mark(self) -> tuple[float, int]:
        """Take one sample now and return it."""
        sample = (time.perf_counter(), vm_rss_kib())
        self.samples.append(sample)
        return sample

    def window(self, start: float, end: float) -> tuple[int, int]:
        """Return ``(peak KiB, growth KiB)`` over ``[start, end]``: the largest sample in it, and that minus the
        last sample at or before ``start`` (the RSS the window started from)."""
        base = 0
        peak = 0
        for t, kib in self.samples:
            if t <= start:
                base = kib
            if start <= t <= end:
                peak = max(peak, kib)
        peak = max(peak, base)
        return peak, peak - base


# --- measurements ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stage:
    """One measured window: a pre-sleep stage (convert, import, index) or a sleep phase.

    ``wall_s`` seconds; ``cpu_s`` process CPU seconds (user + system, all threads) — robust to a loaded machine,
    where wall time is not; ``peak_rss_mib`` the largest sampled RSS inside the window, ``rss_growth_mib`` that minus
    the RSS at its start, ``max_rss_mib`` the process high-water mark when the window closed (all MiB).
    """

    name: str
    status: str
    wall_s: float
    cpu_s: float
    peak_rss_mib: float
    rss_growth_mib: float
    max_rss_mib: float
    counts: dict[str, Any] = field(default_factory=dict)
    detail: str | None = None


@dataclass
class _Window:
    name: str
    start: float
    end: float = 0.0
    cpu: float = 0.0
    status: str = "ok"
    counts: dict[str, Any] = field(default_factory=dict)
    detail: str | None = None
    max_rss_kib: int = 0


def _mib(kib: int) -> float:
    return round(kib / 1024, 1)


def _close(sampler: RssSampler, w: _Window) -> Stage:
    peak, growth = sampler.window(w.start, w.end)
    return Stage(w.name, w.status, round(w.end - w.start, 6), round(w.cpu, 6), _mib(peak), _mib(growth),
                 _mib(w.max_rss_kib), w.counts, w.detail)


class PhaseTimer:
    """The ``clock`` and ``after_phase`` of one ``run_sleep``: records every ``clock()`` call's perf time and
    turns each callback into a phase window ``[started, ended]`` (see the module docstring)."""

    def __init__(self, sampler: RssSampler, instant: str) -> None:
        self.sampler = sampler
        self.instant = instant
        self.calls: list[tuple[float, float]] = []  # (perf_counter, process_time)
        self.windows: list[_Window] = []
        self._seen = 0
        self._last: tuple[float, float] | None = None

    def clock(self) -> str:
        """Row timestamps for the runner: always ``instant``; records when it was asked."""
        self.calls.append((self.sampler.mark()[0], time.process_time()))
        return self.instant

    def after_phase(self, report: PhaseReport) -> None:
        """Close the window of ``report``'s phase."""
        now = (self.sampler.mark()[0], time.process_time())
        fresh = self.calls[self._seen:]
        self._seen = len(self.calls)
        previous = self._last or (self.calls[0] if self.calls else now)
        start, end = (fresh[-2], fresh[-1]) if len(fresh) >= 2 else (previous, now)
        self._last = end
        self.windows.append(_Window(report.phase, start[0], end[0], end[1] - start[1], report.status,
                                    dict(report.counts), report.detail, max_rss_kib()))


def _timed(sampler: RssSampler, name: str, action: Callable[[], dict[str, Any]]) -> Stage:
    cpu = time.process_time()
    window = _Window(name, sampler.mark()[0])
    window.counts = action()
    window.end = sampler.mark()[0]
    window.cpu = time.process_time() - cpu
    window.max_rss_kib = max_rss_kib()
    return _close(sampler, window)


def _dedupe(db: IndexDB) -> DedupeView:
    """The dedupe view ``git memhtml apply`` uses (``index.memories.hash_holders``: one snapshot of the index)."""
    return partial(hash_holders, db)


def _rate(n: int, seconds: float) -> float:
    return round(n / seconds, 1) if seconds > 0 else 0.0


def measure(
    *,
    data_path: Path,
    conversation: str,
    units: str,
    embed: str,
    root: Path,
    now: str = DEFAULT_NOW,
    date: str | None = None,
    sample_ms: float = 10.0,
) -> dict[str, Any]:
    """Build a memory repository at ``root`` (must not hold files), import + index, run sleep; return the figures.

    Returns a JSON-ready dict: ``config`` (inputs, machine), ``stages`` (convert, import, index; each a
    :class:`Stage` as a dict), ``throughput`` (memories, seconds and memories/s of import, index and both),
    ``sleep`` (``phases`` as stage dicts in run order, ``setup_s``, ``teardown_s``, ``wall_s``, ``peak_rss_mib``,
    ``max_rss_mib``, ``failed``, ``commits``, ``run_id``).

    Raises:
        UsageError: unknown units/conversation/embedder, data absent, the import refused an op.
    """
    if embed not in EMBED_CHOICES:
        raise UsageError(f"unknown embedder {embed!r}", hint=f"use --embed {'|'.join(EMBED_CHOICES)}")
    run_date = date or (datetime.fromisoformat(now.replace("Z", "+00:00")) + DECAY_DELAY).date().isoformat()
    locomo = load_script("locomo")
    stages: list[Stage] = []
    load_before = loadavg()
    with RssSampler(sample_ms / 1000) as sampler:
        holder: dict[str, Any] = {}

        def convert() -> dict[str, Any]:
            rows = locomo.convert(locomo.load_data(data_path), conversation, units)
            holder["jsonl"] = locomo.dumps_jsonl(rows)
            return {"ops": len(rows)}

        stages.append(_timed(sampler, "convert", convert))
        init_repo(root)
        repo = GitRepo.discover(root)
        embedder = get_embedder(embed)
        db = IndexDB.for_repo(repo)
        try:
            update(repo, db, embedder, now=now)  # the init commit, as `apply` catches the index up first

            def do_import() -> dict[str, Any]:
                ops = parse_op_stream(holder.pop("jsonl"), source=f"locomo {conversation} {units}")
                result = apply_batch(repo, ops, now=now, dedupe_view=_dedupe(db))
                if not result.ok or result.commit_sha is None:
                    bad = next((r for r in result.results if r.code), None)
                    raise UsageError(f"import refused: {bad.error if bad else 'nothing written'}",
                                     hint="check bench/locomo.py output with `git memhtml apply`")
                holder["written"] = result.summary["written"]
                return dict(result.summary)

            def do_index() -> dict[str, Any]:
                report = update(repo, db, embedder, now=now)
                return {"added": report.added, "embeddings": report.embeddings_written,
                        "skipped": report.skipped, **({"embedError": report.embed_error} if report.embed_error else {})}

            stages.append(_timed(sampler, "import", do_import))
            stages.append(_timed(sampler, "index", do_index))
            timer = PhaseTimer(sampler, f"{run_date}T09:00:00Z")
            started, cpu_started = sampler.mark()[0], time.process_time()
            report = run_sleep(repo, db, date=run_date, embedder=embedder, clock=timer.clock,
                               after_phase=timer.after_phase)
            ended, cpu_ended = sampler.mark()[0], time.process_time()
        finally:
            db.close()
    phases = [_close(sampler, w) for w in timer.windows]
    first = timer.windows[0].start if timer.windows else ended
    last = timer.windows[-1].end if timer.windows else started
    sleep_peak, _ = sampler.window(started, ended)
    written = int(holder.get("written", 0))
    by_name = {s.name: s for s in stages}
    import_s, index_s = by_name["import"].wall_s, by_name["index"].wall_s
    return {
        "config": {
            "conversation": conversation, "units": units, "embed": embed, "now": now, "date": run_date,
            "data": str(data_path), "sampleMs": sample_ms, "nproc": os.cpu_count(),
            "python": platform.python_version(), "platform": platform.platform(),
            "loadavg_before": load_before, "loadavg_after": loadavg(),
        },
        "stages": [asdict(s) for s in stages],
        "throughput": {
            "memories": written,
            "import_s": import_s, "index_s": index_s, "total_s": round(import_s + index_s, 6),
            "import_per_s": _rate(written, import_s), "index_per_s": _rate(written, index_s),
            "total_per_s": _rate(written, import_s + index_s),
        },
        "sleep": {
            "run_id": report.run_id,
            "wall_s": round(ended - started, 6),
            "cpu_s": round(cpu_ended - cpu_started, 6),
            "setup_s": round(first - started, 6),
            "teardown_s": round(ended - last, 6),
            "peak_rss_mib": _mib(sleep_peak),
            "max_rss_mib": _mib(max_rss_kib()),
            "failed": report.failed_phases,
            "commits": len(report.commits),
            "phases": [asdict(p) for p in phases],
        },
    }


# --- output ------------------------------------------------------------------------------------------------


def summarize_counts(counts: dict[str, Any], width: int = 70) -> str:
    """``k=v`` pairs of the scalar counts (lists/dicts shown by length), cut to ``width`` characters."""
    parts = []
    for key, value in counts.items():
        shown = len(value) if isinstance(value, list | dict | tuple) else value
        parts.append(f"{key}={shown}")
    text = " ".join(parts)
    return text if len(text) <= width else text[: width - 1] + "…"


def render(result: dict[str, Any]) -> str:
    """The human report: config line, pre-sleep stage table, throughput, per-phase table, sleep totals."""
    c, t, s = result["config"], result["throughput"], result["sleep"]
    load = "/".join(str(x) for x in c["loadavg_before"]) or "?"
    lines = [f"{c['conversation']} {c['units']}, embed {c['embed']}, import at {c['now']}, sleep --date {c['date']}"
             f" — nproc {c['nproc']}, Python {c['python']}, load average at start {load}", ""]
    head = ["stage", "status", "wall s", "CPU s", "peak RSS MiB", "ΔRSS MiB", "counts"]

    def row(x: dict[str, Any]) -> list[object]:
        shown = summarize_counts(x["counts"]) or (x["detail"] or "")[:70]
        return [x["name"], x["status"], f"{x['wall_s']:.3f}", f"{x['cpu_s']:.3f}", x["peak_rss_mib"],
                x["rss_growth_mib"], shown]

    lines.append(table(head, [row(x) for x in result["stages"]]))
    lines += ["", f"import {t['memories']} memories: {t['import_s']:.2f} s ({t['import_per_s']}/s); "
              f"index {t['index_s']:.2f} s ({t['index_per_s']}/s); together {t['total_s']:.2f} s "
              f"({t['total_per_s']}/s)", ""]
    lines.append(table(["phase", *head[1:]], [row(p) for p in s["phases"]]))
    phase_sum = sum(p["wall_s"] for p in s["phases"])
    lines += ["", f"sleep {s['run_id']}: {s['wall_s']:.2f} s wall, {s['cpu_s']:.2f} s CPU (phases {phase_sum:.2f} s,"
              f" setup {s['setup_s']:.2f} s, teardown {s['teardown_s']:.2f} s), peak RSS {s['peak_rss_mib']} MiB,"
              f" process max RSS {s['max_rss_mib']} MiB, {s['commits']} commits,"
              f" failed: {', '.join(s['failed']) or 'none'}"]
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    locomo_default = BENCH_DIR.parent.parent / "shared" / "data" / "locomo" / "locomo-dev.json"
    p = argparse.ArgumentParser(
        prog="import_sleep.py", description="LoCoMo import + index, then sleep run: time and RSS"
    )
    p.add_argument("--embed", choices=EMBED_CHOICES, default="wordllama", help="embedder (default: wordllama)")
    p.add_argument("--units", choices=UNIT_CHOICES, default="turns", help="one memory per turn or observation")
    p.add_argument("--conversation", default="all", help="sample id (e.g. conv-26) or all (default)")
    p.add_argument("--data", type=Path, default=locomo_default, help=f"LoCoMo JSON (default {locomo_default})")
    p.add_argument("--workdir", type=Path, default=None, help="keep the repository at DIR/memory (DIR empty)")
    p.add_argument("--now", default=DEFAULT_NOW, help=f"import instant (default {DEFAULT_NOW})")
    p.add_argument("--date", default=None, help="sleep run date YYYY-MM-DD (default: import date + 14 days)")
    p.add_argument("--sample-ms", type=float, default=10.0, help="RSS sampling period in ms (default 10)")
    p.add_argument("--out", type=Path, default=None, help="also write the figures as JSON here")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Script entry: measure, print the tables, write ``--out``. A :class:`MemhtmlError` prints ``error:`` and
    ``hint:`` on stderr and returns its exit code; a failed sleep phase returns 1."""
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        with scratch(args.workdir, "memhtml-bench-") as folder:
            result = measure(data_path=args.data, conversation=args.conversation, units=args.units,
                             embed=args.embed, root=folder / "memory", now=args.now, date=args.date,
                             sample_ms=args.sample_ms)
    except MemhtmlError as exc:
        log(failure(exc))
        return exc.exit_code
    emit(render(result))
    write_json(args.out, result)
    return 1 if result["sleep"]["failed"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
