"""Phase 10, compress, with a scripted model (docs/phases.md §1.10): a real repo, a real index, the real kernel.

The corpus: one community of four memories under ``areas/ops`` (three semantic, linked in a ring, plus one
episodic record linked in), all in the compress band; a lonely memory with no community. Each row of the failure
table costs the one batch and writes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_memhtml.document import editors
from git_memhtml.document.model import Link
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.llm.scripted import Answer, Reply, ScriptedClient, ScriptedRequest, offered_keys
from git_memhtml.sleep.engine.journal import Folded, read_journal
from git_memhtml.sleep.engine.model import DRY_RUN
from git_memhtml.sleep.engine.run import ModelBinding, completed_phases, run_sleep
from git_memhtml.sleep.landing.rail import check_sleep_output
from git_memhtml.sleep.phases import compress
from git_memhtml.sleep.phases.scoring import retention_pass
from tests.sleep.sleep_corpus_helpers import DATE, EMBEDDER, make_env, make_repo, tree_files
from tests.sleep.synthesis_helpers import FAILING, commits_since, finish, git, mem, model_env, tree_status

OPS = {
    "areas/ops/deploy-a.html": mem("The checkout deploy window opens at night.", links=["areas/ops/deploy-b.html"]),
    "areas/ops/deploy-b.html": mem("Checkout deploys wait for the night window.", links=["areas/ops/deploy-c.html"]),
    "areas/ops/deploy-c.html": mem("Night deploys of checkout need an approver.",
                                   links=["areas/ops/deploy-a.html", "areas/ops/deploy-d.html"]),
    "areas/ops/deploy-d.html": mem("The checkout deploy failed once in the night window.",
                                   links=["areas/ops/deploy-a.html"], memory_type="episodic"),
    "areas/misc/lonely.html": mem("A lonely fact with no community."),
}
MEMBERS = ["areas/ops/deploy-a.html", "areas/ops/deploy-b.html", "areas/ops/deploy-c.html"]


def synthesis(keys: list[str], *, title: str = "Checkout night deploys", claim: str = "Checkout deploys at night.",
              paragraphs: tuple[str, ...] | None = None) -> dict[str, object]:
    """A canonical that carries forward every fixture claim of this file (the ``not-carried`` rail reads it)."""
    body = list(paragraphs) if paragraphs is not None else ["An approver signs each one.", *fixture_claims()]
    return {"title": title, "claim": claim, "paragraphs": body, "absorbedKeys": keys}


def fixture_claims() -> list[str]:
    """The claim of every memory in this file's fixtures (read at call time, so fixtures below count too)."""
    import re

    found: list[str] = []
    for name, value in list(globals().items()):
        if name.isupper() and isinstance(value, dict):
            for text in value.values():
                if isinstance(text, str):
                    found += re.findall(r"<mark>(.*?)</mark>", text)
    return found


def absorb_all(req: ScriptedRequest) -> Reply:
    return Answer(synthesis(offered_keys(req.prompt)))


@pytest.fixture()
def ops_repo(tmp_path: Path) -> GitRepo:
    return make_repo(tmp_path, OPS)


def test_the_fixture_is_one_compress_band_community(ops_repo: GitRepo) -> None:
    """Guard of every test below: the four ops memories share a community, all in the compress band."""
    env = make_env(ops_repo)
    scored = {s.row.path: s for s in retention_pass(env.db, at=env.at, root=ops_repo.root)}
    assert {scored[p].community for p in [*MEMBERS, "areas/ops/deploy-d.html"]} == {"areas/ops/deploy-a.html"}
    assert all(scored[p].band == "compress" for p in [*MEMBERS, "areas/ops/deploy-d.html"])
    assert scored["areas/misc/lonely.html"].community is None


def test_a_good_answer_folds_the_named_members_into_one_canonical(ops_repo: GitRepo) -> None:
    env, client = model_env(ops_repo, {"CompressSynthesis": absorb_all})
    base = ops_repo.head_sha()
    assert base is not None
    outcome = compress.run(env)
    finish(env, compress.PHASE, outcome)
    counts = outcome.counts.wire()
    assert counts == {"candidates": 3, "communities": 1, "batches": 1, "canonicals": 1, "archived": 3, "skipped": 0}
    assert outcome.model is not None and outcome.model.calls == 1 and outcome.model.rejected == 0
    # the prompt carries keys and texts, never a path; the episodic record is never offered
    prompt = client.requests[0].prompt
    assert offered_keys(prompt) == ["m1", "m2", "m3"]
    assert "areas/" not in prompt and "failed once" not in prompt
    canonical = "areas/ops/checkout-night-deploys.html"
    html = (ops_repo.root / canonical).read_text()
    assert editors.get_meta(html, "type") == "semantic" and editors.get_meta(html, "author") == "agent:sleep"
    archived = [f"archive/2026/{p}" for p in MEMBERS]
    # the members' own links are carried (deploy-c links the episodic record, which stays); links among the members
    # are not: they are the canonical now
    assert set(editors.get_links(html)) == {Link("supersedes", "/" + a) for a in archived} | {
        Link("relates_to", "/areas/ops/deploy-d.html")}
    for path in archived:
        old = (ops_repo.root / path).read_text()
        assert editors.get_meta(old, "superseded-by") == "/" + canonical
        assert editors.get_meta(old, "status") == "archived"
    for path in MEMBERS:
        assert not (ops_repo.root / path).exists()
    assert (ops_repo.root / "areas/ops/deploy-d.html").read_bytes() == OPS["areas/ops/deploy-d.html"].encode()
    assert read_journal(ops_repo, "HEAD", env.run_id) == [Folded(canonical, p, a) for p, a in zip(MEMBERS, archived)]
    assert [(s, p) for s, p, _ in commits_since(ops_repo, base)] == [
        ("memhtml(sleep(compress)): fold 3 memories into Checkout night deploys", "compress")]
    assert tree_status(ops_repo) == ""


def test_it_absorbs_only_the_members_it_names(ops_repo: GitRepo) -> None:
    env, _ = model_env(ops_repo, {"CompressSynthesis": [Answer(synthesis(["m1", "m3"]))]})
    outcome = compress.run(env)
    assert outcome.counts.wire()["archived"] == 2
    assert (ops_repo.root / "areas/ops/deploy-b.html").read_bytes() == OPS["areas/ops/deploy-b.html"].encode()
    assert not (ops_repo.root / "areas/ops/deploy-a.html").exists()


@pytest.mark.parametrize(("label", "reply"), FAILING, ids=[r[0] for r in FAILING])
def test_a_failed_call_costs_its_batch_and_writes_nothing(ops_repo: GitRepo, label: str, reply: Reply) -> None:
    env, _ = model_env(ops_repo, {"CompressSynthesis": [reply]})
    before = tree_files(ops_repo)
    outcome = compress.run(env)
    assert outcome.counts.wire() == {"candidates": 3, "communities": 1, "batches": 1, "canonicals": 0,
                                     "archived": 0, "skipped": 1}
    assert outcome.model is not None and outcome.model.failed_calls == 1
    assert tree_files(ops_repo) == before and tree_status(ops_repo) == ""
    assert outcome.subject == "fold 0 memories"


@pytest.mark.parametrize(("keys", "archived", "unknown"), [
    (["m1", "m9", "areas/ops/deploy-c.html"], 0, 2),   # one resolves: not a fold
    (["m1", "m2", "m4", "../../etc/passwd"], 2, 2),   # m4 exists in no batch: the episodic record is never offered
    (["m1", "m1", "m2"], 2, 0),                        # a repeat is dropped, not counted
])
def test_keys_never_offered_are_dropped_and_counted(ops_repo: GitRepo, keys: list[str], archived: int,
                                                    unknown: int) -> None:
    env, _ = model_env(ops_repo, {"CompressSynthesis": [Answer(synthesis(keys))]})
    outcome = compress.run(env)
    assert outcome.counts.wire()["archived"] == archived
    assert outcome.counts.wire()["skipped"] == (0 if archived else 1)
    assert outcome.model is not None and dict(outcome.model.rails).get("unknown-key", 0) == unknown
    assert (ops_repo.root / "areas/ops/deploy-d.html").is_file()


@pytest.mark.parametrize(("title", "claim"), [("", "Checkout deploys at night."), ("Night deploys", "   ")])
def test_a_blank_title_or_claim_skips_the_batch(ops_repo: GitRepo, title: str, claim: str) -> None:
    env, _ = model_env(ops_repo, {"CompressSynthesis": [Answer(synthesis(["m1", "m2"], title=title, claim=claim))]})
    before = tree_files(ops_repo)
    outcome = compress.run(env)
    assert outcome.counts.wire()["skipped"] == 1 and tree_files(ops_repo) == before
    assert outcome.model is not None and dict(outcome.model.rails) == {"blank": 1}


def test_a_declined_batch_is_skipped_without_a_rail(ops_repo: GitRepo) -> None:
    env, _ = model_env(ops_repo, {"CompressSynthesis": [Answer(synthesis([]))]})
    outcome = compress.run(env)
    assert outcome.counts.wire()["skipped"] == 1
    assert outcome.model is not None and outcome.model.rejected == 0 and outcome.model.failed_calls == 0


def test_the_canonical_never_takes_a_member_s_own_path(ops_repo: GitRepo) -> None:
    """excludeSelfSupersede: a title that slugs to a member's path gets the next free ordinal."""
    env, _ = model_env(ops_repo, {"CompressSynthesis": [Answer(synthesis(["m1", "m2", "m3"], title="Deploy A"))]})
    compress.run(env)
    canonical = ops_repo.root / "areas/ops/deploy-a-2.html"
    assert canonical.is_file()
    assert editors.get_meta((ops_repo.root / "archive/2026/areas/ops/deploy-a.html").read_text(),
                            "superseded-by") == "/areas/ops/deploy-a-2.html"


VETO = {
    "areas/cache/a.html": mem("The edge cache is enabled for checkout.", links=["areas/cache/b.html"]),
    "areas/cache/b.html": mem("The edge cache is not enabled for checkout.", links=["areas/cache/c.html"]),
    "areas/cache/c.html": mem("The edge cache serves checkout assets.", links=["areas/cache/a.html"]),
}

NUMBERS = {
    "areas/net/a.html": mem("The checkout timeout is 10 seconds.", links=["areas/net/b.html"]),
    "areas/net/b.html": mem("The checkout timeout is 30 seconds.", links=["areas/net/c.html"]),
    "areas/net/c.html": mem("Checkout retries wait 10 seconds after a timeout.", links=["areas/net/a.html"]),
}

P95 = {
    "areas/lat/a.html": mem("Checkout p95 latency stays under 300 ms.", links=["areas/lat/b.html"]),
    "areas/lat/b.html": mem("Checkout latency is tracked on the payments dashboard.", links=["areas/lat/c.html"]),
    "areas/lat/c.html": mem("Checkout latency alerts page the on-call engineer.", links=["areas/lat/a.html"]),
}


RETRIES = {
    "areas/net/a.html": mem("The checkout timeout is 10 seconds.", links=["areas/net/b.html"]),
    "areas/net/b.html": mem("Checkout retries wait 30 seconds after a timeout.", links=["areas/net/c.html"]),
    "areas/net/c.html": mem("Checkout timeouts page the on-call engineer.", links=["areas/net/a.html"]),
}

SEARCH = {
    "areas/cache/a.html": mem("The edge cache is not enabled for search.", links=["areas/cache/b.html"]),
    "areas/cache/b.html": mem("The edge cache serves checkout assets.", links=["areas/cache/c.html"]),
    "areas/cache/c.html": mem("The edge cache holds checkout images.", links=["areas/cache/a.html"]),
}


HANDOFF = {
    "areas/oncall/a.html": mem("The platform handoff is on Monday.", links=["areas/oncall/b.html"]),
    "areas/oncall/b.html": mem("The platform handoff is on Tuesday.", links=["areas/oncall/c.html"]),
    "areas/oncall/c.html": mem("The platform handoff note lives in the channel topic.", links=["areas/oncall/a.html"]),
}

PROMISE = {
    "areas/runbooks/a.html": mem("Jonah will update the failover runbook.", links=["areas/runbooks/b.html"]),
    "areas/runbooks/b.html": mem("Jonah updated the failover runbook.", links=["areas/runbooks/c.html"]),
    "areas/runbooks/c.html": mem("The failover runbook lives in the ops wiki.", links=["areas/runbooks/a.html"]),
}

SYNC = {
    "areas/sync/a.html": mem("The platform sync runs on Monday mornings.", links=["areas/sync/b.html"]),
    "areas/sync/b.html": mem("The platform sync notes live in the team wiki.", links=["areas/sync/c.html"]),
    "areas/sync/c.html": mem("The platform sync is chaired by the team lead.", links=["areas/sync/a.html"]),
}


@pytest.mark.parametrize("files", [P95, RETRIES, SEARCH, PROMISE], ids=["p95", "numbers", "negation", "promise-done"])
def test_members_that_differ_fold_when_the_canonical_carries_each(tmp_path: Path, files: dict[str, str]) -> None:
    """Compress decides on the canonical, not on the members' differences (issue 27): members of a batch state
    different facts by design; one number in one member ("p95"), two numbers of two facts, one negated fact among
    plain ones, once the canonical states each of them, is a fold (the member-to-member veto refused all three)."""
    repo = make_repo(tmp_path, files)
    env, _ = model_env(repo, {"CompressSynthesis": [Answer(synthesis(["m1", "m2", "m3"]))]})
    outcome = compress.run(env)
    assert outcome.counts.wire()["archived"] == 3 and outcome.counts.wire()["canonicals"] == 1
    assert outcome.model is not None and outcome.model.rails == ()


@pytest.mark.parametrize(("files", "keys"), [(VETO, ["m1", "m2", "m3"]), (NUMBERS, ["m1", "m2"]),
                                            (HANDOFF, ["m1", "m2", "m3"])],
                         ids=["claim-and-negation", "two-values-of-one-number", "two-times-of-one-slot"])
def test_one_fact_stated_two_ways_is_never_one_canonical(tmp_path: Path, files: dict[str, str],
                                                         keys: list[str]) -> None:
    """A contradiction is not two facts: even a canonical that repeats both sides may not retire them (docs/veto.md
    §4 "Contradictions"); the pair stays for a person (or edge-typing's contradicts) to decide."""
    repo = make_repo(tmp_path, files)
    env, _ = model_env(repo, {"CompressSynthesis": [Answer(synthesis(keys))]})
    before = tree_files(repo)
    outcome = compress.run(env)
    assert outcome.counts.wire()["archived"] == 0 and outcome.counts.wire()["skipped"] == 1
    assert outcome.model is not None and dict(outcome.model.rails) == {"veto": 1}
    assert tree_files(repo) == before


def test_a_canonical_that_flips_a_member_s_polarity_refuses_the_batch(tmp_path: Path) -> None:
    """No two members diverge, but the canonical states one of them negated: the whole batch is refused."""
    files = {
        "areas/cache/a.html": mem("The edge cache is enabled for checkout.", links=["areas/cache/b.html"]),
        "areas/cache/b.html": mem("The edge cache serves checkout assets.", links=["areas/cache/c.html"]),
        "areas/cache/c.html": mem("The edge cache holds checkout images.", links=["areas/cache/a.html"]),
    }
    repo = make_repo(tmp_path, files)
    flipped = synthesis(["m1", "m2", "m3"], claim="The edge cache serves checkout assets.", paragraphs=(
        "The edge cache holds checkout images.", "The edge cache is not enabled for checkout."))
    env, _ = model_env(repo, {"CompressSynthesis": [Answer(flipped)]})
    before = tree_files(repo)
    outcome = compress.run(env)
    assert outcome.counts.wire()["archived"] == 0 and outcome.counts.wire()["skipped"] == 1
    assert outcome.model is not None and dict(outcome.model.rails) == {"veto": 1}
    assert tree_files(repo) == before


def test_a_canonical_that_states_one_side_of_two_polarities_refuses_the_batch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, VETO)
    one_side = synthesis(["m1", "m2", "m3"], claim="The edge cache is enabled for checkout.",
                         paragraphs=("It serves checkout assets.",))
    env, _ = model_env(repo, {"CompressSynthesis": [Answer(one_side)]})
    outcome = compress.run(env)
    assert outcome.counts.wire()["archived"] == 0
    assert outcome.model is not None and dict(outcome.model.rails) == {"veto": 1}


def test_the_members_that_agree_with_the_canonical_fold_without_the_other(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, NUMBERS)
    text = "The checkout timeout is 10 seconds. Checkout retries wait 10 seconds after a timeout."
    env, _ = model_env(repo, {"CompressSynthesis": [Answer(synthesis(["m1", "m3"], claim=text, paragraphs=()))]})
    assert compress.run(env).counts.wire()["archived"] == 2
    assert (repo.root / "areas/net/b.html").is_file()


TWO = {
    **OPS,
    "areas/pay/a.html": mem("Payments settle daily.", links=["areas/pay/b.html"]),
    "areas/pay/b.html": mem("Payment settlement runs each day.", links=["areas/pay/c.html"]),
    "areas/pay/c.html": mem("Daily settlement closes payments.", links=["areas/pay/a.html"]),
}


def _titled(req: ScriptedRequest) -> Reply:
    return Answer(synthesis(offered_keys(req.prompt), title=f"Folded batch {req.index + 1}"))


def test_one_commit_per_folded_batch_with_the_counts_as_they_stood(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, TWO)
    env, _ = model_env(repo, {"CompressSynthesis": _titled})
    base = repo.head_sha()
    assert base is not None
    outcome = compress.run(env)
    finish(env, compress.PHASE, outcome)
    rows = commits_since(repo, base)
    assert [(s, p) for s, p, _ in rows] == [
        ("memhtml(sleep(compress)): fold 3 memories into Folded batch 1", "compress"),
        ("memhtml(sleep(compress)): fold 3 memories into Folded batch 2", "compress"),
    ]
    # the first commit is made as the second batch is about to be written: both calls are in its counts
    assert rows[0][2]["canonicals"] == 1 and rows[0][2]["archived"] == 3 and rows[0][2]["inputTokens"] == 200
    assert outcome.model is not None and rows[1][2] == {**outcome.counts.wire(), **outcome.model.wire()}
    assert rows[1][2]["canonicals"] == 2 and rows[1][2]["archived"] == 6


def test_the_budget_running_out_mid_phase_skips_the_rest(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, TWO)
    env, client = model_env(repo, {"CompressSynthesis": _titled}, remaining=1)
    outcome = compress.run(env)
    assert outcome.counts.wire() == {"candidates": 6, "communities": 2, "batches": 2, "canonicals": 1,
                                     "archived": 3, "skipped": 1}
    assert outcome.model is not None and outcome.model.budget_skipped == 1 and len(client.requests) == 1
    assert (repo.root / "areas/pay/a.html").is_file()


def test_no_model_reports_what_main_reports(ops_repo: GitRepo) -> None:
    env = make_env(ops_repo)
    outcome = compress.run(env)
    assert outcome.counts.wire() == {"candidates": 0, "communities": 0, "batches": 0, "canonicals": 0,
                                     "archived": 0, "skipped": 0}
    assert outcome.detail == "no model bound" and outcome.model is None and outcome.subject == ""


def test_a_dry_run_asks_nothing(ops_repo: GitRepo) -> None:
    env, client = model_env(ops_repo, {"CompressSynthesis": absorb_all}, dry_run=True)
    outcome = compress.run(env)
    assert outcome.detail == DRY_RUN and client.requests == [] and outcome.counts.wire()["archived"] == 0


# --- through the runner: one commit per batch, the landing rail, a failed phase's own commits dropped -------------

THREE = {
    **TWO,
    "areas/queue/a.html": mem("The queue drains hourly.", links=["areas/queue/b.html"]),
    "areas/queue/b.html": mem("Hourly the queue is drained.", links=["areas/queue/c.html"]),
    "areas/queue/c.html": mem("Draining the queue happens each hour.", links=["areas/queue/a.html"]),
}
RUN_PHASES = ("preflight", "arc-synthesis", "compress", "report")


def commits_since_ref(repo: GitRepo, base: str, tip: str) -> list[tuple[str, str, dict[str, object]]]:
    out = git(repo.root, "log", "--reverse", "--format=%s%x1f%(trailers:key=Memhtml-Phase,valueonly,separator=)"
              "%x1f%(trailers:key=Memhtml-Counts,valueonly,separator=)%x1e", f"{base}..{tip}")
    rows = []
    for record in out.split("\x1e"):
        if record.strip():
            subject, phase, counts = record.strip("\n").split("\x1f")
            rows.append((subject, phase.strip(), json.loads(counts.strip())))
    return rows


@pytest.mark.slow
def test_a_run_makes_one_commit_per_batch_and_lands_through_the_rail(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, THREE)
    client = ScriptedClient({"CompressSynthesis": _titled, "ArcPlan": [Answer({"entries": []})]})
    db = IndexDB.for_repo(repo)
    try:
        report = run_sleep(repo, db, date=DATE, phases=RUN_PHASES, embedder=EMBEDDER, clock=lambda: f"{DATE}T09:00:00Z",
                           model=ModelBinding(client))
        assert report.failed_phases == []
        rows = commits_since_ref(repo, report.base_sha, report.head_sha)
        assert [p for _, p, _ in rows] == ["compress", "compress", "compress", "report"]
        assert report.commits == tuple(repo.commits_between(report.base_sha, report.head_sha))  # steps included
        assert len(report.commits) == 4
        compress_report = next(r for r in report.phases if r.phase == "compress")
        assert compress_report.counts == rows[2][2]  # the runner's commit carries the final counts
        assert compress_report.counts["canonicals"] == 3 and compress_report.counts["archived"] == 9
        check_sleep_output(repo, report.run_id, report.base_sha, report.head_sha)
        assert completed_phases(repo, report.base_sha, report.head_sha)["compress"][1] == rows[2][2]
    finally:
        db.close()


def _third_call_breaks(req: ScriptedRequest) -> Reply:
    if req.index == 2:
        raise RuntimeError("the client broke on the third batch")
    return _titled(req)


@pytest.mark.slow
def test_a_phase_that_fails_after_a_step_commit_leaves_no_commit_of_its_own(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, THREE)
    client = ScriptedClient({"CompressSynthesis": _third_call_breaks, "ArcPlan": [Answer({"entries": []})]})
    db = IndexDB.for_repo(repo)
    try:
        report = run_sleep(repo, db, date=DATE, phases=RUN_PHASES, embedder=EMBEDDER, clock=lambda: f"{DATE}T09:00:00Z",
                           model=ModelBinding(client))
    finally:
        db.close()
    assert report.failed_phases == ["compress"]
    assert [r.schema_name for r in client.requests].count("CompressSynthesis") == 3
    assert [p for _, p, _ in commits_since_ref(repo, report.base_sha, report.head_sha)] == ["report"]
    for path in TWO:
        assert repo.read_path_at(report.head_sha, path) == TWO[path].encode()
    check_sleep_output(repo, report.run_id, report.base_sha, report.head_sha)


def _with_dana(path: str, text: str) -> dict[str, str]:
    """The ops community plus ``text`` at ``path``, linked into it (and linking back)."""
    return {**OPS, path: text,
            "areas/ops/deploy-a.html": mem("The checkout deploy window opens at night.",
                                           links=["areas/ops/deploy-b.html", path])}


@pytest.mark.parametrize("path", ["resources/people/dana.html", "areas/ops/dana.html"])
def test_a_person_file_in_the_community_is_never_offered(tmp_path: Path, path: str) -> None:
    """A person file is the anchor of ``about_person`` links, not a fact: compress never offers or archives it,
    wherever it is filed (it says what it is: titled by the person's name, naming the person)."""
    anchor = mem("Dana runs the checkout night deploys.", title="Dana", entities=["person:Dana"],
                 links=["areas/ops/deploy-a.html"])
    repo = make_repo(tmp_path, _with_dana(path, anchor))
    env, client = model_env(repo, {"CompressSynthesis": absorb_all})
    scored = {s.row.path: s for s in retention_pass(env.db, at=env.at, root=repo.root)}
    assert scored[path].community is not None and scored[path].band == "compress"  # it would be a candidate
    assert path not in [s.row.path for s in compress.candidates(env, list(scored.values()))]
    compress.run(env)
    assert (repo.root / path).is_file()
    assert client.requests and all("Dana runs" not in req.prompt for req in client.requests)


def test_a_fact_filed_under_resources_people_is_folded_like_any_fact(tmp_path: Path) -> None:
    """The original's placement filed every semantic memory naming a person under ``resources/people/``. Such a fact
    (titled by its claim) is no person's anchor: compress offers it and may fold it (issue 27)."""
    path = "resources/people/dana-runs-the-checkout-night-deploys.html"
    fact = mem("Dana runs the checkout night deploys.", entities=["person:Dana"], links=["areas/ops/deploy-a.html"])
    repo = make_repo(tmp_path, _with_dana(path, fact))
    env, client = model_env(repo, {"CompressSynthesis": absorb_all})
    scored = {s.row.path: s for s in retention_pass(env.db, at=env.at, root=repo.root)}
    assert path in [s.row.path for s in compress.candidates(env, list(scored.values()))]
    outcome = compress.run(env)
    assert outcome.counts.wire()["archived"] == 4
    assert any("Dana runs" in req.prompt for req in client.requests)
    assert not (repo.root / path).exists() and (repo.root / "archive/2026" / path).is_file()
    canonical = "areas/inbox/checkout-night-deploys.html"  # members in two folders: the inbox, never the people
    assert editors.get_meta((repo.root / canonical).read_text(), "author") == "agent:sleep"


def test_a_canonical_of_facts_filed_with_the_people_goes_to_the_inbox() -> None:
    """``resources/people`` holds person files only: a canonical is a fact (docs/layout.md §2.2)."""
    people = ["resources/people/a.html", "resources/people/b.html"]
    assert compress.canonical_folder(people) == "areas/inbox"
    assert compress.canonical_folder(["areas/ops/a.html", "areas/ops/b.html"]) == "areas/ops"


@pytest.mark.parametrize(("title", "claim", "paragraphs"), [
    ("Services overview", "Services exist.", ()),
    ("Everything is one fact", "Everything is one fact.", ("It is all the same.",)),
])
def test_a_canonical_that_carries_no_member_forward_archives_nothing(
    ops_repo: GitRepo, title: str, claim: str, paragraphs: tuple[str, ...]
) -> None:
    """Grounded synthesis: a member is archived only if the canonical carries its claim (rail ``not-carried``)."""
    env, _ = model_env(ops_repo, {"CompressSynthesis": [Answer(synthesis(
        ["m1", "m2", "m3"], title=title, claim=claim, paragraphs=paragraphs))]})
    outcome = compress.run(env)
    assert outcome.counts.wire()["archived"] == 0 and outcome.counts.wire()["canonicals"] == 0
    assert outcome.model is not None and dict(outcome.model.rails) == {"not-carried": 3}
    assert all((ops_repo.root / p).is_file() for p in MEMBERS)


@pytest.mark.parametrize(("files", "keys", "claim"), [
    (SYNC, ["m1", "m2", "m3"],
     "The platform sync runs weekly; its notes live in the team wiki and the lead chairs it."),
    (PROMISE, ["m1", "m3"], "Jonah updated the failover runbook, which lives in the ops wiki."),
], ids=["drops-a-time", "states-a-promise-as-done"])
def test_a_canonical_that_drops_a_time_or_turns_a_promise_refuses_the_batch(
        tmp_path: Path, files: dict[str, str], keys: list[str], claim: str) -> None:
    """The canonical speaks of the member's fact but without its day ("on Monday mornings" → "weekly"), or says done
    what the member only promised: it misstates the member, so the whole batch is refused (docs/veto.md §4)."""
    repo = make_repo(tmp_path, files)
    env, _ = model_env(repo, {"CompressSynthesis": [Answer(synthesis(keys, claim=claim, paragraphs=()))]})
    before = tree_files(repo)
    outcome = compress.run(env)
    assert outcome.counts.wire()["archived"] == 0 and outcome.counts.wire()["skipped"] == 1
    assert outcome.model is not None and outcome.model.rails == (("veto", 1),)
    assert tree_files(repo) == before


def test_a_canonical_that_drops_a_member_s_number_refuses_the_batch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, NUMBERS)
    text = "The checkout timeout is 10 seconds, and retries wait after a timeout."
    env, _ = model_env(repo, {"CompressSynthesis": [Answer(synthesis(["m1", "m3"], claim=text, paragraphs=()))]})
    outcome = compress.run(env)
    # m1 (10 seconds) is carried; m3 ("retries wait 10 seconds after a timeout") too; nothing else was named
    assert outcome.counts.wire()["archived"] == 2
    dropped = "The checkout timeout is short, and retries wait after a timeout."
    (tmp_path / "two").mkdir()
    env2, _ = model_env(make_repo(tmp_path / "two", NUMBERS),
                        {"CompressSynthesis": [Answer(synthesis(["m1", "m3"], claim=dropped, paragraphs=()))]})
    outcome2 = compress.run(env2)
    assert outcome2.counts.wire()["archived"] == 0 and outcome2.counts.wire()["skipped"] == 1
    # the canonical speaks of both members' facts and drops their number: it misstates them, the batch is refused
    assert outcome2.model is not None and outcome2.model.rails == (("veto", 1),)


# --- what the canonical carries, and whom it is about (issue 27) ----------------------------------------------------

CARRIED = {
    "areas/ops/roll-a.html": mem("Checkout rollouts start with one canary pod.", links=["areas/ops/roll-b.html"],
                                 memory_type="procedural", entities=["service:checkout-api"], tags=["deploys"],
                                 importance=4),
    "areas/ops/roll-b.html": mem("Checkout rollouts pause when the canary errors.", links=["areas/ops/roll-c.html"],
                                 memory_type="procedural", entities=["service:checkout-api", "person:Dana"],
                                 importance=8),
    "areas/ops/roll-c.html": mem("Checkout rollouts finish within one hour.",
                                 links=["areas/ops/roll-a.html", "areas/misc/pager.html"], memory_type="procedural",
                                 entities=["Service:Checkout-API", "tool:argo"], tags=["Deploys", "oncall"]),
    "areas/misc/pager.html": mem("The pager rotation changes on Mondays."),
}


def test_the_canonical_carries_every_member_s_entities_tags_links_and_type(tmp_path: Path) -> None:
    """A fold never makes a memory lose what it was found by: the canonical holds the union of the members' heads
    and their one type (the demo night was refused for '4 memories lost' when it did not)."""
    repo = make_repo(tmp_path, CARRIED)
    env, _ = model_env(repo, {"CompressSynthesis": [Answer(synthesis(  # m1 is the pager memory, in the community
        ["m2", "m3", "m4"], title="Checkout rollouts", claim="Checkout rollouts start with one canary pod.",
        paragraphs=("They pause when the canary errors.", "Checkout rollouts finish within one hour.")))]})
    outcome = compress.run(env)
    assert outcome.counts.wire()["archived"] == 3
    html = (repo.root / "areas/ops/checkout-rollouts.html").read_text()
    assert editors.get_meta(html, "type") == "procedural" and editors.get_meta(html, "importance") == "8"
    assert editors.get_metas(html, "entity") == ["service:checkout-api", "person:Dana", "tool:argo"]
    assert editors.get_metas(html, "tag") == ["deploys", "oncall"]
    links = set(editors.get_links(html))
    assert Link("relates_to", "/areas/misc/pager.html") in links
    assert not any(link.href.startswith("/areas/ops/roll-") for link in links)  # the members are the canonical now
    assert sum(1 for link in links if link.rel == "supersedes") == 3


def test_members_of_mixed_types_make_a_semantic_canonical(tmp_path: Path) -> None:
    files = {**CARRIED, "areas/ops/roll-b.html": mem("Checkout rollouts pause when the canary errors.",
                                                     links=["areas/ops/roll-c.html"], memory_type="agent_insight",
                                                     entities=["service:checkout-api"])}
    repo = make_repo(tmp_path, files)
    env, _ = model_env(repo, {"CompressSynthesis": [Answer(synthesis(["m2", "m3", "m4"]))]})
    assert compress.run(env).counts.wire()["archived"] == 3
    canonical = [p for p in tree_files(repo) if p.startswith("areas/ops/") and "/roll-" not in p]
    assert len(canonical) == 1
    assert editors.get_meta((repo.root / canonical[0]).read_text(), "type") == "semantic"


FRIENDS = {
    "areas/people/m-1.html": mem("Melanie values her friendship with Caroline.", links=["areas/people/c-1.html"],
                                 entities=["person:Melanie"]),
    "areas/people/c-1.html": mem("Caroline values her friendship with Melanie.", links=["areas/people/m-2.html"],
                                 entities=["person:Caroline"]),
    "areas/people/m-2.html": mem("Melanie paints sunsets on weekends.", links=["areas/people/c-2.html"],
                                 entities=["person:Melanie"]),
    "areas/people/c-2.html": mem("Caroline paints with Melanie on weekends.", links=["areas/people/n-1.html"],
                                 entities=["person:Caroline"]),
    "areas/people/n-1.html": mem("Weekend painting happens in the park.", links=["areas/people/m-1.html"]),
}


def test_a_community_of_two_people_is_offered_one_subject_a_batch(tmp_path: Path) -> None:
    """A fold never crosses subjects: one community about Melanie and Caroline becomes one batch per person (a
    memory that names nobody joins the first)."""
    repo = make_repo(tmp_path, FRIENDS)
    env, client = model_env(repo, {"CompressSynthesis": absorb_all})
    scored = {s.row.path: s for s in retention_pass(env.db, at=env.at, root=repo.root)}
    assert len({scored[p].community for p in FRIENDS}) == 1  # guard: one community
    outcome = compress.run(env)
    assert outcome.counts.wire()["batches"] == 2 and outcome.counts.wire()["canonicals"] == 2
    offered = [set(offered_keys(r.prompt)) and r.prompt for r in client.requests]
    assert all(("Caroline values" in p) != ("Melanie values" in p) for p in offered)
    for path in (p for p in tree_files(repo) if p.startswith("areas/people/") and p not in FRIENDS):
        people = {e for e in editors.get_metas((repo.root / path).read_text(), "entity") if e.startswith("person:")}
        assert len(people) == 1  # each canonical is about one person


def test_split_by_subject_keeps_each_batch_to_one_subject() -> None:
    from git_memhtml.sleep.engine.batch import Member
    from git_memhtml.sleep.phases.canonical import split_by_subject

    subjects = {"m1": frozenset({"person:melanie"}), "c1": frozenset({"person:caroline"}),
                "both": frozenset({"person:melanie", "person:caroline"}), "svc": frozenset({"service:checkout"})}
    members = [Member(ref, ref, 0) for ref in ("m1", "c1", "none", "both", "svc")] + [
        Member("named", "Melanie went hiking with the club.", 0), Member("x", "x", 1)]
    out = split_by_subject(members, subjects)
    # a memory with no subject joins only a part whose subject its text names, or a part with none (issue 27: "The
    # user reads times in UTC" batched with Priya's preference became a memory about Priya)
    assert [(m.ref, m.group) for m in out] == [("m1", 0), ("both", 0), ("svc", 0), ("named", 0), ("c1", 1),
                                               ("none", 2), ("x", 3)]


def test_names_a_subject_reads_whole_names_in_the_text() -> None:
    from git_memhtml.sleep.phases.canonical import names_a_subject

    assert names_a_subject("Priya Raman wants incident timelines in UTC.", {"person:priyaraman"})
    assert names_a_subject("The checkout-api retries three times.", {"service:checkoutapi"})
    assert not names_a_subject("Priya wants incident timelines in UTC.", {"person:priyaraman"})
    assert not names_a_subject("The user reads times in UTC.", {"person:priyaraman"})


@pytest.mark.slow
def test_a_careful_canonical_lands_through_the_run_gate(tmp_path: Path) -> None:
    """The reported night: a careful model writes a canonical carrying every member's fact; before issue 27 it
    dropped the members' entities, and the run gate refused the night (each member's entity probe lost)."""
    from git_memhtml.sleep.probes.gate import ProbeSettings, probe_run

    repo = make_repo(tmp_path, CARRIED)
    answer = synthesis(["m2", "m3", "m4"], title="Checkout rollouts", claim="Checkout rollouts start with one canary "
                       "pod.", paragraphs=("They pause when the canary errors.", "They finish within one hour."))
    client = ScriptedClient({"CompressSynthesis": [Answer(answer)], "ArcPlan": [Answer({"entries": []})]})
    db = IndexDB.for_repo(repo)
    try:
        report = run_sleep(repo, db, date=DATE, phases=RUN_PHASES, embedder=EMBEDDER,
                           clock=lambda: f"{DATE}T09:00:00Z", model=ModelBinding(client))
        assert report.failed_phases == []
        assert next(r for r in report.phases if r.phase == "compress").counts["archived"] == 3
        verdict = probe_run(repo, db, report.run_id, embedder=EMBEDDER, settings=ProbeSettings()).verdict
    finally:
        db.close()
    assert verdict.passed and verdict.lost_count == 0, [m.line() for m in verdict.lost]
