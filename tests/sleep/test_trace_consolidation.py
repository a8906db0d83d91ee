"""trace-consolidation through the runner, with the scripted model server on loopback (issue 13 item 2; docs/phases.md
§1.12).

The acceptance lines: a candidate citing a quote absent from the transcript is refused; a candidate with two real
quotes lands as its own commit with the quotes in the body (and not in the file); ``git branch -D`` of the run and a
new run re-read the same sessions (the watermark never applied); after a merge they are not re-read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.index.traces import TraceTables
from git_memhtml.llm.scripted_server import ScriptedModelServer
from git_memhtml.sleep.engine.contract import SLEEP_PHASES
from git_memhtml.sleep.engine.env import PhaseReport
from git_memhtml.sleep.engine.run import BEFORE_LAST, ModelBinding, RunReport, resume_sleep, run_sleep
from git_memhtml.sleep.engine.runfiles import ledger_file
from git_memhtml.sleep.landing.merge import merge_run
from git_memhtml.sleep.phases.trace_consolidation import NO_SESSIONS
from git_memhtml.sleep.presentation.plan import plan
from tests.sleep.sleep_corpus_helpers import EMBEDDER, git, make_repo, memory
from tests.sleep.trace_consolidation_helpers import (
    ABSENT,
    CURRY_SCRIPT,
    POEMS,
    Q_POEMS,
    Q_SMALL,
    SMALL,
    copy_sessions,
    index_traces,
)

FILES = {"areas/inbox/lunch.html": memory("Lunch is at noon on weekdays.")}
CLOCK = lambda: "2026-03-10T09:00:00Z"  # noqa: E731 - the row clock only
DATE = "2026-03-10"
PHASES = ("preflight", "trace-consolidation", "report")


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(CURRY_SCRIPT) as started:
        yield started


def _run(repo_root: Path, db: IndexDB, server: ScriptedModelServer, date: str = DATE) -> RunReport:
    return run_sleep(GitRepo.discover(repo_root), db, date=date, phases=PHASES, embedder=EMBEDDER, clock=CLOCK,
                     model=ModelBinding(server.client("openai", max_attempts=1)))


def _phase(report: RunReport) -> PhaseReport:
    return next(p for p in report.phases if p.phase == "trace-consolidation")


def _log(root: Path, rev: str) -> list[tuple[str, str]]:
    """``(subject, body)`` of every trace-consolidation commit of ``main..rev``, oldest first."""
    out = git(root, "log", "--reverse", "--format=%s%x1f%b%x1e", f"main..{rev}")
    rows = [tuple(r.strip("\n").split("\x1f", 1)) for r in out.split("\x1e") if r.strip()]
    return [(s, b) for s, b in rows if "sleep(trace-consolidation)" in s]


def _extracted_sessions(server: ScriptedModelServer, since: int = 0) -> set[str]:
    """The sessions whose first chunk an extraction request of ``server.requests[since:]`` carried."""
    out: set[str] = set()
    for req in server.requests[since:]:
        if req.schema_name == "TraceExtraction":
            out.update(sid for sid, quote in ((SMALL, Q_SMALL[0]), (POEMS, Q_POEMS[0])) if quote in req.prompt)
    return out


def test_an_absent_quote_is_refused_and_two_real_quotes_land_as_their_own_commit(
    tmp_path: Path, server: ScriptedModelServer
) -> None:
    repo = make_repo(tmp_path, FILES)
    db = IndexDB.for_repo(repo)
    index_traces(db, copy_sessions(tmp_path))
    report = _run(repo.root, db, server)
    phase = _phase(report)
    assert phase.status == "ok" and phase.detail is None, phase
    counts = phase.counts
    assert (counts["sessions"], counts["batch"], counts["candidates"], counts["refused"]) == (2, 2, 3, 1)
    assert (counts["written"], counts["consolidated"], counts["railFabricatedQuote"]) == (2, 2, 1)
    commits = _log(repo.root, report.run_id)
    assert len(commits) == 2  # one commit per memory
    subjects = [s for s, _ in commits]
    assert any(s.endswith("distill Green curry is the most popular Thai curry.") for s in subjects), subjects
    assert not any("committee" in s for s, _ in commits)
    body = next(b for s, b in commits if "Green curry" in s)
    assert f"evidence {SMALL}: {Q_SMALL[0]}" in body and Q_SMALL[1] in body and ABSENT not in body
    written = [f for f in git(repo.root, "diff", "--name-only", "main", report.run_id).split()
               if f.endswith(".html") and "index.html" not in f and not f.startswith(".memhtml")]
    assert len(written) == 2, written
    for path in written:
        text = git(repo.root, "show", f"{report.run_id}:{path}")
        assert 'content="trace-consolidation"' in text and 'content="agent:sleep"' in text
        for quote in (*Q_SMALL, *Q_POEMS):
            assert quote not in text, (path, quote)  # quotes live in the commit body only
    ledger = git(repo.root, "show", f"{report.run_id}:{ledger_file(report.run_id)}")
    assert {json.loads(line)["session"] for line in ledger.splitlines()} == {SMALL, POEMS}
    assert TraceTables(db).consolidated() == {}  # nothing written to the state plane during the run


def test_a_dropped_branch_leaves_its_sessions_to_be_read_again_and_a_merge_marks_them(
    tmp_path: Path, server: ScriptedModelServer
) -> None:
    repo = make_repo(tmp_path, FILES)
    db = IndexDB.for_repo(repo)
    index_traces(db, copy_sessions(tmp_path))
    first = _run(repo.root, db, server)
    assert _phase(first).counts["consolidated"] == 2
    assert _extracted_sessions(server) == {SMALL, POEMS}
    git(repo.root, "branch", "-D", first.run_id)
    seen = len(server.requests)
    second = _run(repo.root, db, server)
    assert _phase(second).counts["batch"] == 2 and _extracted_sessions(server, seen) == {SMALL, POEMS}
    landed = merge_run(repo, db, second.run_id, gate=None, embedder=EMBEDDER, clock=CLOCK)
    assert landed.merged, landed
    assert set(TraceTables(db).consolidated()) == {SMALL, POEMS}
    seen = len(server.requests)
    third = _run(repo.root, db, server, date="2026-03-11")
    phase = _phase(third)
    assert phase.counts["batch"] == 0 and phase.detail == NO_SESSIONS
    assert not any(r.schema_name == "TraceExtraction" for r in server.requests[seen:])


def test_the_watermark_survives_an_index_rebuild(tmp_path: Path, server: ScriptedModelServer) -> None:
    from git_memhtml.index import indexer

    repo = make_repo(tmp_path, FILES)
    db = IndexDB.for_repo(repo)
    index_traces(db, copy_sessions(tmp_path, (SMALL,)))
    report = _run(repo.root, db, server)
    assert merge_run(repo, db, report.run_id, gate=None, embedder=EMBEDDER, clock=CLOCK).merged
    indexer.rebuild(repo, db, EMBEDDER, now="2026-03-10T10:00:00Z")
    assert set(TraceTables(db).consolidated()) == {SMALL}


def test_a_dry_run_asks_nothing_and_writes_nothing(tmp_path: Path, server: ScriptedModelServer) -> None:
    repo = make_repo(tmp_path, FILES)
    db = IndexDB.for_repo(repo)
    index_traces(db, copy_sessions(tmp_path))
    report = run_sleep(GitRepo.discover(repo.root), db, date=DATE, phases=PHASES, dry_run=True, embedder=EMBEDDER,
                       clock=CLOCK, model=ModelBinding(server.client("openai", max_attempts=1)))
    phase = _phase(report)
    assert phase.detail == "dry run: no model calls" and phase.counts["batch"] == 2
    assert server.requests == []
    assert git(repo.root, "branch", "--list", "sleep/*") == ""
    signals = plan(repo, db, at=f"{DATE}T00:00:00Z")["signals"]
    assert signals["settledSessions"]["count"] == 2  # `sleep plan` sees what the phase would read
    assert plan(repo, db, at="2026-03-09T00:00:00Z")["signals"]["settledSessions"]["count"] == 0


class Stop(KeyboardInterrupt):
    """The kill, right after trace-consolidation's report: the report phase has not run."""


def _killed_after_consolidation(tmp_path: Path, server: ScriptedModelServer, phases: tuple[str, ...] | None,
                                ) -> tuple[GitRepo, IndexDB, ModelBinding, str]:
    """A run over the two settled sessions (``phases``, or all), killed right after trace-consolidation; returns
    the repository, its index, the model binding and the interrupted run's branch."""
    repo = make_repo(tmp_path, FILES)
    db = IndexDB.for_repo(repo)
    index_traces(db, copy_sessions(tmp_path))

    def stop(done: PhaseReport) -> None:
        if done.phase == "trace-consolidation":
            raise Stop

    binding = ModelBinding(server.client("openai", max_attempts=1))
    with pytest.raises(Stop):
        run_sleep(GitRepo.discover(repo.root), db, date=DATE, phases=phases or SLEEP_PHASES, embedder=EMBEDDER,
                  clock=CLOCK, model=binding, after_phase=stop)
    [branch] = git(repo.root, "branch", "--list", "--format=%(refname:short)", "sleep/*").split()
    return repo, db, binding, branch


def test_a_run_killed_before_its_report_keeps_its_marks_on_resume(tmp_path: Path, server: ScriptedModelServer) -> None:
    repo, db, binding, branch = _killed_after_consolidation(tmp_path, server, None)
    seen = len(server.requests)
    resumed = resume_sleep(repo, db, branch, embedder=EMBEDDER, clock=CLOCK, model=binding)
    assert not [r for r in server.requests[seen:] if r.schema_name.startswith("Trace")]  # the phase is done
    report = next(p for p in resumed.phases if p.phase == "report")
    assert report.counts["marksPending"] == 2
    assert merge_run(repo, db, resumed.run_id, gate=None, embedder=EMBEDDER, clock=CLOCK).merged
    assert set(TraceTables(db).consolidated()) == {SMALL, POEMS}


def test_a_resumed_phase_subset_run_commits_nothing_out_of_order_and_merges(
    tmp_path: Path, server: ScriptedModelServer
) -> None:
    repo, db, binding, branch = _killed_after_consolidation(tmp_path, server, PHASES)
    resumed = resume_sleep(repo, db, branch, embedder=EMBEDDER, clock=CLOCK, model=binding)
    by_phase = {p.phase: p for p in resumed.phases}
    assert by_phase["confidence-decay"].detail == BEFORE_LAST and by_phase["confidence-decay"].commit_sha is None
    assert merge_run(repo, db, resumed.run_id, gate=None, embedder=EMBEDDER, clock=CLOCK).merged
    assert set(TraceTables(db).consolidated()) == {SMALL, POEMS}
