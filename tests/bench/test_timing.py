"""bench/timing.py, the pieces the benchmark scripts share: the nearest-rank percentile, the scratch folder, the
by-path script loader, the JSON figures and the failure lines (table-driven where there are cases)."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest

from git_memhtml.errors import StorageError, UsageError
from tests.bench.bench_support import PROJECT_ROOT


def _module() -> ModuleType:
    path = PROJECT_ROOT / "bench" / "timing.py"
    spec = importlib.util.spec_from_file_location("bench_timing", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


timing = _module()

PCT_CASES: list[tuple[str, list[float], float, float]] = [
    ("p50 of 50: the 25th, not the 26th (q·n odd)", [float(i) for i in range(1, 51)], 0.5, 25.0),
    ("p50 of 48: the 24th", [float(i) for i in range(1, 49)], 0.5, 24.0),
    ("p95 of 50: the 48th", [float(i) for i in range(1, 51)], 0.95, 48.0),
    ("p50 of 3 unsorted: the middle", [3.0, 1.0, 2.0], 0.5, 2.0),
    ("q 0: the smallest", [5.0, 4.0], 0.0, 4.0),
    ("q 1: the largest", [5.0, 4.0, 9.0], 1.0, 9.0),
    ("one value", [7.5], 0.95, 7.5),
]


@pytest.mark.parametrize(("label", "values", "q", "want"), PCT_CASES, ids=[c[0] for c in PCT_CASES])
def test_pct_is_the_nearest_rank(label: str, values: list[float], q: float, want: float) -> None:
    assert timing.pct(values, q) == want, label
    assert want == sorted(values)[max(0, math.ceil(q * len(values)) - 1)]


def test_pct_of_nothing_raises() -> None:
    with pytest.raises(IndexError):
        timing.pct([], 0.5)


def test_scratch_refuses_a_workdir_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "someone-else.txt").write_text("x", encoding="utf-8")
    with pytest.raises(UsageError) as caught, timing.scratch(tmp_path, "t-"):
        pass
    assert str(tmp_path) in caught.value.message and caught.value.hint
    assert (tmp_path / "someone-else.txt").exists()


def test_scratch_keeps_a_given_workdir_and_creates_it(tmp_path: Path) -> None:
    given = tmp_path / "new" / "dir"
    with timing.scratch(given, "t-") as folder:
        assert folder == given and folder.is_dir()
        (folder / "kept").write_text("x", encoding="utf-8")
    assert (given / "kept").exists()


def test_scratch_removes_its_temporary_folder_even_on_an_error() -> None:
    with pytest.raises(RuntimeError), timing.scratch(None, "memhtml-timing-test-") as folder:
        (folder / "f").write_text("x", encoding="utf-8")
        seen = folder
        raise RuntimeError("boom")
    assert not seen.exists()


def test_load_script_loads_once_and_refuses_a_missing_script() -> None:
    first = timing.load_script("synth")
    assert first is timing.load_script("synth") is sys.modules["bench_synth"]
    with pytest.raises(UsageError) as caught:
        timing.load_script("no_such_script")
    assert "no_such_script.py" in caught.value.message and caught.value.hint
    assert "bench_no_such_script" not in sys.modules


def test_load_script_never_keeps_a_half_run_script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "broken.py").write_text("raise RuntimeError('half way')\n", encoding="utf-8")
    monkeypatch.setattr(timing, "BENCH_DIR", tmp_path)
    with pytest.raises(RuntimeError):
        timing.load_script("broken")
    assert "bench_broken" not in sys.modules


def test_write_json_and_failure(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    timing.write_json(out, {"name": "café", "ms": 1.5})
    assert out.read_text(encoding="utf-8").endswith("\n")
    assert json.loads(out.read_text(encoding="utf-8")) == {"name": "café", "ms": 1.5}
    timing.write_json(None, {"ignored": True})  # no path: nothing written, no error
    assert timing.failure(StorageError("disk full", hint="free space")) == "error: disk full\nhint: free space"


def test_stopwatch_and_ms_measure_elapsed_time() -> None:
    watch = timing.Stopwatch()
    spent = timing.ms(sum, range(200_000))
    assert spent > 0 and watch.wall() * 1000 >= spent and watch.cpu() >= 0
