"""End to end, the CLI in-process: a sleep run normalises an entity's spelling, review shows it as
``entity-changed``, and after the merge ``--entity`` finds the memories under every spelling (issue 8 item 4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.main import main

NOW = "2026-11-30T09:00:00Z"
DATE = "2026-12-14"
WRITES = [
    ("DGIA audit", "The DGIA audits the ledger every quarter.", ["org:DGIA", "service:node-1"]),
    ("DGIA sign-off", "The DGIA signs the yearly report.", ["org:DGIA", "service:node-10"]),
    ("dgia meeting", "The dgia met the auditors in March.", ["org:dgia", "person:Anna"]),
    ("Hanna payroll", "Hanna runs payroll on Fridays.", ["person:Hanna"]),
]


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    capsys.readouterr()
    code = main([*args, "--json"])
    out = capsys.readouterr().out
    return code, (json.loads(out) if out.strip() else None)


def test_run_review_merge_then_entity_scope(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    monkeypatch.setenv("MEMHTML_EMBED", "fake")
    repo = tmp_path / "memory"
    assert cli(capsys, "init", str(repo))[0] == 0
    for title, claim, entities in WRITES:
        args = [f"--entity={e}" for e in entities]
        code, out = cli(capsys, "-C", str(repo), "write", "--type", "semantic", "--title", title, "--claim", claim,
                        *args)
        assert code == 0, out
    code, run = cli(capsys, "-C", str(repo), "sleep", "run", "--date", DATE)
    assert code == 0, run
    counts = {p["phase"]: p["counts"] for p in run["data"]["phases"]}
    er = counts["entity-resolution"]
    assert er["namesNormalized"] == 1 and er["fuzzyMerges"] == 0  # dgia → DGIA; node-1/node-10, Anna/Hanna apart
    assert counts["person-links"]["people"] == 2
    assert counts["retention-triage"]["evicted"] == 0
    run_id = run["data"]["runId"]
    code, review = cli(capsys, "-C", str(repo), "sleep", "review", run_id)
    assert code == 0
    changed = [f for f in review["data"]["files"] if f["classification"] == "entity-changed"]
    assert len(changed) == 1 and changed[0]["entities"] == {"removed": ["org:dgia"], "added": ["org:DGIA"]}
    assert review["data"]["summary"]["entity-changed"] == 1
    assert cli(capsys, "-C", str(repo), "sleep", "merge", run_id)[0] == 0
    for spelling in ("org:DGIA", "org:dgia", "ORG:Dgia"):
        code, found = cli(capsys, "-C", str(repo), "list", "--entity", spelling)
        assert code == 0 and len(found["data"]["files"]) == 3, (spelling, found)
        code, hits = cli(capsys, "-C", str(repo), "search", "audits ledger report auditors", "--entity", spelling)
        assert code == 0 and len(hits["data"]["hits"]) == 3, (spelling, hits)
    people = {p.name for p in (repo / "resources" / "people").glob("*.html")}
    assert people - {"index.html"} == {"anna.html", "hanna.html"}  # minted person files; facts stay where filed
    assert "<title>Anna</title>" in (repo / "resources/people/anna.html").read_text()
