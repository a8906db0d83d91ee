"""Added wall time of the post-commit hook on ``git commit`` (issue 5 "Measure"; target ≤ 300 ms).

Builds a repository of ``--memories`` memory files (default 10,000) with a built index, installs the hooks, then
times ``git commit`` of one new memory file, alternating rounds with the hooks on (detached, the default; and
foreground, ``MEMHTML_HOOK_DETACH=0``) and off (``core.hooksPath`` pointed at an empty folder). The added time is
the median of (hooked − plain). Between rounds it waits for a detached catch-up to finish (``flock`` on
``hook.lock``) so that background work never overlaps the next measurement, and checks the index reached HEAD.

    python bench/hook_overhead.py [--memories 10000] [--rounds 7] [--embed fake]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOPICS = 50


def _memory(i: int) -> str:
    return "\n".join([
        "<!doctype html>", '<html lang="en">', "<head>", '<meta charset="utf-8">', f"<title>Fact {i}</title>",
        '<meta name="memhtml-type" content="semantic">', '<meta name="memhtml-status" content="active">',
        '<meta name="memhtml-created" content="2026-01-01T00:00:00Z">',
        '<meta name="memhtml-updated" content="2026-01-02T00:00:00Z">', "</head>", "<body>", "<article>",
        f"<p><mark>Service {i % 97} talks to queue {i % 89} with a timeout of {i % 60} seconds (fact {i}).</mark>"
        f" Owner team {i % 13}.</p>", "</article>", "</body>", "</html>", "",
    ])


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def _log_lines(root: Path) -> int:
    log = root / ".git" / "memhtml" / "hooks.log"
    return len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0


def _wait_idle(root: Path, lines: int) -> None:
    """Wait until the hook log has ``lines`` lines (a detached job has finished) and nobody holds the lock."""
    deadline = time.monotonic() + 120
    while _log_lines(root) < lines and time.monotonic() < deadline:
        time.sleep(0.05)
    lock = root / ".git" / "memhtml" / "hook.lock"
    if lock.exists():
        subprocess.run(["flock", str(lock), "true"], check=True)


def main() -> int:
    """Build, measure, print a summary (one line per mode) and return 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--embed", default="fake", help="embedder of the index (fake keeps the build short)")
    args = parser.parse_args()
    bindir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""), "MEMHTML_EMBED": args.embed,
           "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}
    with tempfile.TemporaryDirectory(prefix="memhtml-hook-bench-") as tmp:
        root = Path(tmp) / "mem"
        empty_hooks = Path(tmp) / "no-hooks"
        empty_hooks.mkdir()
        build = time.perf_counter()
        subprocess.run(["git-memhtml", "init", str(root)], env=env, check=True, capture_output=True)
        for i in range(args.memories):
            path = root / "areas" / f"topic-{i % TOPICS:02d}" / f"fact-{i:05d}.html"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(_memory(i), encoding="utf-8")
        _run(["git", "add", "areas"], root, env)
        _run(["git", "commit", "-qm", "bench corpus"], root, env)
        _run(["git-memhtml", "index", "rebuild"], root, env)
        _run(["git-memhtml", "install"], root, env)
        print(f"built {args.memories} memories + index in {time.perf_counter() - build:.1f} s "
              f"(embed={args.embed})", flush=True)
        times: dict[str, list[float]] = {"plain": [], "detached": [], "foreground": []}
        n = args.memories
        for _ in range(args.rounds):
            for mode in ("plain", "detached", "foreground"):
                n += 1
                rel = f"areas/topic-new/fact-{n:05d}.html"
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(_memory(n), encoding="utf-8")
                _run(["git", "add", rel], root, env)
                cmd = ["git", "commit", "-qm", f"add {rel}"]
                mode_env = dict(env)
                if mode == "plain":
                    cmd = ["git", "-c", f"core.hooksPath={empty_hooks}", *cmd[1:]]
                mode_env["MEMHTML_HOOK_DETACH"] = "0" if mode == "foreground" else "1"
                expected = _log_lines(root) + (0 if mode == "plain" else 1)
                times[mode].append(_run(cmd, root, mode_env))
                _wait_idle(root, expected)
        _run(["git-memhtml", "index", "status"], root, env)
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=False).stdout.strip()
        log = (root / ".git" / "memhtml" / "hooks.log").read_text(encoding="utf-8")
        plain = statistics.median(times["plain"])
        print(f"plain git commit: median {plain * 1000:.0f} ms over {args.rounds} rounds")
        for mode in ("detached", "foreground"):
            added = statistics.median(t - p for t, p in zip(times[mode], times["plain"], strict=True))
            print(f"{mode}: median commit {statistics.median(times[mode]) * 1000:.0f} ms, "
                  f"added {added * 1000:.0f} ms (target <= 300 ms)")
        runs = [line for line in log.splitlines() if " post-commit " in line]
        print(f"hook runs logged: {len(runs)} (expected {2 * args.rounds}); last: {runs[-1] if runs else '-'}")
        print(f"HEAD {head[:12]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
