"""End to end: a real memory repository, the CLI in-process, a whole sleep cycle on real LoCoMo observations.

Acceptance of issue 2: run → review → merge → search on conv-26 observations (184 memories); SIGKILL after
confidence-decay then resume; a second run on an unchanged corpus; the gate; bad input.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.main import main
from git_memhtml.embed.registry import get_embedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.engine.contract import REGISTRY, SLEEP_PHASES, non_committing_phases, phase_specs
from git_memhtml.sleep.engine.env import PhaseReport
from git_memhtml.sleep.engine.run import BEFORE_LAST, run_sleep
from tests.treewalk import work_tree_paths

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"
DATE = "2026-12-14"  # two weeks after the import: one confidence-decay step is due
NOW = "2026-11-30T09:00:00Z"

needs_locomo = pytest.mark.skipif(not LOCOMO.is_file(), reason=f"LoCoMo data absent: {LOCOMO} (../shared/data)")


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    """Run ``git memhtml <args> --json`` in-process; return (exit code, parsed envelope or None)."""
    capsys.readouterr()
    code = main([*args, "--json"])
    out = capsys.readouterr().out
    return code, (json.loads(out) if out.strip() else None)


def git(repo: Path, *args: str) -> str:
    """Run the real git binary in ``repo``."""
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file of the work tree (outside .git) with its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in work_tree_paths(root)
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pin the clock and the fake embedder for the whole cycle."""
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    monkeypatch.setenv("MEMHTML_EMBED", "fake")


@pytest.fixture
def conv26(tmp_path: Path, capsys: pytest.CaptureFixture[str], env: None) -> Path:
    """A memory repository holding conv-26's 184 observations, committed and indexed."""
    if not LOCOMO.is_file():
        pytest.skip(f"LoCoMo data absent: {LOCOMO} (../shared/data)")
    stream = tmp_path / "conv-26.jsonl"
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "locomo.py"), "convert", "--conversation", "conv-26",
         "--units", "observations", "--out", str(stream)],
        check=True,
    )
    repo = tmp_path / "memory"
    assert cli(capsys, "init", str(repo))[0] == 0
    code, env_ = cli(capsys, "-C", str(repo), "apply", "--file", str(stream))
    assert code == 0, env_
    assert env_["data"]["summary"]["written"] == 184
    return repo


def run_branches(repo: Path) -> list[str]:
    """The run branches of ``repo`` (``refs/heads/sleep/*``), oldest first."""
    out = git(repo, "for-each-ref", "--sort=creatordate", "--format=%(refname:short)", "refs/heads/sleep/")
    return out.split()


def only_run(repo: Path) -> str:
    """The one run branch of ``repo``."""
    found = run_branches(repo)
    assert len(found) == 1, found
    return found[0]


def _trailers(repo: Path, rev_range: str) -> list[dict[str, str]]:
    out = git(repo, "log", "--reverse", "--format=%x00%s%x1f%(trailers:only,unfold)", rev_range)
    commits = []
    for record in out.split("\x00")[1:]:
        subject, _, trailers = record.partition("\x1f")
        parsed = dict(line.split(": ", 1) for line in trailers.strip().splitlines() if ": " in line)
        commits.append({"subject": subject, **parsed})
    return commits


@needs_locomo
def test_conv26_cycle_run_review_merge_search(conv26: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = conv26
    main_before = git(repo, "rev-parse", "main").strip()
    code, run = cli(capsys, "-C", str(repo), "sleep", "run", "--date", DATE)
    assert code == 0, run
    data = run["data"]
    run_id = data["runId"]
    assert run_id.startswith(f"sleep/{DATE}-") and run_id == only_run(repo) and data["failedPhases"] == []
    assert [p["phase"] for p in data["phases"]] == list(SLEEP_PHASES)
    # the user's checkout stays on a clean main that did not move
    assert git(repo, "symbolic-ref", "--short", "HEAD").strip() == "main"
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "rev-parse", "main").strip() == main_before
    # one commit per committing phase, each with the three trailers, none twice
    commits = _trailers(repo, f"main..{run_id}")
    phases = [c["Memhtml-Phase"] for c in commits]
    assert len(phases) == len(set(phases))
    committed = {p["phase"] for p in data["phases"] if p["commitSha"]}
    assert set(phases) == committed and not committed & non_committing_phases()
    for c in commits:
        assert c["Memhtml-Run"] == run_id
        assert isinstance(json.loads(c["Memhtml-Counts"]), dict)
        assert c["subject"].startswith(f"memhtml(sleep({c['Memhtml-Phase']})): ")
    assert {"report", "integrity", "confidence-decay"} <= committed
    # review classifies every changed file
    code, review = cli(capsys, "-C", str(repo), "sleep", "review", run_id)
    assert code == 0
    changed = set(git(repo, "diff", "--name-only", "--no-renames", f"main..{run_id}").split())
    files = review["data"]["files"]
    classified = {f["path"] for f in files} | {f["fromPath"] for f in files if f["fromPath"]}
    assert changed == classified
    assert all(f["classification"] in {"meta-only", "body-changed", "archived", "created", "deleted"} for f in files)
    # merge passes the gate and fast-forwards main; search serves the merged state
    code, merged = cli(capsys, "-C", str(repo), "sleep", "merge", run_id)
    assert code == 0, merged
    assert merged["data"]["merged"] and merged["data"]["indexUpdated"]
    assert git(repo, "rev-parse", "main").strip() == data["headSha"]
    assert git(repo, "status", "--porcelain") == ""
    code, hits = cli(capsys, "-C", str(repo), "search", "Caroline LGBTQ support group")
    assert code == 0 and hits["data"]["hits"]
    archived = [f["path"] for f in files if f["classification"] == "archived"]
    served = {h["path"] for h in hits["data"]["hits"]}
    assert not served & {f["fromPath"] for f in files if f["classification"] == "archived"}
    db = IndexDB.for_repo(GitRepo.discover(repo))
    try:
        state = db.query_one("SELECT head_sha FROM index_state WHERE id = 1")
        assert state is not None and state[0] == data["headSha"]
        for path in archived:
            row = db.query_one("SELECT archived FROM files WHERE path = ?", (path,))
            assert row == (1,)
    finally:
        db.close()
    code, status = cli(capsys, "-C", str(repo), "sleep", "status")
    assert code == 0 and status["data"]["runs"][0]["status"] == "merged"


@needs_locomo
def test_second_run_on_unchanged_corpus_changes_only_metadata(conv26: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = conv26
    code, run1 = cli(capsys, "-C", str(repo), "sleep", "run", "--date", DATE)
    assert code == 0
    assert cli(capsys, "-C", str(repo), "sleep", "merge", run1["data"]["runId"])[0] == 0
    code, run2 = cli(capsys, "-C", str(repo), "sleep", "run", "--date", DATE)
    second = run2["data"]["runId"]
    assert code == 0 and second.startswith(f"sleep/{DATE}-") and second != run1["data"]["runId"]
    code, review = cli(capsys, "-C", str(repo), "sleep", "review", second)
    memories = [f for f in review["data"]["files"] if f["kind"] == "memory"]
    assert {f["classification"] for f in memories} <= {"meta-only"}, memories
    counts = {p["phase"]: p["counts"] for p in run2["data"]["phases"]}
    assert counts["dedup-merge"]["merged"] == 0
    assert counts["retention-triage"]["evicted"] == 0
    assert counts["reprieve"]["expired"] == 0
    assert counts["person-links"]["filesCreated"] == 0


def _killing_run(repo: str, kill_after: str) -> None:
    """Child process: run a sleep cycle and SIGKILL itself right after ``kill_after`` is recorded."""
    os.environ["MEMHTML_EMBED"] = "fake"
    main_repo = GitRepo.discover(repo)
    db = IndexDB.for_repo(main_repo)

    def after(report: PhaseReport) -> None:
        if report.phase == kill_after:
            os.kill(os.getpid(), signal.SIGKILL)

    run_sleep(main_repo, db, date=DATE, embedder=get_embedder("fake"), clock=lambda: NOW, after_phase=after)


@needs_locomo
def test_sigkill_after_confidence_decay_then_resume(conv26: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = conv26
    before = set(git(repo, "ls-files").split())
    child = multiprocessing.get_context("fork").Process(target=_killing_run, args=(str(repo), "confidence-decay"))
    child.start()
    child.join(120)
    assert child.exitcode == -signal.SIGKILL
    run_id = only_run(repo)
    done = [c["Memhtml-Phase"] for c in _trailers(repo, f"main..{run_id}")]
    assert done and done[-1] == "confidence-decay"
    assert "retention-triage" not in done
    code, resumed = cli(capsys, "-C", str(repo), "sleep", "resume", run_id)
    assert code == 0, resumed
    phases = resumed["data"]["phases"]
    assert [p["phase"] for p in phases] == list(SLEEP_PHASES)
    last = max(SLEEP_PHASES.index(p) for p in done)
    for p in phases:
        if p["phase"] in done:
            assert p["status"] == "skipped" and p["detail"] == "already completed on this branch"
        elif SLEEP_PHASES.index(p["phase"]) < last and p["phase"] not in ("preflight", "relationship-mining"):
            assert p["status"] == "skipped" and p["detail"] == BEFORE_LAST  # ran before the kill, nothing to commit
        else:
            assert p["status"] == "ok"
    all_phases = [c["Memhtml-Phase"] for c in _trailers(repo, f"main..{run_id}")]
    assert len(all_phases) == len(set(all_phases)), "a phase was committed twice"
    report_page = git(repo, "show", f"{run_id}:.memhtml/sleep/{run_id.replace('/', '-')}.html")
    for phase in SLEEP_PHASES:
        assert f"<td>{phase}</td>" in report_page
    # nothing lost: every memory of main is still on the branch, live or archived
    after = set(git(repo, "ls-tree", "-r", "--name-only", run_id).split())
    for path in before:
        if path.endswith(".html") and path.split("/")[0] in {"projects", "areas", "resources"}:
            assert path in after or any(a.endswith("/" + path) and a.startswith("archive/") for a in after)
    assert cli(capsys, "-C", str(repo), "sleep", "merge", run_id)[0] == 0


def test_gate_passes_with_zero_inversions(capsys: pytest.CaptureFixture[str]) -> None:
    code, report = cli(capsys, "eval", "discriminate")
    assert code == 0
    summary = report["data"]["summary"]
    assert summary["passed"] and summary["inversions"] == 0 and summary["probes"] > 0


@pytest.fixture
def demo_repo(tmp_path: Path, capsys: pytest.CaptureFixture[str], env: None) -> Path:
    """A memory repository holding the shipped demo corpus."""
    repo = tmp_path / "memory"
    assert cli(capsys, "init", str(repo))[0] == 0
    code, applied = cli(capsys, "-C", str(repo), "apply", "--file",
                        str(ROOT / "git_memhtml" / "resources" / "demo" / "memories.jsonl"))
    assert code == 0, applied
    return repo


def test_malformed_file_is_reported_by_index_update_and_the_rest_indexed(
    demo_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = demo_repo / "areas" / "inbox" / "broken.html"
    bad.write_text("<!doctype html><html><head><title>x</title></head>"
                   "<body><article><p>no mark</p></article></body></html>")
    good = demo_repo / "areas" / "inbox" / "fine.html"
    source = next((demo_repo / "resources").rglob("*.html"))
    good.write_bytes(source.read_bytes().replace(b"<article>", b"<article>\n<!-- copy -->", 1))
    capsys.readouterr()
    code = main(["-C", str(demo_repo), "index", "update"])
    err = capsys.readouterr().err
    assert code == 1
    assert "areas/inbox/broken.html" in err and "mark" in err
    db = IndexDB.for_repo(GitRepo.discover(demo_repo))
    try:
        assert db.query_one("SELECT count(*) FROM files WHERE path = 'areas/inbox/broken.html'") == (0,)
        assert db.query_one("SELECT count(*) FROM files WHERE archived = 0")[0] >= 80  # type: ignore[index]
    finally:
        db.close()


def test_apply_with_one_invalid_op_refuses_and_leaves_the_tree_byte_identical(
    demo_repo: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    before = tree_bytes(demo_repo)
    head = git(demo_repo, "rev-parse", "HEAD")
    stream = tmp_path / "batch.jsonl"
    ok = {"op": "write", "title": "A new fact", "type": "semantic", "body": "Fresh facts are welcome here."}
    bad = {"op": "write", "title": "Broken", "type": "semantic", "article_html": "<p>no mark at all</p>"}
    stream.write_text(json.dumps(ok) + "\n" + json.dumps(bad) + "\n")
    code, env_ = cli(capsys, "-C", str(demo_repo), "apply", "--file", str(stream))
    assert code == 1 and env_["code"] == "ERR_INVALID_MEMORY"  # a refusal is the error envelope
    results = env_["results"]
    assert results[1]["code"] == "ERR_INVALID_MEMORY" and "mark" in results[1]["error"]
    assert results[0]["skipped"] and env_["commitSha"] is None
    assert tree_bytes(demo_repo) == before
    assert git(demo_repo, "rev-parse", "HEAD") == head


def test_apply_stream_with_unknown_field_is_a_usage_error(
    demo_repo: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    stream = tmp_path / "batch.jsonl"
    stream.write_text('{"op": "write", "title": "T", "type": "semantic", "body": "A b.", "colour": "red"}\nnot json\n')
    capsys.readouterr()
    code = main(["-C", str(demo_repo), "apply", "--file", str(stream)])
    err = capsys.readouterr().err
    assert code == 2
    assert "batch.jsonl:1" in err and "colour" in err and "batch.jsonl:2" in err and "hint:" in err


def test_merge_of_unknown_run_refuses_no_run(demo_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, env_ = cli(capsys, "-C", str(demo_repo), "sleep", "merge", "sleep/1999-01-01")
    assert code == 1
    assert env_["refusal"] == "no-run" and not env_["merged"] and env_["code"] == "ERR_NO_RUN"  # error envelope


def test_dirty_main_is_reported_by_plan_but_does_not_stop_a_run(
    demo_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scratch = demo_repo / "areas" / "inbox" / "draft.html"
    scratch.write_text("work in progress")
    code, plan = cli(capsys, "-C", str(demo_repo), "sleep", "plan")
    assert code == 0 and "areas/inbox/draft.html" in plan["data"]["dirty"]
    assert plan["data"]["indexFresh"] is False
    code, run = cli(capsys, "-C", str(demo_repo), "sleep", "run", "--date", DATE)
    assert code == 0, run["data"]["failedPhases"]
    assert scratch.read_text() == "work in progress"
    assert "draft.html" not in git(demo_repo, "ls-tree", "-r", "--name-only", run["data"]["runId"])


def test_dry_run_makes_no_branch_and_writes_nothing(demo_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = tree_bytes(demo_repo)
    branches = git(demo_repo, "branch", "--list")
    code, run = cli(capsys, "-C", str(demo_repo), "sleep", "run", "--dry-run", "--date", DATE)
    assert code == 0 and run["data"]["dryRun"]
    assert run["data"]["commits"] == [] and all(p["commitSha"] is None for p in run["data"]["phases"])
    assert git(demo_repo, "branch", "--list") == branches
    assert tree_bytes(demo_repo) == before
    assert git(demo_repo, "worktree", "list").count("\n") == 1


def test_failed_preflight_commits_nothing_and_skips_every_later_phase(
    demo_repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(REGISTRY, "preflight", replace(phase_specs()["preflight"], body=_phase_runner("preflight")))
    code, run = cli(capsys, "-C", str(demo_repo), "sleep", "run", "--date", DATE)
    assert code == 1
    phases = run["data"]["phases"]
    assert phases[0]["status"] == "failed"
    assert all(p["status"] == "skipped" and p["detail"] == "hard prerequisite preflight failed" for p in phases[1:])
    assert run["data"]["commits"] == [] and run["data"]["headSha"] == run["data"]["baseSha"]


def _phase_runner(fail: str) -> Callable[[Any], Any]:
    def body(env: Any) -> Any:
        (env.repo.root / "areas" / "inbox" / "half-written.html").write_text("partial")
        env.repo.stage(["areas/inbox/half-written.html"])
        raise RuntimeError(f"{fail} exploded")

    return body


def test_a_failing_phase_is_a_value_its_writes_are_undone_and_later_phases_run(
    demo_repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = replace(phase_specs()["dedup-merge"], body=_phase_runner("dedup-merge"))
    monkeypatch.setitem(REGISTRY, "dedup-merge", failing)
    code, run = cli(capsys, "-C", str(demo_repo), "sleep", "run", "--date", DATE)
    assert code == 1
    by_phase = {p["phase"]: p for p in run["data"]["phases"]}
    assert by_phase["dedup-merge"]["status"] == "failed" and "exploded" in by_phase["dedup-merge"]["detail"]
    assert by_phase["compress"]["status"] == "skipped" and by_phase["retention-triage"]["status"] == "skipped"
    assert by_phase["confidence-decay"]["status"] == "ok" and by_phase["report"]["status"] == "ok"
    tree = git(demo_repo, "ls-tree", "-r", "--name-only", run["data"]["runId"])
    assert "half-written.html" not in tree


def test_a_clean_checkout_index_seeds_the_run_and_dirty_edits_never_reach_it(
    demo_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, run = cli(capsys, "-C", str(demo_repo), "sleep", "run", "--date", DATE, "--dry-run")
    assert code == 0
    preflight = run["data"]["phases"][0]["counts"]
    assert preflight["indexedAdded"] == 0, "the run's index should start from the checkout's clean copy"
    victim = next((demo_repo / "resources").rglob("*.html"))
    original = victim.read_text()
    victim.write_text(original.replace("<mark>", "<mark>DIRTY ", 1))
    code, run = cli(capsys, "-C", str(demo_repo), "sleep", "run", "--date", DATE)
    assert code == 0
    rel = str(victim.relative_to(demo_repo))
    db = IndexDB.for_repo(GitRepo.discover(demo_repo))
    try:
        assert "DIRTY" in db.query_one("SELECT gist FROM files WHERE path = ?", (rel,))[0]  # type: ignore[index]
    finally:
        db.close()
    on_branch = git(demo_repo, "show", f"{run['data']['runId']}:{rel}")
    assert "DIRTY" not in on_branch
    assert run["data"]["phases"][0]["counts"]["indexedAdded"] > 0  # the dirty index was not copied


def test_merge_refuses_main_advanced_before_anything_moves(demo_repo: Path, capsys: pytest.CaptureFixture[str],
                                                           tmp_path: Path) -> None:
    assert cli(capsys, "-C", str(demo_repo), "sleep", "run", "--date", DATE)[0] == 0
    run_id = only_run(demo_repo)
    stream = tmp_path / "one.jsonl"
    stream.write_text(json.dumps({"op": "write", "title": "Late fact", "type": "semantic",
                                  "body": "A fact written while sleep ran."}) + "\n")
    assert cli(capsys, "-C", str(demo_repo), "apply", "--file", str(stream))[0] == 0
    main_before, branch_before = git(demo_repo, "rev-parse", "main"), git(demo_repo, "rev-parse", run_id)
    code, env_ = cli(capsys, "-C", str(demo_repo), "sleep", "merge", run_id)
    assert code == 1 and env_["refusal"] == "main-advanced" and env_["hint"] and env_["code"] == "ERR_GIT"
    assert "data" not in env_ and env_["gate"] is None  # refused before the gate; no marks applied
    assert git(demo_repo, "rev-parse", "main") == main_before
    assert git(demo_repo, "rev-parse", run_id) == branch_before


def test_merge_refuses_gate_failed_and_an_already_merged_run(demo_repo: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from git_memhtml.errors import DiscriminationFailed
    from git_memhtml.sleep.landing.merge import merge_run

    assert cli(capsys, "-C", str(demo_repo), "sleep", "run", "--date", DATE)[0] == 0
    run_id = only_run(demo_repo)
    repo = GitRepo.discover(demo_repo)
    main_before = repo.branch_sha("main")

    def refusing_gate() -> object:
        raise DiscriminationFailed("3 probes inverted", hint="git memhtml eval discriminate --json")

    db = IndexDB.for_repo(repo)
    try:
        report = merge_run(repo, db, run_id, gate=refusing_gate, embedder=get_embedder("fake"),
                           clock=lambda: NOW)
        assert not report.merged and report.refusal == "gate-failed" and report.marks_applied is None
        assert repo.branch_sha("main") == main_before
        assert merge_run(repo, db, run_id, gate=None, embedder=get_embedder("fake"),
                         clock=lambda: NOW).merged
        again = merge_run(repo, db, run_id, gate=None, embedder=get_embedder("fake"), clock=lambda: NOW)
        assert again.refusal == "main-advanced" and again.reason and "already merged" in again.reason
    finally:
        db.close()


def test_merge_refuses_when_the_checkout_has_conflicting_uncommitted_edits(
    demo_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, run = cli(capsys, "-C", str(demo_repo), "sleep", "run", "--date", DATE)
    assert code == 0
    run_id = run["data"]["runId"]
    touched = git(demo_repo, "diff", "--name-only", f"main..{run_id}", "--", "resources").split()
    victim = demo_repo / next(p for p in touched if (demo_repo / p).is_file())
    victim.write_text(victim.read_text() + "\n<!-- my uncommitted edit -->\n")
    main_before = git(demo_repo, "rev-parse", "main")
    code, env_ = cli(capsys, "-C", str(demo_repo), "sleep", "merge", run_id)
    assert code == 1 and env_["refusal"] == "dirty-checkout" and "stash" in env_["hint"]
    assert env_["code"] == "ERR_DIRTY_TREE"
    assert git(demo_repo, "rev-parse", "main") == main_before
    assert victim.read_text().endswith("<!-- my uncommitted edit -->\n")


def test_merge_prints_the_gate_figures(demo_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Human output and --json both carry the gate's mrr, inversions and probes; its temp folder is gone."""
    import tempfile

    code, run = cli(capsys, "-C", str(demo_repo), "sleep", "run", "--date", DATE)
    assert code == 0
    private = tmp_path / "tmp"  # this test's own temp folder: other suites' gate folders never show up in it
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    capsys.readouterr()
    code = main(["-C", str(demo_repo), "sleep", "merge", run["data"]["runId"]])
    out = capsys.readouterr().out
    assert code == 0, out
    assert re.search(r"^gate passed: 36 probes, 0 inversions, mrr 1\.0000 \(floor 0\.85\)$", out, re.M), out
    assert list(private.glob("memhtml-gate-*")) == []


def test_merge_json_carries_the_gate_summary(demo_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, run = cli(capsys, "-C", str(demo_repo), "sleep", "run", "--date", DATE)
    assert code == 0
    code, env_ = cli(capsys, "-C", str(demo_repo), "sleep", "merge", run["data"]["runId"])
    assert code == 0
    gate = env_["data"]["gate"]
    assert (gate["probes"], gate["inversions"], gate["passed"]) == (36, 0, True) and gate["mrr"] >= 0.85


def test_skip_gate_warns_and_abort_drops_the_branch(demo_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, first = cli(capsys, "-C", str(demo_repo), "sleep", "run", "--date", DATE)
    assert code == 0
    code, second = cli(capsys, "-C", str(demo_repo), "sleep", "run", "--date", DATE)  # a second id of the day
    assert code == 0 and second["data"]["runId"] != first["data"]["runId"]
    main_before = git(demo_repo, "rev-parse", "main")
    code, env_ = cli(capsys, "-C", str(demo_repo), "sleep", "abort", second["data"]["runId"])
    assert code == 0 and env_["data"]["branchDeleted"]
    assert git(demo_repo, "branch", "--list", second["data"]["runId"]) == ""
    assert git(demo_repo, "rev-parse", "main") == main_before
    capsys.readouterr()
    code = main(["-C", str(demo_repo), "sleep", "merge", first["data"]["runId"], "--skip-gate"])
    captured = capsys.readouterr()
    assert code == 0 and "--skip-gate" in captured.err and "warning" in captured.err
    code, _ = cli(capsys, "-C", str(demo_repo), "sleep", "abort", "sleep/1999-01-01")
    assert code == 1  # no-run
