"""bench/growth.py: every operation runs at tiny sizes and lands in the table with its exponent (no timing
assertions: the bench must not rot, the figures are the bench's business)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.bench.bench_support import PROJECT_ROOT


def _load() -> ModuleType:
    sys.path.insert(0, str(PROJECT_ROOT / "bench"))
    spec = importlib.util.spec_from_file_location("bench_growth", PROJECT_ROOT / "bench" / "growth.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


growth = _load()

EVERY_FIGURE = {
    "version_ms", "version_cpu_ms", "cli_search_cpu_ms", "cli_search_min_ms", "cli_search_min_cpu_ms",
    "search_fake_first_ms", "search_fake_p50_ms", "search_fake_p95_ms", "update_inproc_ms", "update_post_commit_ms",
    "update_reader_ms",
    "hook_commit_ms", "plain_commit_ms", "hook_added_ms", "hook_pass_ms", "apply_wall_s", "apply_cpu_s",
    "apply_rss_mib", "rebuild_wall_s", "rebuild_cpu_s", "rebuild_rss_mib", "cli_search_ms", "cli_search_rss_mib",
    "validate_wall_s", "validate_cpu_s", "validate_rss_mib", "sleep_wall_s", "sleep_cpu_s", "sleep_rss_mib",
    "sleep_teardown_s", "worktree_add_s", "worktree_remove_s",
}


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], str, Path]:
    base = tmp_path_factory.mktemp("growth")
    out = base / "growth.json"
    work = base / "work"
    capture = base / "stdout.txt"
    saved = sys.stdout
    with capture.open("w", encoding="utf-8") as sink:
        sys.stdout = sink
        try:
            code = growth.main(["--sizes", "40,80", "--queries", "5", "--cache", str(base / "cache"),
                                "--workdir", str(work), "--phase-table", "--out", str(out)])
        finally:
            sys.stdout = saved
    return code, json.loads(out.read_text(encoding="utf-8")), capture.read_text(encoding="utf-8"), work


@pytest.mark.slow
def test_every_operation_is_measured_at_every_size(tiny_run: tuple[int, dict[str, Any], str, Path]) -> None:
    code, result, _, _ = tiny_run
    assert code == 0
    assert set(result["figures"]) == EVERY_FIGURE
    for figure, by_size in result["figures"].items():
        assert set(by_size) == {"40", "80"}, figure
        if not figure.endswith("added_ms"):  # a difference of two medians may be negative
            assert all(v > 0 for v in by_size.values()), (figure, by_size)
        assert isinstance(result["exponents"][figure], float), figure
    notes = result["notes"]
    assert notes["80"]["sleep"]["failed"] == [] and notes["80"]["sleep"]["commits"] >= 1
    assert notes["40"]["search-wordllama"].startswith("skipped")
    assert notes["40"]["hook"]["index_status"]  # the hooked commits left a readable index


@pytest.mark.slow
def test_table_and_phase_table_are_printed(tiny_run: tuple[int, dict[str, Any], str, Path]) -> None:
    _, result, text, work = tiny_run
    assert "| figure | unit | 40 | 80 | k |" in text
    for figure in EVERY_FIGURE:
        assert f"| {figure} |" in text
    assert "sleep run at 80" in text and "| confidence-decay | ok |" in text
    assert f"k > {growth.FLAG_K}:" in text
    assert sorted(p.name for p in work.iterdir()) == []  # every size's copy is removed
    assert sorted(result["config"]["sizes"]) == [40, 80]


def test_exponent_is_the_least_squares_slope_of_logs() -> None:
    assert growth.exponent([(10, 1.0), (100, 10.0), (1000, 100.0)]) == pytest.approx(1.0)
    assert growth.exponent([(10, 1.0), (100, 100.0), (1000, 10_000.0)]) == pytest.approx(2.0)
    assert growth.exponent([(10, 5.0), (1000, 5.0)]) == pytest.approx(0.0)
    assert growth.exponent([(10, 5.0)]) is None  # one size: no slope
    assert growth.exponent([(10, 0.0), (100, 1.0)]) is None  # a zero time has no logarithm


def test_only_time_figures_above_the_threshold_are_flagged() -> None:
    results = {"slow_s": {10: 1.0, 100: 100.0}, "linear_ms": {10: 1.0, 100: 10.0}, "big_mib": {10: 1.0, 100: 100.0}}
    text, exps = growth.table_of([10, 100], results)
    assert exps["slow_s"] == pytest.approx(2.0)
    lines = {line.split(" | ")[0].lstrip("| "): line for line in text.splitlines()[2:]}
    assert lines["slow_s"].endswith("2.00 ! |")
    assert lines["linear_ms"].endswith("1.00 |")
    assert lines["big_mib"].endswith("2.00 |")  # memory is reported, not flagged


def test_bad_arguments_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--ops", "version,teleport"], ["--sizes", "ten"], ["--sizes", "5"]):
        with pytest.raises(SystemExit) as exit_info:
            growth.main(argv)
        assert exit_info.value.code == 2
    assert "teleport" in capsys.readouterr().err
