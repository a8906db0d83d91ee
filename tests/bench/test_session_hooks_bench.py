"""``bench/session_hooks.py`` runs and reports what it claims: every recall hook prints a pack, and the hooks'
figures are well-formed wall times of whole processes (every key, positive, p50 ≤ p95). How large they are is the
bench's report, never this test's verdict: a busy machine must not fail it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from git_memhtml.cli.main import main

BENCH = Path(__file__).resolve().parents[2] / "bench" / "session_hooks.py"


def test_session_hooks_bench_figures(tmp_path: Path) -> None:
    sys.path.insert(0, str(BENCH.parent))
    spec = importlib.util.spec_from_file_location("session_hooks_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not module.TRANSCRIPTS.is_dir():
        pytest.fail(f"the shared transcripts are missing at {module.TRANSCRIPTS}")
    corpus = tmp_path / "corpus"
    assert main(["init", str(corpus)]) == 0
    for i, word in enumerate(("alpha", "bravo", "charlie")):
        assert main(["-C", str(corpus), "write", "--title", f"Fact {i}", "--type", "semantic", "--body",
                     f"The {word} service retries three times."]) == 0
    figures = module.measure(3, 2, corpus=corpus, hook_args=("--timeout", "600"))
    assert set(figures) == {"size", "reps", "recall_p50_ms", "recall_p95_ms", "recall_empty", "trace_cold_ms",
                            "trace_p50_ms", "trace_p95_ms", "transcript_bytes"}
    assert (figures["size"], figures["reps"], figures["recall_empty"]) == (3, 2, 0)  # every recall printed a pack
    assert 0 < figures["recall_p50_ms"] <= figures["recall_p95_ms"]
    assert 0 < figures["trace_p50_ms"] <= figures["trace_p95_ms"] and figures["trace_cold_ms"] > 0
    assert figures["transcript_bytes"] > 0
