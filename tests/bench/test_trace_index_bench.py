"""``bench/trace_index.py`` runs and reports what it claims: a cold scan reads the whole file, a second scan
nothing, a tail scan the one appended line."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "trace_index.py"


def test_trace_index_bench_figures() -> None:
    spec = importlib.util.spec_from_file_location("trace_index_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not module.TRANSCRIPTS.is_dir():
        pytest.fail(f"the shared transcripts are missing at {module.TRANSCRIPTS}")
    figures = module.measure(1)
    assert figures["cold"]["bytes_read"] == figures["file_bytes"] > 1_000_000
    assert figures["unchanged"]["bytes_read"] == 0
    assert 0 < figures["tail"]["bytes_read"] < 300 and figures["tail"]["lines_read"] == 1
