"""Trace index throughput on the 1.1 MB real transcript: cold and incremental (issue 13, Measure).

``python bench/trace_index.py [--reps 7]`` copies the largest Claude Code session of ``../shared/data/transcripts``
into a temporary root (the shared data is never written) and measures the scan in process against a fresh
on-disk index (``index.db`` + ``state.db`` in the temporary folder):

- ``cold``: a fresh index, every byte read and parsed, rows and watermarks written;
- ``unchanged``: the same scan again (every file skipped on its watermark);
- ``tail``: one prompt line appended to the copy, then a scan (only that line read).

Each is given as the minimum and median over ``--reps`` of wall time and CPU time (``time.process_time``), with
MB/s = bytes read / wall. Print the result with ``uptime`` beside it: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from git_memhtml.index.db import open_index  # noqa: E402
from git_memhtml.index.traces import TraceTables  # noqa: E402
from git_memhtml.traces.scan import ScanReport, discover, scan  # noqa: E402

TRANSCRIPTS = ROOT.parent / "shared" / "data" / "transcripts" / "claude-code"
BIG = "88f04c6a-d128-40bf-96b3-6b2aa787f62c"
NOW = "2026-02-01T00:00:00Z"


def _copy(dest: Path) -> Path:
    """Copy the big session's project folder under ``dest/projects``; return its file."""
    source = next(TRANSCRIPTS.glob(f"projects/*/{BIG}.jsonl"))
    target = dest / "projects" / source.parent.name
    target.mkdir(parents=True)
    shutil.copy2(source, target / source.name)
    return target / source.name


def _timed(tables: TraceTables, root: Path, empty: Path) -> tuple[float, float, ScanReport]:
    wall, cpu = time.perf_counter(), time.process_time()
    roots, files = discover(root, empty)
    report = scan(tables, roots, files, now=NOW)
    return time.perf_counter() - wall, time.process_time() - cpu, report


def _summary(samples: list[tuple[float, float, ScanReport]]) -> dict[str, Any]:
    walls, cpus = [s[0] for s in samples], [s[1] for s in samples]
    read = samples[0][2].bytes_read
    return {"bytes_read": read, "lines_read": samples[0][2].lines_read,
            "wall_ms_min": round(min(walls) * 1000, 2), "wall_ms_median": round(statistics.median(walls) * 1000, 2),
            "cpu_ms_min": round(min(cpus) * 1000, 2), "cpu_ms_median": round(statistics.median(cpus) * 1000, 2),
            "mb_per_s_best": round(read / min(walls) / 1e6, 2) if read else None}


def measure(reps: int) -> dict[str, Any]:
    """Run the three scans ``reps`` times each; return the figures."""
    cold, unchanged, tail = [], [], []
    with tempfile.TemporaryDirectory(prefix="trace-bench-") as tmp:
        base = Path(tmp)
        for rep in range(reps):
            work = base / f"rep{rep}"
            path = _copy(work / "claude")
            db = open_index(work / "index.db", work / "state.db")
            try:
                tables = TraceTables(db)
                cold.append(_timed(tables, work / "claude", work / "none"))
                unchanged.append(_timed(tables, work / "claude", work / "none"))
                line = json.dumps({"type": "user", "sessionId": BIG, "uuid": f"bench-{rep}",
                                   "timestamp": "2026-01-21T22:00:00.000Z",
                                   "message": {"role": "user", "content": "one appended prompt"}}) + "\n"
                with path.open("ab") as fh:
                    fh.write(line.encode())
                st = path.stat()
                os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
                tail.append(_timed(tables, work / "claude", work / "none"))
            finally:
                db.close()
    return {"file_bytes": next(TRANSCRIPTS.glob(f"projects/*/{BIG}.jsonl")).stat().st_size, "reps": reps,
            "cold": _summary(cold), "unchanged": _summary(unchanged), "tail": _summary(tail)}


def main(argv: list[str] | None = None) -> int:
    """Print the figures as one JSON object; 2 when the shared transcripts are missing."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args(argv)
    if not TRANSCRIPTS.is_dir():
        sys.stderr.write(f"no transcripts at {TRANSCRIPTS}\n")
        return 2
    sys.stdout.write(json.dumps(measure(max(1, args.reps)), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
