"""The phase registry: every phase module declares its spec and typed counts; the engine collects and checks them.

Table-driven: one row per phase, so a new phase joins by adding its row (and its line in ``SLEEP_PHASES``).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from dataclasses import FrozenInstanceError, fields, replace
from pathlib import Path

import pytest

from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.engine.contract import (
    DETECTED_TASK_CAP,
    REGISTRY,
    SLEEP_PHASES,
    PhaseSpec,
    model_phases,
    non_committing_phases,
    phase_specs,
    register,
    sweep_phases,
)
from git_memhtml.sleep.engine.env import DetectionBudget, PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.sleep.engine.ledger import EdgePromoted
from git_memhtml.sleep.engine.model import NO_MODEL
from git_memhtml.sleep.engine.run import run_sleep
from git_memhtml.sleep.engine.runfiles import ledger_file
from git_memhtml.sleep.phases import (
    arc_synthesis,
    compress,
    edge_typing,
    placement_triage,
    task_detection,
    trace_consolidation,
)
from git_memhtml.sleep.phases.preflight import PreflightCounts
from git_memhtml.sleep.phases.relationship_mining import RelationshipMiningCounts
from git_memhtml.sleep.phases.report import ReportCounts
from git_memhtml.sleep.phases.reprieve import ReprieveCounts
from tests.sleep.sleep_corpus_helpers import EMBEDDER, git, make_env, make_repo, memory

PRE = ("preflight",)
PRE_DEDUP = ("preflight", "dedup-merge")

SPECS: list[tuple[str, bool, bool, bool, tuple[str, ...], list[str]]] = [
    # phase, model, commits, sweep, hard prerequisites, wire keys of a fully measured night (in order)
    ("preflight", False, False, False, (), [
        "active", "archived", "chunks", "embeddings", "edges", "derivedEdges", "indexedAdded", "indexedModified",
        "indexedRemoved", "indexedRenamed", "embeddingsWritten", "indexSkipped", "vectorCoverage", "indexErrors"]),
    ("dedup-merge", True, True, False, PRE, [
        "candidates", "components", "llmGroups", "vetoed", "roleGuarded", "merged", "vanished", "tasksMinted",
        "tasksRefreshed", "tasksFramed", "tasksDismissed", "tasksClosed", "tasksCapped", "skipped"]),
    ("entity-resolution", True, True, False, PRE, [
        "entities", "namesNormalized", "fuzzyMerges", "llmMerges", "aliasMerges", "pendingCorroboration",
        "reviewCandidates", "namesKeptApart", "tasksMinted", "tasksRefreshed", "tasksFramed", "tasksDismissed",
        "tasksClosed", "tasksCapped", "filesRewritten"]),
    ("person-links", False, True, False, PRE, ["people", "filesCreated", "linksAdded"]),
    ("relationship-mining", False, False, False, PRE, ["candidates", "mined", "grouped"]),
    ("edge-typing", True, True, False, PRE, [
        "candidates", "judged", "typed", "contradictions", "promoted", "skipped", "capped", "duplicates",
        "tasksMinted", "tasksRefreshed", "tasksFramed", "tasksDismissed", "tasksClosed", "tasksCapped"]),
    ("confidence-decay", False, True, True, PRE, [
        "active", "reinforced", "skippedType", "notDue", "eligible", "belowGate", "decayed"]),
    ("arc-synthesis", True, True, False, PRE, ["arcs", "planned", "written", "skipped"]),
    ("retention-triage", False, True, False, PRE_DEDUP, [
        "scored", "keep", "compress", "evict", "evicted", "unobserved"]),
    ("compress", True, True, False, PRE_DEDUP, [
        "candidates", "communities", "batches", "canonicals", "archived", "skipped", "entityGroups", "hubsSkipped",
        "passes", "pass1Groups", "pass1Batches", "pass1Canonicals", "pass2Groups", "pass2Batches", "pass2Canonicals",
        "pass3Groups", "pass3Batches", "pass3Canonicals"]),
    ("reprieve", False, True, False, PRE, ["ttlPassed", "reprieved", "expired", "maxReprieves"]),
    ("trace-consolidation", True, True, False, PRE, [
        "sessions", "batch", "unreachable", "truncated", "candidates", "refused", "merged", "written", "skipped",
        "conflicts", "consolidated", "redactions", "commitments", "commitmentTasks", "completionsApplied",
        "completionsUnmatched", "commitmentsSkipped", "commitmentsBelowFloor", "commitmentsRefreshed",
        "commitmentsFramed", "commitmentsDismissed", "commitmentsCapped"]),
    ("task-detection", True, True, False, PRE, [
        "candidates", "batches", "findings", "minted", "refreshed", "unverified", "framed", "dismissed", "closed",
        "capped", "skipped"]),
    ("placement-triage", True, True, False, PRE, [
        "candidates", "moved", "touched", "offered", "batches", "kept", "unconfident", "newFolders", "mapped",
        "rewritten", "refused", "unknownKey", "repeatKey", "confidence", "badFolder", "lookalike", "cap", "collision",
        "skipped"]),
    ("integrity", False, True, True, PRE, ["dangling", "rewritten", "dropped", "artifacts", "regenerated"]),
    ("state-export", False, True, True, PRE, ["rows", "bytes", "written"]),
    ("report", False, True, True, PRE, ["phases", "committed", "failed", "skipped", "bytes", "marksPending"]),
]
"""The seed contract (docs/phases.md §1–§0.2, docs/sleep.md §2) and today's wire keys, pinned per phase."""


def test_the_table_covers_every_phase_in_order() -> None:
    assert [row[0] for row in SPECS] == list(SLEEP_PHASES)
    assert list(phase_specs()) != [] and set(phase_specs()) == set(SLEEP_PHASES)


@pytest.mark.parametrize(("phase", "model", "commits", "sweep", "prerequisites", "keys"), SPECS,
                         ids=[row[0] for row in SPECS])
def test_each_phase_declares_its_contract_and_its_wire_keys(
    phase: str, model: bool, commits: bool, sweep: bool, prerequisites: tuple[str, ...], keys: list[str]
) -> None:
    spec = phase_specs()[phase]
    assert (spec.name, spec.model, spec.commits, spec.sweep, spec.prerequisites) == (
        phase, model, commits, sweep, prerequisites)
    assert spec.body.__module__.startswith("git_memhtml.sleep.phases.")
    assert issubclass(spec.counts, PhaseCounts)
    full = spec.counts(**{f.name: 1 for f in fields(spec.counts)})
    assert list(full.wire()) == keys
    assert json.dumps(full.wire()) == json.dumps(dict.fromkeys(keys, 1))


def test_derived_sets_are_the_seed_sets() -> None:
    assert model_phases() == {"dedup-merge", "entity-resolution", "edge-typing", "arc-synthesis", "compress",
                              "trace-consolidation", "task-detection", "placement-triage"}
    assert non_committing_phases() == {"preflight", "relationship-mining"}
    assert sweep_phases() == {"confidence-decay", "integrity", "state-export", "report"}


def test_unmeasured_counts_stay_off_the_wire() -> None:
    assert RelationshipMiningCounts().wire() == {"candidates": 0, "mined": 0}
    assert RelationshipMiningCounts(2, 2, 0).wire() == {"candidates": 2, "mined": 2, "grouped": 0}
    assert list(ReportCounts(17, 3, 0, 1).wire()) == ["phases", "committed", "failed", "skipped"]
    snapshot = PreflightCounts(*range(12))
    assert "vectorCoverage" not in snapshot.wire() and "indexErrors" not in snapshot.wire()
    assert list(replace(snapshot, index_errors=2).wire())[-1] == "indexErrors"


def _body(env: PhaseEnv) -> PhaseOutcome:
    return PhaseOutcome(ReprieveCounts(0, 0, 0, 3))


@pytest.mark.parametrize(("spec", "says"), [
    (PhaseSpec("nap", _body, ReprieveCounts), "not in SLEEP_PHASES"),
    (PhaseSpec("reprieve", _body, ReprieveCounts), "registered twice"),
    (PhaseSpec("dedup-merge", _body, ReprieveCounts, prerequisites=("report",)), "do not run before it"),
    (PhaseSpec("dedup-merge", _body, ReprieveCounts, prerequisites=("nap",)), "do not run before it"),
], ids=["unknown-name", "second-body", "late-prerequisite", "unknown-prerequisite"])
def test_register_refuses_a_spec_the_contract_cannot_hold(spec: PhaseSpec, says: str) -> None:
    before = dict(REGISTRY)
    with pytest.raises(ImportError, match=says):
        register(spec)
    assert before == REGISTRY


def test_a_phase_without_a_spec_refuses_the_run_before_anything_is_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path, {"areas/inbox/a.html": memory("A fact.")})
    monkeypatch.delitem(REGISTRY, "reprieve")
    with pytest.raises(ImportError, match=r"missing \['reprieve'\]"):
        run_sleep(repo, IndexDB.for_repo(repo), date="2026-03-10", embedder=EMBEDDER,
                  clock=lambda: "2026-03-10T09:00:00Z")
    assert git(repo.root, "branch", "--list", "sleep/*") == ""
    assert git(repo.root, "worktree", "list").count("\n") == 1


def test_phases_share_the_run_services_see_earlier_reports_and_must_return_their_counts_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path, {"areas/inbox/a.html": memory("A fact.")})
    seen: list[tuple[str, ...]] = []

    def promoting(env: PhaseEnv) -> PhaseOutcome:
        seen.append(tuple(r.phase for r in env.results))
        env.services.ledger.append(EdgePromoted("areas/inbox/a.html", "supports", "areas/inbox/b.html"))
        return PhaseOutcome(edge_typing.EdgeTypingCounts(), detail=NO_MODEL)

    monkeypatch.setitem(REGISTRY, "edge-typing", replace(phase_specs()["edge-typing"], body=promoting))
    monkeypatch.setitem(REGISTRY, "person-links", replace(phase_specs()["person-links"], body=_body))
    report = run_sleep(GitRepo.discover(repo.root), IndexDB.for_repo(repo), date="2026-03-10", embedder=EMBEDDER,
                       clock=lambda: "2026-03-10T09:00:00Z")
    assert seen == [SLEEP_PHASES[:SLEEP_PHASES.index("edge-typing")]]
    by_phase = {p.phase: p for p in report.phases}
    assert by_phase["person-links"].status == "failed" and by_phase["person-links"].counts == {}
    assert by_phase["person-links"].detail == "TypeError: person-links returned ReprieveCounts, not PersonLinksCounts"
    assert by_phase["edge-typing"].counts == {"candidates": 0, "judged": 0}
    ledger = git(repo.root, "show", f"{report.run_id}:{ledger_file(report.run_id)}")
    assert ledger == ('{"dst":"areas/inbox/b.html","kind":"edge-promoted","rel":"supports",'
                      '"src":"areas/inbox/a.html"}\n')


MODEL_BODIES = [
    ("edge-typing", edge_typing.run, NO_MODEL),
    ("arc-synthesis", arc_synthesis.run, NO_MODEL),
    ("compress", compress.run, NO_MODEL),
    ("trace-consolidation", trace_consolidation.run, trace_consolidation.NO_CONSOLIDATOR),
    ("task-detection", task_detection.run, NO_MODEL),
    ("placement-triage", placement_triage.run, NO_MODEL),
]


@pytest.mark.parametrize(("phase", "body", "detail"), MODEL_BODIES, ids=[row[0] for row in MODEL_BODIES])
def test_model_phases_read_the_model_slot(tmp_path: Path, phase: str, body: object, detail: str) -> None:
    env = replace(make_env(make_repo(tmp_path, {"areas/inbox/a.html": memory("A fact.")}), embed=False), deep=True)
    assert callable(body) and REGISTRY[phase].body is body
    outcome = body(env)
    assert outcome.detail == detail and outcome.model is None and outcome.llm_calls == 0


def test_the_input_is_frozen_and_the_services_start_fresh(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, {"areas/inbox/a.html": memory("A fact.")}), embed=False)
    with pytest.raises(FrozenInstanceError):
        env.at = "2026-03-11T00:00:00Z"  # type: ignore[misc]
    services = env.services
    assert services.budget == DetectionBudget({"open-work": DETECTED_TASK_CAP, "review": DETECTED_TASK_CAP},
                                              {"open-work": 0, "review": 0}) and services.ledger == []
    assert services.model is None and services.llm_budget.remaining is None and services.llm_budget.spent == 0


ENGINE = Path(__file__).resolve().parents[2] / "git_memhtml" / "sleep" / "engine"
HIGHER = ("git_memhtml.sleep.phases", "git_memhtml.sleep.presentation", "git_memhtml.sleep.landing")


ENGINE_MODULES = sorted(p.name for p in ENGINE.glob("*.py"))
assert "run.py" in ENGINE_MODULES and "contract.py" in ENGINE_MODULES


@pytest.mark.parametrize("module", ENGINE_MODULES)
def test_the_engine_imports_no_higher_sleep_package(module: str) -> None:
    tree = ast.parse((ENGINE / module).read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):  # every import, lazy or TYPE_CHECKING ones included
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    assert [n for n in names if n.startswith(HIGHER)] == []


def test_the_registry_completes_on_first_use_and_a_hook_import_loads_no_phase() -> None:
    probe = (
        "import sys\n"
        "import git_memhtml.sleep.landing.reconcile\n"
        "from git_memhtml.sleep.engine.contract import REGISTRY, phase_specs\n"
        "print(sorted(m for m in sys.modules if m.startswith('git_memhtml.sleep.phases')), len(REGISTRY))\n"
        "print(len(phase_specs()), 'git_memhtml.sleep.phases.report' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    assert out.splitlines() == ["[] 0", f"{len(SLEEP_PHASES)} True"]
