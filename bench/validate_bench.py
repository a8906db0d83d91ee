"""Validation and indexing-parser throughput on generated memory files (issue 3, "Measure").

Generates ``--files`` memory files (default 1,000) with the template (``render_memory``; seeded, deterministic:
varied claims, two to six body paragraphs, every third file with a fenced code block, every fifth with a facet
list and a ``<time>``), writes them into a temporary git repository, and measures, each as the best of
``--repeat`` runs:

1. ``validate`` end to end: :func:`validate_files` over the files on disk (path checks, ``O_NOFOLLOW`` read,
   html5lib parse with parse errors, every format rule) — what ``git memhtml validate`` and the pre-commit hook
   do per file;
2. ``check`` in memory: :func:`check_memory_bytes` on the bytes (no file system);
3. ``parse+extract``: :func:`parse_memory` on the bytes — the indexing parser (html5lib; the indexer calls it
   per file), including the content hash and every extracted field.

Usage::

    python bench/validate_bench.py [--files 1000] [--repeat 3] [--seed 7]

Prints files/s and MB/s for each measurement; exits 1 if any generated file fails validation.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.parse import parse_memory
from git_memhtml.document.template import render_memory
from git_memhtml.document.wellformed import check_memory_bytes
from git_memhtml.store.validate_files import validate_files

WORDS = [
    "checkout", "api", "timeout", "rollback", "deploy", "canary", "alarm", "paging", "latency", "retry", "budget",
    "cache", "shard", "replica", "quorum", "ticket", "owner", "runbook", "incident", "upstream", "pool", "socket",
    "region", "failover", "queue", "worker", "cron", "metric", "dashboard",
]
TYPES = ("semantic", "procedural", "episodic", "error_pattern", "user_preference", "agent_insight")


def _sentence(rng: random.Random, low: int, high: int) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    return " ".join(words).capitalize() + "."


def generate(count: int, seed: int) -> list[tuple[str, bytes]]:
    """``count`` valid memory files as ``(repository path, bytes)``; deterministic for a seed."""
    rng = random.Random(seed)
    files: list[tuple[str, bytes]] = []
    for index in range(count):
        body = [" ".join(_sentence(rng, 6, 14) for _ in range(rng.randint(1, 4))) for _ in range(rng.randint(2, 6))]
        if index % 3 == 0:
            body.append(
                "```sh\n" + "\n".join(f"kubectl {rng.choice(WORDS)} {rng.choice(WORDS)}" for _ in range(4)) + "\n```"
            )
        claim = _sentence(rng, 5, 12)
        kwargs: dict[str, object] = {"claim": claim, "body": body}
        if index % 5 == 0:
            facets = "".join(
                f"<dt>{rng.choice(WORDS)}</dt><dd><data value=\"{rng.randint(1, 99)}\">{rng.choice(WORDS)}</data></dd>"
                for _ in range(3)
            )
            kwargs = {
                "article_html": f'<p><mark>{claim}</mark> Seen '
                f'<time datetime="2026-01-{1 + index % 28:02d}">then</time>.</p>'
                + "".join(f"<p>{paragraph}</p>" for paragraph in body[:2])
                + f"<dl>{facets}</dl>"
            }
        text = render_memory(MemoryDraft(
            title=f"Memory {index} {claim[:40]}",
            memory_type=TYPES[index % len(TYPES)],
            confidence=round(rng.random(), 2),
            importance=rng.randint(1, 10),
            entities=[f"service:{rng.choice(WORDS)}"],
            tags=[rng.choice(WORDS)],
            **kwargs,  # type: ignore[arg-type]
        ), now="2026-01-15T12:00:00Z")
        files.append((f"areas/bench/m{index:05d}.html", text.encode("utf-8")))
    return files


def best_of(repeat: int, action: Callable[[], object]) -> float:
    """The shortest wall time of ``repeat`` runs of ``action``, in seconds."""
    times: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print one line per measurement."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    files = generate(args.files, args.seed)
    total_bytes = sum(len(data) for _, data in files)
    print(f"{len(files)} files, {total_bytes / 1e6:.2f} MB, mean {total_bytes / len(files) / 1024:.1f} KiB/file")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder).resolve()
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        for rel, data in files:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
        paths = [rel for rel, _ in files]
        report = validate_files(root, paths)
        if report.findings:
            for finding in report.findings[:10]:
                print(finding.line(), file=sys.stderr)
            return 1
        measurements = {
            "validate (disk, validate_files)": best_of(args.repeat, lambda: validate_files(root, paths)),
            "check (memory, check_memory_bytes)": best_of(
                args.repeat, lambda: [check_memory_bytes(data) for _, data in files]
            ),
            "parse+extract (indexing parser, parse_memory)": best_of(
                args.repeat, lambda: [parse_memory(data) for _, data in files]
            ),
        }
    for name, seconds in measurements.items():
        print(
            f"{name:48s} {len(files) / seconds:8.0f} files/s  {total_bytes / seconds / 1e6:6.2f} MB/s"
            f"  ({seconds * 1000 / len(files):.2f} ms/file)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
