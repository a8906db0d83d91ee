"""bench/run_gate.py at a toy size: the crafted run is a finished run whose verdict is what it must be, and every
measured path (reuse, built, CLI) runs and is timed."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from git_memhtml.gitrepo import GitRepo
from git_memhtml.sleep.landing.rail import check_sleep_output
from tests.bench.bench_support import PROJECT_ROOT

BENCH = PROJECT_ROOT / "bench"


def _load(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_run_gate_bench_on_a_toy_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synth = _load("synth")
    monkeypatch.setattr(synth, "CACHE", tmp_path)
    bench = _load("run_gate")
    out = tmp_path / "figures.json"
    code = bench.main(["--sizes", "60", "--repeat", "1", "--probes", "20", "--cli", "60", "--out", str(out)])
    assert code == 0  # every verdict matched what the crafted run must give
    [figures] = json.loads(out.read_text())
    crafted = json.loads((tmp_path / "rungate-60" / ".git" / "memhtml" / "crafted.json").read_text())
    assert figures["changed"] == {"folds": 2, "journaledRewrites": 1, "silentRewrites": 1, "stamped": 2}
    # both rewrites are lost: the silent one has no record, the journaled one no evidence on the tip
    assert figures["problems"] == [] and figures["expected"]["entity"] == {"lost": 2, "explained": 2}
    families = figures["verdict"]["families"]
    assert figures["verdict"]["lostCount"] == 2 and families["entity"]["lost"] == 2
    # 20 sampled plus the folded memory the sample missed: what a run archived is always probed
    assert families["claim"]["lost"] == 0 and families["claim"]["run"] == 21
    assert figures["cli"]["exit"] == 1 and figures["cli"]["sources"] == "built/built"
    # the CLI's fake embedder has another space (1024 dims), so only the entity family (no vectors) must agree
    assert figures["cli"]["families"]["entity"] == families["entity"] and figures["cli"]["space"] == "fake:hash@1024"
    assert figures["reuse_probe_s"]["median"] > 0 and 0 < figures["built_s"]["baseShare"] < 1
    # the crafted branch is a finished run the landing rail accepts, cut from main
    repo = GitRepo.discover(tmp_path / "rungate-60")
    assert repo.branch_sha(crafted["run_id"]) == crafted["tip"] and repo.commit_sha("main") == crafted["base"]
    check_sleep_output(repo, crafted["run_id"], crafted["base"], crafted["tip"])
    assert bench.prepared(60)[1].tip == crafted["tip"]  # cached: reused, not crafted again


def test_check_verdict_names_a_figure_off_expectation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synth = _load("synth")
    monkeypatch.setattr(synth, "CACHE", tmp_path)
    bench = _load("run_gate")
    root, crafted = bench.prepared(60)
    want = bench.expected(crafted, root, 20)
    verdict = {"families": {"claim": {"lost": 0, "explained": want["claim"]["explained"]},
                            "entity": {"lost": 0, "explained": want["entity"]["explained"]}},
               "lost": []}
    problems = bench.check_verdict(verdict, want, crafted)
    assert problems[0] == "entity lost: 0, expected 2" and "are not the rewrites" in problems[1]
