"""``sleep run --dry-run --deep``: mining and grouping counts with no model call and no write (docs/deep-sleep.md).

Through the CLI, with a model bound: the scripted server on loopback, whose every request would fail the test."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.main import main
from git_memhtml.llm.scripted import ScriptedRequest, Status
from git_memhtml.llm.scripted_server import ScriptedModelServer
from tests.sleep.deep_corpus import band_claims, doc, loose_claims

DATE = "2026-03-10"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def files() -> dict[str, str]:
    out = {f"areas/inbox/band-{i}.html": doc(c, title=f"band {i}") for i, c in enumerate(band_claims(11))}
    loose = iter(loose_claims(4, 4))
    for i, entity in enumerate(["host:web01", "HOST:web01", "host:web1", "host:web10"]):
        out[f"areas/inbox/host-{i}.html"] = doc(next(loose), title=f"host {i}", entities=[entity])
    return out


@pytest.fixture
def memrepo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    root = tmp_path / "mem"
    assert main(["init", str(root)]) == 0
    for path, text in files().items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "seed")
    capsys.readouterr()
    return root


@pytest.fixture
def tripwire(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ScriptedModelServer, list[str]]]:
    """A bound model whose every request is recorded (and answered 500): the test asserts none arrives."""
    seen: list[str] = []

    def refuse(req: ScriptedRequest) -> Status:
        seen.append(req.schema_name)
        return Status(500)

    schemas = ("MergePartition", "EntityClustering", "EdgeVerdicts", "ArcPlan", "ArcContent", "CompressSynthesis",
               "TaskDetection")
    with ScriptedModelServer(dict.fromkeys(schemas, refuse)) as server:
        monkeypatch.setenv("MEMHTML_LLM", "openai")
        monkeypatch.setenv("MEMHTML_LLM_URL", server.url("openai"))
        monkeypatch.setenv("MEMHTML_LLM_MODEL", "tripwire")
        monkeypatch.setenv("MEMHTML_LLM_KEY_ENV", "TRIPWIRE_KEY")
        monkeypatch.setenv("TRIPWIRE_KEY", "sk-tripwire")
        monkeypatch.setenv("MEMHTML_LLM_ATTEMPTS", "1")
        yield server, seen


def run_json(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main(["-C", str(root), "sleep", "run", "--date", DATE, *args, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)["data"]


def snapshot(root: Path) -> tuple[str, ...]:
    return (git(root, "for-each-ref"), git(root, "status", "--porcelain", "--ignored"), git(root, "worktree", "list"),
            git(root, "stash", "list"))


def counts(report: dict[str, Any], phase: str) -> dict[str, Any]:
    (line,) = [p for p in report["phases"] if p["phase"] == phase]
    return dict(line["counts"])


def test_a_deep_dry_run_counts_mining_and_grouping_and_asks_and_writes_nothing(
        memrepo: Path, capsys: pytest.CaptureFixture[str], tripwire: tuple[ScriptedModelServer, list[str]]) -> None:
    server, seen = tripwire
    before = snapshot(memrepo)
    code, report = run_json(capsys, memrepo, "--dry-run", "--deep")
    assert code == 0 and report["dryRun"] is True and report["failedPhases"] == []
    assert seen == [] and server.headers == [] and report["llmCalls"] == 0
    assert snapshot(memrepo) == before and report["commits"] == []
    assert counts(report, "relationship-mining")["grouped"] == 3
    grouped = counts(report, "compress")
    assert grouped["communities"] == 1 and grouped["entityGroups"] == 1 and grouped["hubsSkipped"] == 0
    assert grouped["passes"] == 1 and grouped["pass1Groups"] == 2 and grouped["batches"] == 2
    assert grouped["canonicals"] == 0 and grouped["archived"] == 0
    (line,) = [p for p in report["phases"] if p["phase"] == "compress"]
    assert line["detail"] == "dry run: no model calls"


def test_the_dry_run_counts_are_what_the_real_run_s_first_pass_groups(
        memrepo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Over the same phases (no model bound: the real run groups, asks nothing, folds nothing)."""
    monkeypatch.setenv("MEMHTML_LLM", "off")
    phases = "preflight,relationship-mining,compress"
    _, dry = run_json(capsys, memrepo, "--dry-run", "--deep", "--phases", phases)
    code, real = run_json(capsys, memrepo, "--deep", "--phases", phases)
    assert code == 0
    keep = ("candidates", "communities", "entityGroups", "hubsSkipped", "batches", "pass1Groups", "pass1Batches")
    assert {k: counts(dry, "compress")[k] for k in keep} == {k: counts(real, "compress")[k] for k in keep}
    assert counts(dry, "relationship-mining") == counts(real, "relationship-mining")
    assert counts(real, "compress")["pass1Groups"] == 2
