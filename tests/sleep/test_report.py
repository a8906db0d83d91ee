"""report: the page lists every phase so far plus itself; ledger dedup; dry run writes nothing."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from git_memhtml.sleep.engine.contract import SLEEP_PHASES
from git_memhtml.sleep.engine.env import PhaseReport
from git_memhtml.sleep.engine.ledger import EdgePromoted, EntityPromoted, SessionConsolidated
from git_memhtml.sleep.engine.runfiles import ledger_file, report_path
from git_memhtml.sleep.phases import report
from git_memhtml.sleep.phases.report import merged_ledger
from git_memhtml.sleep.presentation.report_html import format_counts
from tests.sleep.sleep_corpus_helpers import DATE, make_env, make_repo, memory

SHA = "0123456789abcdef0123456789abcdef01234567"


def _results() -> list[PhaseReport]:
    out = []
    for phase in SLEEP_PHASES[:-1]:
        if phase == "retention-triage":
            out.append(PhaseReport(phase, "failed", {}, detail="StorageError: <locked> & busy"))
        elif phase == "compress":
            out.append(PhaseReport(phase, "skipped", {}, detail="hard prerequisite retention-triage failed"))
        elif phase == "confidence-decay":
            out.append(PhaseReport(phase, "ok", {"active": 3, "decayed": 2}, commit_sha=SHA))
        elif phase == "dedup-merge":
            out.append(PhaseReport(phase, "ok", {"merged": 0}, llm_calls=4))
        else:
            out.append(PhaseReport(phase, "ok", {}))
    return out


def test_report_lists_every_phase_and_itself(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, {"areas/inbox/a.html": memory("A fact.")}))
    env = replace(env, results=tuple(_results()))
    outcome = report.run(env)
    assert report_path(env.run_id) == f".memhtml/sleep/sleep-{DATE}.html"
    page = (env.repo.root / report_path(env.run_id)).read_text()
    rows = [line for line in page.splitlines() if line.startswith("<tr><td>")]
    assert len(rows) == len(SLEEP_PHASES)
    for ordinal, phase in enumerate(SLEEP_PHASES, start=1):
        assert f"<tr><td>{ordinal}</td><td>{phase}</td>" in page
    assert f"<code>{SHA[:12]}</code>" in page and SHA not in page.replace(env.base_sha, "")
    assert "<td>active=3 decayed=2</td>" in page
    assert "<summary>1 failed phases</summary>" in page
    assert "<li>retention-triage: StorageError: &lt;locked&gt; &amp; busy</li>" in page
    assert "<dt>model calls</dt><dd>4</dd>" in page
    assert f"<p><mark>sleep/{DATE}: 17 phases, 1 committed, 1 failed, 1 skipped.</mark></p>" in page
    assert outcome.counts.wire() == {"phases": 17, "committed": 1, "failed": 1, "skipped": 1,
                              "bytes": len(page.encode())}
    assert outcome.subject == f"record run sleep/{DATE}"
    assert env.repo.commit("report") is not None


def test_ledger_is_appended_and_deduplicated(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, {"areas/inbox/a.html": memory("A fact.")}))
    env.services.ledger.append(EdgePromoted("a", "contradicts", "b"))
    first = report.run(env)
    assert first.counts.wire()["marksPending"] == 1
    env.services.ledger.append(EdgePromoted("a", "contradicts", "b"))  # same mark
    env.services.ledger.append(SessionConsolidated("s1"))
    second = report.run(env)
    assert second.counts.wire()["marksPending"] == 2  # the ledger's lines, not the marks recorded this pass
    page = (env.repo.root / report_path(env.run_id)).read_text()
    assert "<td>report</td><td>ok</td><td><code></code></td><td>0</td><td>phases=1 committed=0 failed=0 skipped=0 " \
        "marksPending=2</td>" in page
    lines = (env.repo.root / ledger_file(env.run_id)).read_text().splitlines()
    assert lines == [
        '{"dst":"b","kind":"edge-promoted","rel":"contradicts","src":"a"}',
        '{"kind":"session-consolidated","session":"s1"}',
    ]
    assert merged_ledger("x\n", []) == "x\n"


def test_a_run_without_marks_has_no_marks_pending_count(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, {"areas/inbox/a.html": memory("A fact.")}))
    assert "marksPending" not in report.run(env).counts.wire()
    assert not (env.repo.root / ledger_file(env.run_id)).exists()


def test_a_mark_holding_a_line_separator_stays_one_line_across_a_resume(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, {"areas/inbox/a.html": memory("A fact.")}))
    env.services.ledger.append(EntityPromoted("person", "ann\u2028lee", "Ann\x85Lee"))
    report.run(env)
    env.services.ledger.append(SessionConsolidated("s2"))
    outcome = report.run(env)
    text = (env.repo.root / ledger_file(env.run_id)).read_text(encoding="utf-8")
    assert [json.loads(line)["kind"] for line in text.split("\n") if line] == ["entity-promoted",
                                                                              "session-consolidated"]
    assert outcome.counts.wire()["marksPending"] == 2
    env.services.ledger.clear()  # a resume whose re-run phases earn nothing new
    assert report.run(env).counts.wire()["marksPending"] == 2
    assert (env.repo.root / ledger_file(env.run_id)).read_text(encoding="utf-8") == text


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, {"areas/inbox/a.html": memory("A fact.")}), dry_run=True)
    env = replace(env, results=tuple(_results()))
    env.services.ledger.append(SessionConsolidated("s1"))
    outcome = report.run(env)
    assert outcome.counts.wire()["phases"] == 17 and outcome.counts.wire()["bytes"] > 0
    assert not (env.repo.root / ".memhtml").exists()


def test_format_counts_keeps_insertion_order() -> None:
    assert format_counts({"b": 1, "a": True, "c": [1, 2]}) == "b=1 a=true c=[1,2]"
