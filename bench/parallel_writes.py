"""Write throughput under the repository-wide write lock: N parallel ``git-memhtml write`` processes.

    python bench/parallel_writes.py [--writers 8] [--per-writer 10] [--keep DIR]

Creates a fresh memory repository in a temporary folder (``git memhtml init``), starts ``--writers`` threads that
each run ``--per-writer`` real ``git-memhtml write`` subprocesses one after another (so ``--writers`` writer
processes run at any time), and prints one JSON line: writes acknowledged, refused, wall seconds, writes per
second, the median and 95th-percentile latency of one write process, and ``lockHeldMedianSeconds``: the median
time one in-process ``apply_batch`` of one memory holds the lock on the resulting repository (what serialises
the writers; the rest of a write process is start-up and the index catch-up, which run in parallel). It then
checks the trust rule: every acknowledged write is in HEAD and ``git status`` is empty (``"verified": true``).
Uses the deterministic ``fake`` embedder and this checkout's code (``PYTHONPATH``). Exit 1 when the check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_BIN = Path(sys.executable).with_name("git-memhtml")
EXE = [str(_BIN)] if _BIN.is_file() else [sys.executable, "-m", "git_memhtml"]


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "MEMHTML_"))}
    env.update({"PYTHONPATH": str(ROOT), "MEMHTML_EMBED": "fake", "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
                "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"})
    return env


def _lock_held(root: Path, env: dict[str, str], *, samples: int) -> list[float]:
    """Seconds each of ``samples`` in-process one-memory ``apply_batch`` calls takes (all of it under the lock)."""
    os.environ.update({k: v for k, v in env.items() if k.startswith("GIT_")})
    sys.path.insert(0, str(ROOT))
    from git_memhtml.gitrepo import GitRepo  # noqa: PLC0415 - this checkout's code
    from git_memhtml.store.ops import WriteOp  # noqa: PLC0415
    from git_memhtml.store.writer import apply_batch  # noqa: PLC0415

    repo = GitRepo.discover(root)
    out = []
    for k in range(samples):
        op = WriteOp.from_json({"title": f"held {k}", "type": "semantic", "body": f"Held sample {k} holds."})
        started = time.monotonic()
        apply_batch(repo, [op], now="2026-11-30T10:00:00Z", dedupe=lambda _digest: [])
        out.append(time.monotonic() - started)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--per-writer", type=int, default=10)
    parser.add_argument("--keep", type=Path, default=None, help="Build the repository here and keep it.")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="memhtml-bench-"))
    root = args.keep or scratch / "mem"
    env = _env(scratch)
    subprocess.run([*EXE, "init", str(root)], env=env, check=True, capture_output=True)

    def writer(w: int) -> list[tuple[int, float, dict[str, object] | None]]:
        out = []
        for i in range(args.per_writer):
            started = time.monotonic()
            proc = subprocess.run(
                [*EXE, "write", "--type", "semantic", "--title", f"bench w{w} n{i}", "--claim",
                 f"Writer {w} measured value {i} at {w * 1000 + i} units.", "--json"],
                cwd=root, env=env, capture_output=True, text=True, check=False)
            data = json.loads(proc.stdout)["data"] if proc.returncode == 0 else None
            out.append((proc.returncode, time.monotonic() - started, data))
        return out

    started = time.monotonic()
    with ThreadPoolExecutor(args.writers) as pool:
        outcomes = [o for batch in pool.map(writer, range(args.writers)) for o in batch]
    wall = time.monotonic() - started
    tree = subprocess.run(["git", "-C", str(root), "ls-tree", "-r", "--name-only", "HEAD"], env=env,
                          capture_output=True, text=True, check=True).stdout.split("\n")
    status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=all"], env=env,
                            capture_output=True, text=True, check=True).stdout
    acknowledged = [d for code, _, d in outcomes if code == 0 and d is not None]
    verified = status == "" and all(d["path"] in tree for d in acknowledged)
    latencies = sorted(t for _, t, _ in outcomes)
    held = _lock_held(root, env, samples=10)
    print(json.dumps({
        "writers": args.writers, "perWriter": args.per_writer, "acknowledged": len(acknowledged),
        "refused": len(outcomes) - len(acknowledged), "wallSeconds": round(wall, 2),
        "writesPerSecond": round(len(acknowledged) / wall, 2),
        "latencyMedianSeconds": round(statistics.median(latencies), 3),
        "latencyP95Seconds": round(latencies[int(0.95 * (len(latencies) - 1))], 3),
        "lockHeldMedianSeconds": round(statistics.median(held), 4), "cpus": os.cpu_count(), "verified": verified,
    }))
    return 0 if verified else 1


if __name__ == "__main__":
    sys.exit(main())
