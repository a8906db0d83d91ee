"""bench/deep_grouping.py on a tiny LoCoMo-shaped conversation the test writes (fake embedder): the script runs, its
table has one row per import, and the figures hold together (what a pass folds is archived; the episodic import
offers compress nothing)."""

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
    path = PROJECT_ROOT / "bench" / "deep_grouping.py"
    spec = importlib.util.spec_from_file_location("bench_deep_grouping", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


FACTS = {
    "Sam": [["Sam repairs old bicycles in the garage on weekends.", "D1:1"],
            ["Sam repairs old bicycles in the garage most weekends.", "D1:3"],
            ["Sam sells the repaired bicycles at the Sunday market.", "D1:5"],
            ["Sam bought new tools for repairing bicycles in the garage.", "D1:7"]],
    "Alex": [["Alex grows tomatoes and basil on the balcony.", "D1:2"],
             ["Alex cooks pasta with the balcony tomatoes and basil.", "D1:4"]],
}


def tiny_locomo(path: Path) -> Path:
    turns = [{"speaker": s, "dia_id": d, "text": t} for s, facts in FACTS.items() for t, d in facts]
    conv: dict[str, Any] = {"speaker_a": "Sam", "speaker_b": "Alex", "session_1_date_time": "1:00 pm on 2 May, 2023",
                            "session_1": sorted(turns, key=lambda t: int(str(t["dia_id"]).split(":")[1]))}
    item = {"sample_id": "conv-t", "conversation": conv, "qa": [], "observation": {"session_1_observation": FACTS}}
    path.write_text(json.dumps([item]), encoding="utf-8")
    return path


def test_the_bench_runs_and_its_figures_hold_together(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = _load()
    out = tmp_path / "figures.json"
    code = bench.main(["--embed", "fake", "--data", str(tiny_locomo(tmp_path / "tiny.json")), "--json", str(out),
                       "--workdir", str(tmp_path / "work")])
    printed = capsys.readouterr().out
    assert code == 0
    rows = json.loads(out.read_text())["rows"]
    assert [(r["conversation"], r["import"]) for r in rows] == [("conv-t", "imported"), ("conv-t", "semantic")]
    assert printed.count("| conv-t |") == 2
    imported, semantic = rows
    assert imported["memories"] == semantic["memories"] == 6
    assert imported["candidates"] == 0 and imported["calls"] == 0  # episodic records are never offered
    assert semantic["candidates"] == 6 and semantic["passes"] == len(semantic["groups_per_pass"]) >= 1
    assert semantic["calls"] >= 1 and semantic["failed"] == []
    assert semantic["canonicals_per_pass"][0] >= 1 and semantic["groups_per_pass"][0] >= 1
    assert semantic["archived"] >= 2 * sum(semantic["canonicals_per_pass"])
