"""bench/mcp_latency.py at a tiny size: both sides answer every call, the server ends the session cleanly, and the
table and JSON carry p50/p95 of each verb in process and over stdio."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.bench.bench_support import PROJECT_ROOT


def _load() -> ModuleType:
    sys.path.insert(0, str(PROJECT_ROOT / "bench"))  # the script imports synth and timing beside it
    spec = importlib.util.spec_from_file_location("bench_mcp_latency", PROJECT_ROOT / "bench" / "mcp_latency.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_mcp_latency_bench_at_a_tiny_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PYTHONPATH", str(PROJECT_ROOT))  # the server child imports this checkout
    bench = _load()
    out = tmp_path / "latency.json"
    code = bench.main(["--size", "40", "--queries", "4", "--writes", "2", "--warmup", "1",
                       "--workdir", str(tmp_path / "work"), "--json", str(out)])
    assert code == 0
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["config"]["size"] == 40 and figures["config"]["nproc"]
    for side in ("in_process", "stdio"):
        assert figures[side]["memory_search_n"] == 4 and figures[side]["memory_write_n"] == 2
        for verb in ("memory_search", "memory_write"):
            assert 0 < figures[side][f"{verb}_p50_ms"] <= figures[side][f"{verb}_p95_ms"]
    assert set(figures["overhead"]) == {"memory_search_p50_added_ms", "memory_search_p95_added_ms",
                                        "memory_write_p50_added_ms", "memory_write_p95_added_ms"}
    printed = capsys.readouterr().out
    assert "memory_search" in printed and "over stdio" in printed and "40 memories" in printed
    subjects = subprocess.run(["git", "-C", str(tmp_path / "work" / "mem"), "log", "--format=%s"], capture_output=True,
                              text=True, check=True).stdout.splitlines()
    assert sum(s.startswith("memhtml(write): ") for s in subjects) == 4, subjects  # two writes a side, a commit each
