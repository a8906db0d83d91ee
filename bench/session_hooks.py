"""Wall time of the session hooks as an agent runs them: ``session recall`` and ``session trace`` (issue 14 part 3).

``python bench/session_hooks.py [--sizes 100 10000] [--reps 15]`` copies ``bench/synth.py``'s corpus of each size
(built on first use under ``/tmp/memhtml-bench``, fake embedder) into a temporary folder, then times whole
processes, start-up included, as a hook spawns them:

- ``recall``: ``git-memhtml -C <copy> session recall --agent claude-code`` with a UserPromptSubmit event whose
  prompt is a ``synth.query``; each run checks that a pack was printed;
- ``trace``: ``session trace --agent claude-code`` with a Stop event naming one transcript of the shared data
  (copied into a temporary trace root). The first run reads it cold; every later run finds it unchanged.

It prints p50/p95 (and the cold trace run) in milliseconds per size as JSON. Print ``uptime`` beside it: the
machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import synth  # noqa: E402
from timing import pct  # noqa: E402

TRANSCRIPTS = ROOT.parent / "shared" / "data" / "transcripts" / "claude-code"
ENTRY = "import sys; sys.argv[0] = 'git-memhtml'; from git_memhtml.cli.main import run; run()"


def _hook(repo: Path, verb: str, event: dict[str, Any], env: dict[str, str],
          hook_args: Sequence[str]) -> tuple[float, bytes]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", ENTRY, "-C", str(repo), "session", verb, "--agent", "claude-code",
                           *hook_args], input=json.dumps(event).encode(), capture_output=True, env=env, check=True,
                          timeout=60)
    return (time.perf_counter() - start) * 1000, proc.stdout


def _transcript(root: Path) -> Path:
    """Copy the smallest main transcript of the shared data into ``root/projects/<slug>/``; return the copy."""
    mains = sorted((p for p in TRANSCRIPTS.glob("projects/*/*.jsonl")), key=lambda p: p.stat().st_size)
    if not mains:
        raise SystemExit(f"error: no transcript under {TRANSCRIPTS}")
    source = mains[0]
    dest = root / "projects" / source.parent.name / source.name
    dest.parent.mkdir(parents=True)
    shutil.copyfile(source, dest)
    return dest


def measure(size: int, reps: int, corpus: Path | None = None, hook_args: Sequence[str] = ()) -> dict[str, Any]:
    """Time ``reps`` recall and ``reps`` trace hooks on a copy of the corpus of ``size`` (or of ``corpus``, a memory
    indexed with the fake embedder at its default dimension). ``hook_args`` go to every hook (the smoke test passes
    a ``--timeout`` no load reaches, so only a broken recall can come back empty)."""
    source = corpus or synth.corpus(size, log=False)
    with tempfile.TemporaryDirectory(prefix="memhtml-session-bench-") as tmp:
        repo = Path(tmp) / "mem"
        shutil.copytree(source, repo, symlinks=True)
        transcript = _transcript(Path(tmp) / "claude")
        transcript_bytes = transcript.stat().st_size
        env = dict(os.environ, PYTHONPATH=str(ROOT), MEMHTML_EMBED="fake",
                   MEMHTML_TRACE_ROOT=str(Path(tmp) / "claude"), MEMHTML_CODEX_ROOT=str(Path(tmp) / "no-codex"),
                   MEMHTML_NOW="2026-02-01T00:00:00Z")
        if corpus is None:  # synth indexes in fake:hash@DIM
            env["MEMHTML_EMBED_DIM"] = str(synth.DIM)
        recall: list[float] = []
        empty = 0
        for i in range(reps):
            prompt = synth.query(random.Random(i))
            ms, out = _hook(repo, "recall", {"prompt": prompt, "hook_event_name": "UserPromptSubmit"}, env,
                            hook_args)
            recall.append(ms)
            empty += not out
        stop = {"session_id": transcript.stem, "transcript_path": str(transcript), "hook_event_name": "Stop"}
        trace = [_hook(repo, "trace", stop, env, hook_args)[0] for _ in range(reps)]
    return {"size": size, "reps": reps, "recall_p50_ms": round(pct(recall, 0.5), 1),
            "recall_p95_ms": round(pct(recall, 0.95), 1), "recall_empty": empty,
            "trace_cold_ms": round(trace[0], 1), "trace_p50_ms": round(pct(trace[1:] or trace, 0.5), 1),
            "trace_p95_ms": round(pct(trace[1:] or trace, 0.95), 1), "transcript_bytes": transcript_bytes}


def main() -> int:
    """Measure each size and print one JSON line per size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 10_000])
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    for size in args.sizes:
        print(json.dumps(measure(size, args.reps)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
