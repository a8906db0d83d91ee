"""Per-embedder default arm weights (git_memhtml/index/weights.py): the App uses them unless the user set a
weight, and every default passes the discrimination gate with zero inversions at the default seed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from git_memhtml.cli.app import App
from git_memhtml.eval.discriminate import run_discrimination
from git_memhtml.index.retrieval import ArmWeights
from git_memhtml.index.weights import (
    DEFAULT_WEIGHTS,
    FAKE_WEIGHTS,
    OFF_WEIGHTS,
    REMOTE_WEIGHTS,
    WORDLLAMA_WEIGHTS,
    default_weights,
)


def _repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def test_each_shipped_embedder_has_its_measured_defaults() -> None:
    assert set(DEFAULT_WEIGHTS) == {"wordllama", "fake", "openai", "off"}
    assert default_weights("wordllama") == ArmWeights(1.0, 0.1, 0.05, 0.05)
    assert default_weights(" WordLlama ") == WORDLLAMA_WEIGHTS == default_weights(None)
    assert default_weights("off") == OFF_WEIGHTS and OFF_WEIGHTS.vector == 0.0
    assert default_weights("fake") == FAKE_WEIGHTS == ArmWeights()
    assert default_weights("some-future-embedder") == REMOTE_WEIGHTS == default_weights("openai")


@pytest.mark.parametrize("embed", ["wordllama", "off", "fake"])
def test_app_uses_the_embedders_defaults_when_no_weight_is_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embed: str
) -> None:
    monkeypatch.setenv("MEMHTML_EMBED", embed)
    assert App(repo_path=_repo(tmp_path)).weights() == DEFAULT_WEIGHTS[embed]


def test_a_configured_weight_overrides_only_its_own_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _repo(tmp_path)
    monkeypatch.setenv("MEMHTML_EMBED", "wordllama")
    subprocess.run(["git", "-C", str(root), "config", "memhtml.weightrecency", "0.5"], check=True)
    monkeypatch.setenv("MEMHTML_WEIGHT_VECTOR", "1.0")
    weights = App(repo_path=root).weights()
    assert weights == ArmWeights(fts=1.0, vector=1.0, recency=0.5, salience=0.05)


def test_a_configured_value_equal_to_the_core_default_still_wins(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMHTML_EMBED", "off")
    monkeypatch.setenv("MEMHTML_WEIGHT_SALIENCE", "0.4")
    assert App(repo_path=_repo(tmp_path)).weights().salience == 0.4


@pytest.mark.parametrize("embed", sorted(DEFAULT_WEIGHTS))
def test_every_default_passes_the_discrimination_gate(tmp_path: Path, embed: str) -> None:
    report = run_discrimination(workdir=tmp_path, weights=default_weights(embed))
    assert report.passed and report.inversions == 0 and len(report.probes) > 0


def test_config_command_shows_the_weights_in_force_and_their_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from git_memhtml.cli.main import main

    root = _repo(tmp_path)
    monkeypatch.setenv("MEMHTML_EMBED", "off")
    monkeypatch.setenv("MEMHTML_WEIGHT_FTS", "2")
    capsys.readouterr()
    assert main(["-C", str(root), "config", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["data"]
    assert {k: data["memhtml.weightfts"][k] for k in ("value", "source")} == {"value": 2.0, "source": "env"}
    assert {k: data["memhtml.weightvector"][k] for k in ("value", "source")} == {
        "value": 0.0, "source": "default (off)"}
    assert {k: data["memhtml.weightrecency"][k] for k in ("value", "source")} == {
        "value": 0.05, "source": "default (off)"}
