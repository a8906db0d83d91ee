"""placement-triage through the runner, with the scripted model server on loopback (docs/phases.md §1.14).

The acceptance of issue 13 item 3: a deep run never moves a file dedup-merge touched on its branch (confidence-decay,
a sweep, restamps every one of them and pins none), a run killed before the phase and resumed reads the same touched
set from the branch's commits, the moves land through the landing rail, and ``validate`` passes on the result.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from git_memhtml.cli.main import main
from git_memhtml.document.editors import get_links
from git_memhtml.index.db import IndexDB
from git_memhtml.llm.scripted import Answer, Reply, ScriptedRequest, blocks
from git_memhtml.llm.scripted_server import ScriptedModelServer
from git_memhtml.sleep.engine.env import PhaseReport
from git_memhtml.sleep.engine.run import ModelBinding, RunReport, resume_sleep, run_sleep
from git_memhtml.sleep.landing.merge import merge_run
from tests.sleep.sleep_corpus_helpers import EMBEDDER, git, make_repo, memory
from tests.sleep.test_placement_triage import FILES, LINKER, ROTA, places

DUP_A = "areas/inbox/checkout-retries.html"
DUP_B = "areas/inbox/checkout-retries-again.html"
DUPLICATE = ("the checkout service retries each card payment three times after the gateway times out and logs "
             "every retry")
RUN_FILES = {**FILES, DUP_A: memory(DUPLICATE + "."), DUP_B: memory(DUPLICATE + " today.",
                                                                    created="2026-02-01T00:00:00Z")}
"""The phase tests' corpus plus two copies of one fact, which dedup-merge folds (the keeper stays in the inbox)."""

RULES = places(
    ("checkout service", "new:areas/payments"), ("Autovacuum", "resources/postgres"), ("pager rota", "areas/oncall"),
    ("Invoices", "new:areas/billing"), ("Lunch", "keep-inbox"),
)
"""Every inbox memory is proposed for a move, the dedup keeper included."""


def _merge_all(req: ScriptedRequest) -> Reply:
    return Answer({"groups": [{"memberKeys": list(blocks(req.prompt))}]})


SCRIPT = {**RULES, "MergePartition": _merge_all}
CLOCK = lambda: "2026-03-10T09:00:00Z"  # noqa: E731 - the row clock only
DATE = "2026-03-10"


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(SCRIPT) as started:
        yield started


def _binding(server: ScriptedModelServer) -> ModelBinding:
    return ModelBinding(server.client("openai", max_attempts=1))


def _placement(report: RunReport) -> PhaseReport:
    [found] = [p for p in report.phases if p.phase == "placement-triage"]
    return found


def _moves(repo_root: Path, sha: str) -> list[str]:
    return sorted(line for line in git(repo_root, "show", "-M", "--name-status", "--format=", sha).splitlines()
                  if line.startswith("R"))


class Stop(KeyboardInterrupt):
    """The kill, right after task-detection's report: placement-triage has not run."""


@pytest.mark.parametrize("repeat_flag", [True, False], ids=["resume --deep", "resume (deep from the trailers)"])
def test_a_deep_run_never_moves_what_dedup_merge_touched_and_a_resume_reads_the_same_touched_set(
    tmp_path: Path, server: ScriptedModelServer, repeat_flag: bool
) -> None:
    (tmp_path / "whole").mkdir()
    (tmp_path / "killed").mkdir()
    whole = make_repo(tmp_path / "whole", RUN_FILES)
    report = run_sleep(whole, IndexDB.for_repo(whole), date=DATE, deep=True, embedder=EMBEDDER, clock=CLOCK,
                       model=_binding(server))
    phase = _placement(report)
    dedup = next(p for p in report.phases if p.phase == "dedup-merge")
    assert dedup.counts["merged"] == 1 and dedup.commit_sha is not None
    assert DUP_A in git(whole.root, "show", "--name-only", "--format=", dedup.commit_sha).split()
    assert phase.status == "ok" and phase.commit_sha is not None, phase
    assert phase.counts["touched"] == 1 and phase.counts["moved"] == 3
    moves = _moves(whole.root, phase.commit_sha)
    assert all(DUP_A not in line for line in moves)
    decay = next(p for p in report.phases if p.phase == "confidence-decay")
    assert decay.commit_sha is not None  # the sweep restamped the inbox; it pinned nothing
    assert ROTA in git(whole.root, "show", "--name-only", "--format=", decay.commit_sha).split()

    killed = make_repo(tmp_path / "killed", RUN_FILES)
    db = IndexDB.for_repo(killed)

    def stop(done: PhaseReport) -> None:
        if done.phase == "task-detection":
            raise Stop

    with pytest.raises(Stop):
        run_sleep(killed, db, date=DATE, deep=True, embedder=EMBEDDER, clock=CLOCK, model=_binding(server),
                  after_phase=stop)
    [branch] = git(killed.root, "branch", "--list", "--format=%(refname:short)", "sleep/*").split()
    assert "placement-triage" not in git(killed.root, "log", "--format=%B", branch, "--")
    assert "Memhtml-Deep: true" in git(killed.root, "log", "-1", "--format=%B", branch, "--")
    resumed = resume_sleep(killed, db, branch, deep=repeat_flag, embedder=EMBEDDER, clock=CLOCK,
                           model=_binding(server))  # a deep run resumes as deep whether or not --deep is repeated
    again = _placement(resumed)
    assert again.status == "ok" and again.commit_sha is not None
    assert {k: again.counts[k] for k in phase.counts if not k.endswith("Tokens")} == {
        k: phase.counts[k] for k in phase.counts if not k.endswith("Tokens")}
    assert _moves(killed.root, again.commit_sha) == moves


def test_moves_land_through_the_rail_and_validate_passes_on_the_trunk(
    tmp_path: Path, server: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, RUN_FILES)
    db = IndexDB.for_repo(repo)
    report = run_sleep(repo, db, date=DATE, deep=True, embedder=EMBEDDER, clock=CLOCK, model=_binding(server))
    assert _placement(report).counts["moved"] == 3
    landed = merge_run(repo, db, report.run_id, gate=None, embedder=EMBEDDER, clock=CLOCK)
    assert landed.merged, landed
    assert (repo.root / "areas/oncall/pager-rota.html").is_file() and not (repo.root / ROTA).exists()
    hrefs = {lk.href for lk in get_links((repo.root / LINKER).read_text())}
    assert "/areas/oncall/pager-rota.html" in hrefs and "/" + ROTA not in hrefs
    listing = (repo.root / "areas/billing/index.html").read_text()  # integrity listed the new folder
    assert "invoice-run.html" in listing
    monkeypatch.chdir(repo.root)
    capsys.readouterr()
    assert main(["validate"]) == 0, capsys.readouterr().out


def test_a_deep_dry_run_counts_the_candidates_makes_no_call_and_writes_nothing(
    tmp_path: Path, server: ScriptedModelServer
) -> None:
    repo = make_repo(tmp_path, RUN_FILES)
    report = run_sleep(repo, IndexDB.for_repo(repo), date=DATE, dry_run=True, deep=True, embedder=EMBEDDER,
                       clock=CLOCK, model=_binding(server))
    phase = _placement(report)
    assert phase.counts == {"candidates": 6, "moved": 0} and phase.detail == "dry run: no model calls"
    assert server.requests == []
    assert git(repo.root, "branch", "--list", "sleep/*") == ""
    assert git(repo.root, "status", "--porcelain") == ""


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    capsys.readouterr()
    code = main([*args, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


def _phase_line(envelope: dict[str, object]) -> dict[str, object]:
    data = envelope["data"]
    assert isinstance(data, dict)
    [line] = [p for p in data["phases"] if p["phase"] == "placement-triage"]
    assert isinstance(line, dict)
    return line


def test_the_cli_runs_the_phase_only_under_deep_and_resume_takes_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "mem"
    monkeypatch.setenv("MEMHTML_NOW", "2026-02-01T00:00:00Z")
    assert _cli(capsys, "init", str(root))[0] == 0
    for args in (["--title", "Pager rota", "--claim", "The pager rota changes on Mondays."],
                 ["--title", "Vacuum", "--claim", "Autovacuum on the orders table runs every night."],
                 ["--title", "Bloat", "--claim", "Index bloat is checked weekly.", "--tag", "postgres"]):
        assert _cli(capsys, "-C", str(root), "write", "--type", "semantic", *args)[0] == 0
    assert (root / "resources/postgres").is_dir() and len(list((root / "areas/inbox").glob("*.html"))) == 2
    with ScriptedModelServer(places(("Autovacuum", "resources/postgres"), ("pager rota", "new:areas/oncall"))) as srv:
        monkeypatch.setenv("MEMHTML_LLM", "openai")
        monkeypatch.setenv("MEMHTML_LLM_URL", srv.url("openai"))
        monkeypatch.setenv("MEMHTML_LLM_MODEL", "scripted")
        monkeypatch.setenv("MEMHTML_LLM_ATTEMPTS", "1")
        code, out = _cli(capsys, "-C", str(root), "sleep", "run", "--date", "2026-02-01")
        assert code == 0 and _phase_line(out)["detail"] == "deep only"
        assert not any(r.schema_name == "PlacementTriage" for r in srv.requests)
        code, out = _cli(capsys, "-C", str(root), "sleep", "run", "--date", "2026-02-02", "--deep", "--dry-run")
        assert code == 0 and _phase_line(out)["counts"] == {"candidates": 2, "moved": 0}
        code, out = _cli(capsys, "-C", str(root), "sleep", "run", "--date", "2026-02-03", "--deep")
        line = _phase_line(out)
        assert code == 0 and line["counts"]["moved"] == 2 and line["commitSha"], line  # type: ignore[index]
        code, out = _cli(capsys, "-C", str(root), "sleep", "resume", "--deep", out["data"]["runId"])  # type: ignore[index]
        assert code == 0 and _phase_line(out)["detail"] == "already completed on this branch"


DEEP_MODEL_PHASES = ("dedup-merge", "edge-typing", "compress", "placement-triage")
"""Model phases of a deep run on this corpus; compress runs its entity groups and passes, placement-triage only
under --deep."""


@pytest.mark.parametrize("cap", [0, 1, 2])
def test_max_llm_calls_holds_across_the_deep_phases_and_the_phases_past_it_say_so(
    tmp_path: Path, server: ScriptedModelServer, cap: int
) -> None:
    repo = make_repo(tmp_path, RUN_FILES)
    binding = ModelBinding(server.client("openai", max_attempts=1), max_calls=cap)
    report = run_sleep(repo, IndexDB.for_repo(repo), date=DATE, deep=True, embedder=EMBEDDER, clock=CLOCK,
                       model=binding)
    assert len(server.requests) <= cap and report.llm_calls <= cap, (len(server.requests), report.llm_calls)
    lines = {p.phase: p for p in report.phases}
    assert sum(lines[p].llm_calls for p in DEEP_MODEL_PHASES) <= cap
    # placement-triage, the last model phase, finds the budget spent: its batches are counted, not sent
    placement = lines["placement-triage"]
    assert placement.status == "ok" and placement.counts["budgetSkipped"] >= 1 and placement.counts["moved"] == 0
    assert placement.llm_calls == 0
