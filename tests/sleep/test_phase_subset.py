"""A ``--phases`` run merges: it always reads a fresh index and ends with its report (issue 27 item 3; docs/sleep.md
§2.3 "A phase subset").

Before, ``sleep run --phases confidence-decay`` made one commit that was not a report, the landing rail refused the
run at ``sleep merge`` ("not sleep output") and nothing said so when it started.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.main import main
from git_memhtml.sleep.engine.contract import SLEEP_PHASES, framing_added, select_phases
from tests.sleep.sleep_corpus_helpers import memory

FILES = {f"areas/notes/n{i}.html": memory(claim, created="2026-01-01T00:00:00Z") for i, claim in enumerate((
    "The staging deploy of checkout-api runs every Friday at noon.",
    "Warming the cache of checkout-api before the deploy cuts latency spikes.",
    "The on-call rotation hands over on Monday mornings.",
))}


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    capsys.readouterr()
    code = main([*args, "--json"])
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if captured.out.strip() else None), captured.err


@pytest.fixture
def memrepo(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMHTML_EMBED", "fake")
    monkeypatch.setenv("MEMHTML_LLM", "off")
    root = tmp_path / "mem"
    assert main(["init", str(root)]) == 0
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "seed")
    capsys.readouterr()
    return root


def test_a_phase_subset_run_says_what_it_adds_ends_with_its_report_and_merges(
        memrepo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report, err = _cli(capsys, "-C", str(memrepo), "sleep", "run", "--phases", "confidence-decay",
                             "--date", "2026-03-01")
    assert code == 0, report
    data = report["data"]
    assert [p["phase"] for p in data["phases"]] == ["preflight", "confidence-decay", "report"]
    assert "--phases: also running preflight and report" in err
    run = data["runId"]
    phases = _git(memrepo, "log", "--reverse", "--format=%(trailers:key=Memhtml-Phase,valueonly)", f"main..{run}")
    assert phases.split() == ["confidence-decay", "report"]  # decay stamped the notes; the report ends the pass
    code, merged, _ = _cli(capsys, "-C", str(memrepo), "sleep", "merge", run)
    assert code == 0 and merged["data"]["merged"] is True, merged
    assert _git(memrepo, "rev-parse", "main").strip() == _git(memrepo, "rev-parse", run).strip()


def test_the_framing_phases_are_added_only_where_missing() -> None:
    assert select_phases("compress,dedup-merge") == ("preflight", "dedup-merge", "compress", "report")
    assert framing_added("compress") == ("preflight", "report")
    assert framing_added("preflight,compress,report") == ()
    assert select_phases(None) == SLEEP_PHASES and framing_added(None) == () and framing_added(" ") == ()


@pytest.mark.parametrize("value", ["", " ", ",", " , ,"])
def test_a_phases_value_that_names_no_phase_is_refused_not_read_as_all_or_none(value: str) -> None:
    """A new user's night (issue 27): ``--phases ""`` ran all seventeen phases and ``--phases ","`` preflight and
    report alone, both without a word."""
    with pytest.raises(ValueError, match="names no phase"):
        select_phases(value)
