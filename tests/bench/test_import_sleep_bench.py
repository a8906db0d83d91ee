"""bench/import_sleep.py: the import + index + sleep benchmark runs on a small slice and reports every phase."""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from git_memhtml.sleep.engine.contract import SLEEP_PHASES
from tests.bench.bench_support import LOCOMO_JSON, PROJECT_ROOT, SHARED_DATA


def _load() -> ModuleType:
    path = PROJECT_ROOT / "bench" / "import_sleep.py"
    spec = importlib.util.spec_from_file_location("bench_import_sleep", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = _load()


@pytest.fixture(scope="module")
def conv26_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], Path]:
    """``main`` on conv-26's 184 observations with the fake embedder, kept under a work dir, JSON to --out."""
    if not LOCOMO_JSON.exists():
        pytest.skip(f"LoCoMo data absent: {SHARED_DATA} (see docs/locomo.md)")
    base = tmp_path_factory.mktemp("bench")
    out = base / "figures.json"
    workdir = base / "work"
    code = bench.main(["--embed", "fake", "--units", "observations", "--conversation", "conv-26",
                       "--data", str(LOCOMO_JSON), "--workdir", str(workdir), "--out", str(out)])
    return code, json.loads(out.read_text(encoding="utf-8")), workdir


@pytest.mark.slow
def test_every_stage_and_phase_is_measured(conv26_run: tuple[int, dict[str, Any], Path]) -> None:
    code, result, _ = conv26_run
    assert code == 0
    assert [s["name"] for s in result["stages"]] == ["convert", "import", "index"]
    phases = result["sleep"]["phases"]
    assert [p["name"] for p in phases] == list(SLEEP_PHASES)
    assert all(p["status"] == "ok" for p in phases) and result["sleep"]["failed"] == []
    for window in [*result["stages"], *phases]:
        assert window["wall_s"] > 0, window
        assert window["cpu_s"] >= 0, window
        assert window["peak_rss_mib"] > 0 and window["max_rss_mib"] > 0, window
        assert window["rss_growth_mib"] >= 0, window
    sleep = result["sleep"]
    assert sleep["wall_s"] >= sum(p["wall_s"] for p in phases) > 0
    assert sleep["setup_s"] > 0 and sleep["teardown_s"] > 0
    assert sleep["peak_rss_mib"] >= max(p["peak_rss_mib"] for p in phases)
    assert sleep["commits"] >= 1 and sleep["run_id"].startswith("sleep/2026-12-14-")


@pytest.mark.slow
def test_throughput_counts_the_slice_and_decay_has_work(conv26_run: tuple[int, dict[str, Any], Path]) -> None:
    _, result, workdir = conv26_run
    t = result["throughput"]
    assert t["memories"] == 184
    assert t["import_per_s"] > 0 and t["index_per_s"] > 0 and t["total_per_s"] > 0
    assert t["total_s"] == pytest.approx(t["import_s"] + t["index_s"])
    index = next(s for s in result["stages"] if s["name"] == "index")
    assert index["counts"]["added"] == 184 and index["counts"]["embeddings"] == 184
    # the run date defaults to two weeks after the import: confidence-decay stamps every observation
    decay = next(p for p in result["sleep"]["phases"] if p["name"] == "confidence-decay")
    assert result["config"]["date"] == "2026-12-14"
    assert decay["counts"]["decayed"] == 184
    assert (workdir / "memory" / ".git").is_dir()  # --workdir keeps the repository


@pytest.mark.slow
def test_table_prints_every_phase(conv26_run: tuple[int, dict[str, Any], Path]) -> None:
    _, result, _ = conv26_run
    text = bench.render(result)
    for phase in SLEEP_PHASES:
        assert f"\n{phase} " in text
    assert "184 memories" in text and "peak RSS" in text


def test_a_non_empty_workdir_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "keep.txt").write_text("mine", encoding="utf-8")
    assert bench.main(["--embed", "fake", "--workdir", str(tmp_path)]) == 2
    assert "hint:" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_window_peak_and_growth_come_from_the_samples() -> None:
    sampler = bench.RssSampler()
    sampler.samples = [(1.0, 100), (2.0, 150), (3.0, 400), (4.0, 120), (5.0, 900)]
    assert sampler.window(2.0, 4.0) == (400, 250)  # started from 150, peaked at 400
    assert sampler.window(4.5, 4.8) == (120, 0)  # no sample inside: the level it started from


def test_vm_rss_is_read_from_proc() -> None:
    if not Path("/proc/self/status").exists():
        pytest.skip("no /proc (not Linux)")
    before = bench.vm_rss_kib()
    block = bytearray(64 * 1024 * 1024)  # touch 64 MiB so the resident set grows
    for i in range(0, len(block), 4096):
        block[i] = 1
    time.sleep(0)
    assert bench.vm_rss_kib() - before > 32 * 1024
    assert bench.max_rss_kib() > before + 32 * 1024  # the high-water mark saw the block too (KiB)
    del block


def test_counts_summary_is_short() -> None:
    text = bench.summarize_counts({"a": 1, "paths": ["x", "y"], "long": "z" * 200}, width=30)
    assert text.startswith("a=1 paths=2 long=") and len(text) == 30
