"""Phase 8, arc-synthesis, with a scripted model (docs/phases.md §1.8): a real repo, a real index, the real kernel.

The corpus: one existing arc and five memories (three linked deploy facts, two review procedures: a create needs
two evidence memories); a task that is never evidence. Evidence keys are found by the memory's text in the prompt
(``blocks``), as a model would.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.document import editors
from git_memhtml.document.model import Link
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.llm.scripted import Answer, Reply, ScriptedClient, ScriptedRequest, blocks, offered_keys
from git_memhtml.sleep.engine.model import DRY_RUN, rails_log_path
from git_memhtml.sleep.engine.run import ModelBinding, completed_phases, run_sleep
from git_memhtml.sleep.landing.rail import check_sleep_output
from git_memhtml.sleep.phases import arc_synthesis, compress
from tests.sleep.sleep_corpus_helpers import DATE, EMBEDDER, make_env, make_repo, tree_files
from tests.sleep.synthesis_helpers import FAILING, commits_since, finish, mem, model_env, tree_status

ARC = "areas/arcs/deploy-discipline.html"
FILES = {
    ARC: mem("IF a deploy is risky THEN wait for the night window.", memory_type="arc", title="Deploy discipline"),
    "areas/ops/deploy-a.html": mem("The checkout deploy window opens at night.", links=["areas/ops/deploy-b.html"]),
    "areas/ops/deploy-b.html": mem("Checkout deploys wait for the night window.", links=["areas/ops/deploy-c.html"]),
    "areas/ops/deploy-c.html": mem("Night deploys of checkout need an approver.", links=["areas/ops/deploy-a.html"]),
    "areas/ops/review.html": mem("Every schema change gets a second reviewer.", memory_type="procedural"),
    "areas/ops/schema.html": mem("Schema migrations wait for that reviewer's approval.", memory_type="procedural"),
    "areas/inbox/tasks/t.html": mem("Write the night deploy runbook.", memory_type="task"),
}
DEPLOYS = ["areas/ops/deploy-a.html", "areas/ops/deploy-b.html", "areas/ops/deploy-c.html"]
REVIEWS = ["areas/ops/review.html", "areas/ops/schema.html"]


def key_of(req: ScriptedRequest, needle: str) -> str:
    """The key of the block whose text contains ``needle``."""
    return next(k for k, text in blocks(req.prompt).items() if needle in text)


def entry(slug: str, title: str, action: str, keys: list[str]) -> dict[str, Any]:
    return {"slug": slug, "title": title, "action": action, "rationale": "seen often", "evidenceKeys": keys}


def good_plan(req: ScriptedRequest) -> Reply:
    return Answer({"entries": [
        entry(key_of(req, "Deploy discipline"), "Deploy discipline", "update",
              [key_of(req, "window opens"), key_of(req, "wait for the night")]),
        entry("", "Second reviewer for schema changes", "create",
              [key_of(req, "second reviewer"), key_of(req, "Schema migrations")]),
        entry("", "Nothing here", "skip", []),
    ]})


def content(title: str = "Deploy discipline", claim: str = "IF a deploy is risky THEN deploy at night.",
            paragraphs: tuple[str, ...] = ("Night windows keep checkout calm.",)) -> dict[str, Any]:
    return {"title": title, "claim": claim, "paragraphs": list(paragraphs)}


def echo_title(req: ScriptedRequest) -> Reply:
    """The execute answer: the planned title (the first block) as the arc's title."""
    title = next(iter(blocks(req.prompt).values()))
    return Answer(content(title=title))


@pytest.fixture()
def repo(tmp_path: Path) -> GitRepo:
    return make_repo(tmp_path, FILES)


def test_triage_then_one_write_and_one_commit_per_arc(repo: GitRepo) -> None:
    env, client = model_env(repo, {"ArcPlan": good_plan, "ArcContent": echo_title})
    base = repo.head_sha()
    assert base is not None
    outcome = arc_synthesis.run(env)
    finish(env, arc_synthesis.PHASE, outcome)
    assert outcome.counts.wire() == {"arcs": 1, "planned": 2, "written": 2, "skipped": 0}
    assert outcome.model is not None and outcome.model.calls == 3 and outcome.model.rejected == 0
    triage = client.requests[0].prompt
    assert offered_keys(triage) == ["a1", "e1", "e2", "e3", "e4", "e5"]
    assert "(utility=0.00)" in triage and "areas/" not in triage and "runbook" not in triage
    # the update: supersede-only, same path, type arc, author agent:sleep
    html = (repo.root / ARC).read_text()
    assert editors.get_meta(html, "type") == "arc" and editors.get_meta(html, "author") == "agent:sleep"
    assert Link("supersedes", "/archive/2026/" + ARC) in editors.get_links(html)
    old = (repo.root / "archive/2026" / ARC).read_text()
    assert editors.get_meta(old, "superseded-by") == "/" + ARC and "wait for the night window" in old
    created = "areas/arcs/second-reviewer-for-schema-changes.html"
    assert editors.get_meta((repo.root / created).read_text(), "type") == "arc"
    # grounded: exactly the cited memories link part_of; the others are untouched
    links = {p: editors.get_links((repo.root / p).read_text()) for p in [*DEPLOYS, *REVIEWS]}
    assert Link("part_of", "/" + ARC) in links["areas/ops/deploy-a.html"]
    assert Link("part_of", "/" + ARC) in links["areas/ops/deploy-b.html"]
    assert all(Link("part_of", "/" + created) in links[p] for p in REVIEWS)
    assert (repo.root / "areas/ops/deploy-c.html").read_bytes() == FILES["areas/ops/deploy-c.html"].encode()
    assert [(s, p) for s, p, _ in commits_since(repo, base)] == [
        ("memhtml(sleep(arc-synthesis)): update arc Deploy discipline", "arc-synthesis"),
        ("memhtml(sleep(arc-synthesis)): create arc Second reviewer for schema changes", "arc-synthesis"),
    ]
    assert tree_status(repo) == ""


@pytest.mark.parametrize(("label", "reply"), FAILING, ids=[r[0] for r in FAILING])
def test_a_failed_triage_writes_nothing(repo: GitRepo, label: str, reply: Reply) -> None:
    env, client = model_env(repo, {"ArcPlan": [reply], "ArcContent": echo_title})
    before = tree_files(repo)
    outcome = arc_synthesis.run(env)
    assert outcome.detail == "triage call produced no plan"
    assert outcome.counts.wire() == {"arcs": 1, "planned": 0, "written": 0, "skipped": 0}
    assert outcome.model is not None and outcome.model.failed_calls == 1 and len(client.requests) == 1
    assert tree_files(repo) == before and tree_status(repo) == ""


@pytest.mark.parametrize(("label", "reply"), FAILING, ids=[r[0] for r in FAILING])
def test_a_failed_write_costs_its_arc_only(repo: GitRepo, label: str, reply: Reply) -> None:
    env, _ = model_env(repo, {"ArcPlan": good_plan, "ArcContent": [reply, Answer(content(title="Second reviewer"))]})
    outcome = arc_synthesis.run(env)
    assert outcome.counts.wire() == {"arcs": 1, "planned": 2, "written": 1, "skipped": 1}
    assert (repo.root / ARC).read_bytes() == FILES[ARC].encode()
    assert not (repo.root / "archive").exists()
    assert (repo.root / "areas/arcs/second-reviewer.html").is_file()


def _plan(*entries: Callable[[ScriptedRequest], dict[str, Any]]) -> Callable[[ScriptedRequest], Reply]:
    return lambda req: Answer({"entries": [e(req) for e in entries]})


@pytest.mark.parametrize(("label", "plan", "written", "rails"), [
    ("unknown arc key", _plan(lambda r: entry("a9", "Deploy discipline", "update", ["e1"])),
     0, {"unknown-key": 1}),
    ("an evidence key as arc key", _plan(lambda r: entry("e1", "Deploy discipline", "update", ["e1"])),
     0, {"unknown-key": 1}),
    ("no evidence resolves", _plan(lambda r: entry("", "New pattern here", "create", ["e99", "areas/ops/review.html"])),
     0, {"unknown-key": 2, "ungrounded": 1}),
    ("no evidence at all", _plan(lambda r: entry("", "New pattern here", "create", [])), 0, {"ungrounded": 1}),
    ("some evidence resolves", _plan(lambda r: entry("", "New pattern here", "create", ["e4", "e77", "e5"])),
     1, {"unknown-key": 1}),
    ("a create on one memory", _plan(lambda r: entry("", "New pattern here", "create", ["e4", "e77"])),
     0, {"unknown-key": 1, "thin-evidence": 1}),
    ("an update on one memory", _plan(lambda r: entry("a1", "Deploy discipline", "update", ["e2"])), 1, {}),
    ("six evidence keys", _plan(lambda r: entry("", "New pattern here", "create",
                                                 ["e1", "e2", "e3", "e4", "e5", "e6"])), 0, {"evidence-cap": 1}),
    ("five, one of them repeated", _plan(lambda r: entry("", "New pattern here", "create",
                                                          ["e1", "e2", "e3", "e4", "e5", "e5", "e1"])), 1, {}),
    ("blank planned title", _plan(lambda r: entry("", "  ", "create", ["e1"])), 0, {"blank": 1}),
    ("one arc planned twice", _plan(lambda r: entry("a1", "Deploy discipline", "update", ["e1"]),
                                    lambda r: entry("a1", "Deploy discipline again", "update", ["e2"])),
     1, {"duplicate-target": 1}),
])
def test_the_plan_rails(repo: GitRepo, label: str, plan: Callable[[ScriptedRequest], Reply], written: int,
                        rails: dict[str, int]) -> None:
    env, _ = model_env(repo, {"ArcPlan": plan, "ArcContent": echo_title})
    outcome = arc_synthesis.run(env)
    counts = outcome.counts.wire()
    assert counts["written"] == written and counts["skipped"] == counts["planned"] - written
    assert outcome.model is not None and dict(outcome.model.rails) == rails
    log = rails_log_path(env)
    logged = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    assert Counter(e["rail"] for e in logged) == rails
    assert all(e["payload"]["rationale"] == "seen often" for e in logged)  # why the model proposed it


def test_only_the_resolved_evidence_is_linked(repo: GitRepo) -> None:
    plan = _plan(lambda r: entry("", "Night approvals", "create", [key_of(r, "approver"), "e42",
                                                                    key_of(r, "window opens")]))
    env, _ = model_env(repo, {"ArcPlan": plan, "ArcContent": [Answer(content(title="Night approvals"))]})
    arc_synthesis.run(env)
    target = Link("part_of", "/areas/arcs/night-approvals.html")
    linked = [p for p in FILES if p != ARC and target in editors.get_links((repo.root / p).read_text())]
    assert linked == ["areas/ops/deploy-a.html", "areas/ops/deploy-c.html"]


@pytest.mark.parametrize("answer", [content(title=" "), content(claim="")], ids=["blank-title", "blank-claim"])
def test_a_blank_answer_is_skipped(repo: GitRepo, answer: dict[str, Any]) -> None:
    env, _ = model_env(repo, {"ArcPlan": good_plan, "ArcContent": [Answer(answer)]})
    before = tree_files(repo)
    outcome = arc_synthesis.run(env)
    assert outcome.counts.wire() == {"arcs": 1, "planned": 2, "written": 0, "skipped": 2}
    assert outcome.model is not None and dict(outcome.model.rails) == {"blank": 2}
    assert tree_files(repo) == before


def test_the_budget_running_out_mid_phase(repo: GitRepo) -> None:
    env, client = model_env(repo, {"ArcPlan": good_plan, "ArcContent": echo_title}, remaining=2)
    outcome = arc_synthesis.run(env)
    assert outcome.counts.wire() == {"arcs": 1, "planned": 2, "written": 1, "skipped": 1}
    assert outcome.model is not None and outcome.model.budget_skipped == 1 and len(client.requests) == 2
    assert not (repo.root / "areas/arcs/second-reviewer-for-schema-changes.html").exists()


def test_the_budget_spent_before_triage(repo: GitRepo) -> None:
    env, client = model_env(repo, {"ArcPlan": good_plan}, remaining=0)
    outcome = arc_synthesis.run(env)
    assert outcome.detail == "triage call produced no plan" and client.requests == []
    assert outcome.model is not None and outcome.model.budget_skipped == 1


def test_a_created_arc_never_overwrites_a_file(repo: GitRepo) -> None:
    plan = _plan(lambda r: entry("", "Deploy discipline", "create", ["e1", "e2"]))
    env, _ = model_env(repo, {"ArcPlan": plan, "ArcContent": echo_title})
    arc_synthesis.run(env)
    assert (repo.root / ARC).read_bytes() == FILES[ARC].encode()
    assert editors.get_meta((repo.root / "areas/arcs/deploy-discipline-2.html").read_text(), "type") == "arc"


def test_no_model_reports_what_main_reports(repo: GitRepo) -> None:
    outcome = arc_synthesis.run(make_env(repo))
    assert outcome.counts.wire() == {"arcs": 0, "planned": 0, "written": 0, "skipped": 0}
    assert outcome.detail == "no model bound" and outcome.model is None and outcome.subject == ""


def test_a_dry_run_asks_nothing(repo: GitRepo) -> None:
    env, client = model_env(repo, {"ArcPlan": good_plan, "ArcContent": echo_title}, dry_run=True)
    outcome = arc_synthesis.run(env)
    assert outcome.detail == DRY_RUN and client.requests == []
    assert outcome.counts.wire() == {"arcs": 0, "planned": 0, "written": 0, "skipped": 0}


@pytest.mark.slow
def test_a_run_commits_once_per_arc_and_lands_through_the_rail(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, FILES)
    client = ScriptedClient({"ArcPlan": good_plan, "ArcContent": echo_title})
    db = IndexDB.for_repo(repo)
    try:
        report = run_sleep(repo, db, date=DATE, phases=("preflight", "arc-synthesis", "report"), embedder=EMBEDDER,
                           clock=lambda: f"{DATE}T09:00:00Z", model=ModelBinding(client))
        assert report.failed_phases == []
        done = completed_phases(repo, report.base_sha, report.head_sha)
        phases = [values for _, values in repo.log_trailers(report.base_sha, report.head_sha, "Memhtml-Phase")]
        assert phases == [["arc-synthesis"], ["arc-synthesis"], ["report"]]
        arc_report = next(r for r in report.phases if r.phase == "arc-synthesis")
        assert done["arc-synthesis"][1] == arc_report.counts and arc_report.counts["written"] == 2
        check_sleep_output(repo, report.run_id, report.base_sha, report.head_sha)
    finally:
        db.close()


SCHEMAS = [arc_synthesis.ArcPlan, arc_synthesis.ArcPlanEntry, arc_synthesis.ArcContent, compress.CompressSynthesis]


@pytest.mark.parametrize("schema", SCHEMAS, ids=[s.__name__ for s in SCHEMAS])
def test_every_answer_schema_requires_every_field_and_forbids_others(schema: type[Any]) -> None:
    """OpenAI's strict ``json_schema`` mode refuses a schema with an optional property or open objects."""
    shown = schema.model_json_schema()
    assert sorted(shown["required"]) == sorted(shown["properties"]) and shown["additionalProperties"] is False
