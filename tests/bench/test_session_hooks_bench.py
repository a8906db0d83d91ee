"""``bench/session_hooks.py`` runs and reports what it claims: every recall hook prints a pack, and the hooks'
figures are wall times of whole processes within their bounds."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from git_memhtml.cli.main import main
from git_memhtml.cli.session_entry import RECALL_TIMEOUT_S, TRACE_TIMEOUT_S

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
    figures = module.measure(3, 2, corpus=corpus)
    assert figures["recall_empty"] == 0
    assert 0 < figures["recall_p50_ms"] <= figures["recall_p95_ms"] < RECALL_TIMEOUT_S * 1000
    assert 0 < figures["trace_p50_ms"] <= figures["trace_p95_ms"] < TRACE_TIMEOUT_S * 1000
    assert figures["transcript_bytes"] > 0
