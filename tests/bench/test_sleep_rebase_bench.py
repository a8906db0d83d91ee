"""bench/sleep_rebase.py: the rebase benchmark runs on a small slice, replays the run and fast-forwards."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from tests.bench.bench_support import LOCOMO_JSON, PROJECT_ROOT, SHARED_DATA


def _load() -> object:
    path = PROJECT_ROOT / "bench" / "sleep_rebase.py"
    spec = importlib.util.spec_from_file_location("bench_sleep_rebase", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_rebase_bench_on_conv26_observations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not LOCOMO_JSON.exists():
        pytest.skip(f"LoCoMo data absent: {SHARED_DATA} (see docs/locomo.md)")
    monkeypatch.setenv("MEMHTML_EMBED", "fake")
    bench = _load()
    out = tmp_path / "rebase.json"
    code = bench.main(["--conversation", "conv-26", "--units", "observations", "--writes", "3",  # type: ignore[attr-defined]
                       "--data", str(LOCOMO_JSON), "--out", str(out)])
    assert code == 0
    figures = json.loads(out.read_text())
    assert figures["memories"] == 184 and figures["writes"] == 3
    assert figures["commitsReplayed"] >= 1 and figures["fastForward"] is True and figures["mergeRefusal"] is None
    assert figures["rebase_s"] > 0 and figures["gate_s"] is None
