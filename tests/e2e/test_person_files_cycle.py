"""End to end, the CLI in-process: facts written the way an agent writes them (title = the claim, one ``person:``
subject, the event time) are filed as facts, a no-model night mints one person file per speaker, the run lands, and
no search shows a minted person file: it says nothing but that someone exists (issue 27; docs/layout.md §2.5,
docs/retrieval.md §4.1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.main import main

NOW = "2026-11-30T09:00:00Z"
DATE = "2026-12-14"
FACTS = [
    ("Caroline", "2023-05-07", "Caroline went to an LGBTQ support group and found it powerful."),
    ("Caroline", "2023-05-25", "Caroline is researching adoption agencies to build a family."),
    ("Caroline", "2023-06-09", "Caroline gave a school talk about her transgender journey."),
    ("Melanie", "2023-05-08", "Melanie painted a sunrise over a lake last year."),
    ("Melanie", "2023-06-27", "Melanie ran a charity race for mental health on Saturday."),
    ("Melanie", "2023-07-12", "Melanie took her kids camping in the mountains."),
]
QUESTIONS = ["What did Caroline research?", "When did Melanie paint a sunrise?", "Caroline", "Melanie",
             "What is Caroline's identity?", "What do Melanie's kids like?"]


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    capsys.readouterr()
    code = main([*args, "--json"])
    out = capsys.readouterr().out
    return code, (json.loads(out) if out.strip() else None)


def test_a_night_mints_person_files_that_never_crowd_out_facts(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    monkeypatch.setenv("MEMHTML_EMBED", "fake")
    repo = tmp_path / "memory"
    assert cli(capsys, "init", str(repo))[0] == 0
    ops = [{"op": "write", "title": claim, "type": "semantic", "entities": [f"person:{who}"],
            "article_html": f'<p><mark>{claim}</mark></p><p><time datetime="{day}T12:00:00Z">{day}</time></p>'}
           for who, day, claim in FACTS]
    stream = tmp_path / "facts.jsonl"
    stream.write_text("\n".join(json.dumps(op) for op in ops) + "\n", encoding="utf-8")
    code, applied = cli(capsys, "-C", str(repo), "apply", "--file", str(stream))
    assert code == 0, applied
    facts = {r["path"] for r in applied["data"]["results"]}
    assert len(facts) == len(FACTS) and all(p.startswith("areas/inbox/") for p in facts)
    code, run = cli(capsys, "-C", str(repo), "sleep", "run", "--date", DATE)
    assert code == 0, run
    counts = {p["phase"]: p["counts"] for p in run["data"]["phases"]}
    assert counts["person-links"]["filesCreated"] == 2 and counts["person-links"]["linksAdded"] == len(FACTS)
    code, merged = cli(capsys, "-C", str(repo), "sleep", "merge", run["data"]["runId"])
    assert code == 0, merged
    stubs = {f"resources/people/{n}.html" for n in ("caroline", "melanie")}
    people = {p.relative_to(repo).as_posix() for p in (repo / "resources/people").glob("*.html")}
    assert people - {"resources/people/index.html"} == stubs
    for question in QUESTIONS:
        for scope in ([], ["--entity", "person:Caroline"], ["--type", "semantic"]):
            code, found = cli(capsys, "-C", str(repo), "search", question, *scope)
            hits = {h["path"] for h in found["data"]["hits"]}
            assert code == 0 and hits and hits <= facts, (question, scope, hits)
    code, listed = cli(capsys, "-C", str(repo), "list", "--entity", "person:Caroline")
    assert code == 0 and stubs & {f["path"] for f in listed["data"]["files"]}  # still there, still an anchor
