"""edge-typing with a scripted model: candidates, verdicts, rails, corroboration and the failure answers.

Real git repos, real index and state plane, the real phases before it (relationship-mining) and the in-process
scripted client (``llm/scripted.py``), which decodes each answer with the phase's schema exactly as a wire client
does. docs/phases.md §1.6, docs/models.md §7.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from git_memhtml.document import editors
from git_memhtml.document.model import Link
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.index.edges import MinedEdge, replace_mined_edges
from git_memhtml.llm.defaults import DEFAULT_MAX_PROMPT_TOKENS, MAX_MAX_PROMPT_TOKENS
from git_memhtml.llm.scripted import (
    Answer,
    Malformed,
    Refusal,
    Reply,
    ScriptedClient,
    ScriptedRequest,
    Stall,
    Status,
    blocks,
)
from git_memhtml.sleep.engine.batch import Member, key_members
from git_memhtml.sleep.engine.env import LlmBudget, PhaseEnv, RunServices
from git_memhtml.sleep.engine.ledger import EdgePromoted
from git_memhtml.sleep.engine.model import DRY_RUN, PhaseModel, rails_log_path
from git_memhtml.sleep.engine.run import ModelBinding, run_sleep
from git_memhtml.sleep.engine.runfiles import ledger_file
from git_memhtml.sleep.landing.merge import merge_run
from git_memhtml.sleep.phases import edge_typing, relationship_mining
from git_memhtml.sleep.phases.edge_pairs import (
    CandidatePair,
    batch_order,
    candidate_pairs,
    rank_shared_entity_pairs,
    shared_directory,
)
from git_memhtml.sleep.phases.edge_typing import EdgeVerdict, EdgeVerdicts, Night, apply_verdicts
from git_memhtml.sleep.phases.tasks import (
    DETECTED_DIR,
    Measurement,
    detected_task_path,
    detection_key,
    open_detections,
    render_detected_task,
)
from git_memhtml.store import edits
from tests.sleep.sleep_corpus_helpers import (
    AT,
    EMBEDDER,
    commit_and_reindex,
    git,
    make_env,
    make_repo,
    memory,
    tree_files,
    write,
)

SCHEMA = "EdgeVerdicts"

FRIDAY = "areas/ops/deploy-friday.html"
MONDAY = "areas/ops/deploy-monday.html"
WARM = "areas/ops/cache-warm.html"
COLD = "areas/ops/cache-cold.html"

CORPUS = {
    FRIDAY: memory("The staging deploy of checkout-api runs every Friday at noon."),
    MONDAY: memory("The staging deploy of checkout-api runs every Monday at noon."),
    WARM: memory("Warming the cache of checkout-api before the deploy cuts latency spikes."),
    COLD: memory("Warming the cache of checkout-api before the deploy cuts the latency spikes."),
    "resources/people/ann.html": memory("Ann likes green tea in the morning."),
}
"""Two mined pairs (relationship-mining finds exactly these): the deploy days contradict, the cache notes support."""

Rule = Callable[[str], tuple[str, str, float] | None]


def verdicts_by(rule: Rule, *, extra: Sequence[Mapping[str, object]] = ()) -> Callable[[ScriptedRequest], Reply]:
    """A responder that judges every offered pair by ``rule(member text)`` (``None``: leave the pair out)."""

    def respond(req: ScriptedRequest) -> Reply:
        out: list[Mapping[str, object]] = []
        for key, text in blocks(req.prompt).items():
            verdict = rule(text)
            if verdict is not None:
                rel, direction, confidence = verdict
                out.append({"pairKey": key, "rel": rel, "direction": direction, "confidence": confidence,
                            "rationale": f"judged {rel}"})
        return Answer({"verdicts": [*out, *extra]})

    return respond


def good_rule(text: str) -> tuple[str, str, float] | None:
    """Deploy days contradict; the colder cache note (dst) supports the warmer one (src)... as src < dst:
    ``cache-cold`` is src, ``cache-warm`` is dst, and the verdict makes dst the subject."""
    if "Friday" in text:
        return ("contradicts", "src_to_dst", 0.93)
    if "cache" in text:
        return ("supports", "dst_to_src", 0.88)
    return None


def with_model(env: PhaseEnv, script: Mapping[str, object], *, remaining: int | None = None,
               timeout: float = 30.0, max_prompt: int = DEFAULT_MAX_PROMPT_TOKENS) -> tuple[PhaseEnv, ScriptedClient]:
    client = ScriptedClient(script, timeout=timeout)  # type: ignore[arg-type]
    services = RunServices(model=client, llm_budget=LlmBudget(remaining=remaining), max_prompt=max_prompt)
    return replace(env, services=services), client


WIDE = MAX_MAX_PROMPT_TOKENS
"""A prompt cap out of the way, for the tests of the carried-over 30 pairs a call (docs/models.md §11 splits a batch
over ``memhtml.llmmaxprompt``; tests/sleep/test_prompt_cap.py holds the cap's own tests)."""


def mined_env(tmp_path: Path, files: Mapping[str, str] = CORPUS) -> PhaseEnv:
    env = make_env(make_repo(tmp_path, files))
    relationship_mining.run(env)
    return env


def links_of(env: PhaseEnv, path: str) -> list[Link]:
    return [ln for ln in editors.get_links((env.repo.root / path).read_text(encoding="utf-8"))
            if ln.rel != "about_person"]


def detections(env: PhaseEnv) -> list[tuple[str, str, str, int]]:
    rows = env.db.query("SELECT src_path, rel, dst_path, detections FROM state.edge_corroboration ORDER BY 1, 3")
    return [(str(a), str(r), str(b), int(n)) for a, r, b, n in rows]


def memory_files(env: PhaseEnv) -> dict[str, bytes]:
    return {p: b for p, b in tree_files(env.repo).items() if not p.startswith(DETECTED_DIR)}


# --- no model, dry run -------------------------------------------------------------------------------------------


def test_no_model_bound_reports_exactly_what_it_always_did(tmp_path: Path) -> None:
    env = mined_env(tmp_path)
    before = tree_files(env.repo)
    outcome = edge_typing.run(env)
    assert outcome.counts.wire() == {"candidates": 0, "judged": 0}
    assert outcome.detail == "no model bound" and outcome.model is None and outcome.llm_calls == 0
    assert tree_files(env.repo) == before and env.repo.dirty() == []


def test_a_dry_run_counts_the_candidates_and_asks_nothing(tmp_path: Path) -> None:
    env, client = with_model(replace(mined_env(tmp_path), dry_run=True), {SCHEMA: verdicts_by(good_rule)})
    outcome = edge_typing.run(env)
    assert outcome.counts.wire() == {"candidates": 2, "judged": 0}
    assert outcome.detail == DRY_RUN and client.requests == [] and detections(env) == []


# --- a good answer -----------------------------------------------------------------------------------------------


def test_a_good_answer_types_the_subject_only_and_defers_a_first_contradiction(tmp_path: Path) -> None:
    env, client = with_model(mined_env(tmp_path), {SCHEMA: verdicts_by(good_rule)})
    outcome = edge_typing.run(env)
    assert outcome.counts.wire() == {
        "candidates": 2, "judged": 2, "typed": 1, "contradictions": 1, "promoted": 0, "skipped": 0, "capped": 0,
        "duplicates": 0, "tasksMinted": 1, "tasksRefreshed": 0, "tasksFramed": 0, "tasksDismissed": 0,
        "tasksClosed": 0, "tasksCapped": 0}
    assert outcome.subject == "promote 1 typed edges and 0 corroborated contradictions"
    assert outcome.body == "deferred 1 single-detection contradictions to review tasks"
    assert links_of(env, WARM) == [Link("supports", "/" + COLD)]
    assert links_of(env, COLD) == [] and links_of(env, FRIDAY) == [] and links_of(env, MONDAY) == []
    assert detections(env) == [(FRIDAY, "contradicts", MONDAY, 1)]
    [task] = open_detections(env.repo, "edge-typing")
    assert task.gist == f"decide: {FRIDAY} and {MONDAY} contradict each other; which one holds?"
    text = (env.repo.root / task.path).read_text(encoding="utf-8")
    assert "confidence 0.93" in text and "detection 1 of 2" in text and "judged contradicts" in text
    assert outcome.model is not None and outcome.model.calls == 1 and outcome.model.input_tokens == 100
    [req] = client.requests
    assert FRIDAY not in req.prompt and "0.91" not in req.prompt and list(blocks(req.prompt)) == ["m1", "m2"]
    assert set(git(env.repo.root, "diff", "--cached", "--name-only").split()) == {WARM, task.path}


def test_none_and_low_confidence_write_nothing_and_a_repeated_key_keeps_the_first_answer(tmp_path: Path) -> None:
    def respond(req: ScriptedRequest) -> Reply:
        keys = list(blocks(req.prompt))
        return Answer({"verdicts": [
            {"pairKey": keys[0], "rel": "none", "direction": "src_to_dst", "confidence": 0.99},
            {"pairKey": keys[0], "rel": "supports", "direction": "src_to_dst", "confidence": 0.99},
            {"pairKey": keys[1], "rel": "supports", "direction": "src_to_dst", "confidence": 0.69},
        ]})

    env, _ = with_model(mined_env(tmp_path), {SCHEMA: respond})
    before = tree_files(env.repo)
    counts = edge_typing.run(env).counts.wire()
    assert (counts["judged"], counts["duplicates"], counts["typed"]) == (2, 1, 0)
    assert tree_files(env.repo) == before


# --- the failure answers: each costs its batch, writes nothing, sweeps nothing ------------------------------------

FAILURES: list[tuple[str, Reply]] = [
    ("malformed", Malformed()),
    ("schema-failing", Answer({"verdicts": [
        {"pairKey": "m1", "rel": "refines", "direction": "src_to_dst", "confidence": 0.9}]})),
    ("confidence-out-of-range", Answer({"verdicts": [
        {"pairKey": "m1", "rel": "supports", "direction": "src_to_dst", "confidence": 1.5}]})),
    ("confidence-not-a-number", Answer({"verdicts": [
        {"pairKey": "m1", "rel": "supports", "direction": "src_to_dst", "confidence": True}]})),
    ("confidence-as-text", Answer({"verdicts": [
        {"pairKey": "m1", "rel": "supports", "direction": "src_to_dst", "confidence": "0.9"}]})),
    ("extra-field", Answer({"verdicts": [
        {"pairKey": "m1", "rel": "supports", "direction": "src_to_dst", "confidence": 0.9, "path": FRIDAY}]})),
    ("429", Status(429, retry_after=1)),
    ("timeout", Stall(60.0)),
    ("refusal", Refusal()),
]


@pytest.mark.parametrize(("name", "reply"), FAILURES, ids=[row[0] for row in FAILURES])
def test_a_failed_call_skips_its_batch_writes_nothing_and_sweeps_nothing(
    tmp_path: Path, name: str, reply: Reply
) -> None:
    first, _ = with_model(mined_env(tmp_path), {SCHEMA: verdicts_by(good_rule)})
    edge_typing.run(first)
    commit_and_reindex(first, "night one")
    [task] = open_detections(first.repo, "edge-typing")
    env, client = with_model(first, {SCHEMA: [reply]}, timeout=1.0)
    before = tree_files(env.repo)
    outcome = edge_typing.run(env)
    # the typed pair of night one is an authored edge now, so only the contradiction is a candidate again
    assert outcome.counts.wire()["candidates"] == outcome.counts.wire()["skipped"] == 1
    assert outcome.counts.wire()["judged"] == 0
    assert outcome.counts.wire()["tasksClosed"] == 0
    assert outcome.model is not None and outcome.model.failed_calls == 1 and len(client.requests) == 1
    assert tree_files(env.repo) == before and env.repo.dirty() == []
    assert open_detections(env.repo, "edge-typing") == [task]
    log = [json.loads(line) for line in rails_log_path(env).read_text().splitlines()]
    assert log[-1]["rail"] == "call-failed" and log[-1]["phase"] == "edge-typing"


def test_a_judged_night_that_no_longer_sees_a_contradiction_closes_its_task(tmp_path: Path) -> None:
    first, _ = with_model(mined_env(tmp_path), {SCHEMA: verdicts_by(good_rule)})
    edge_typing.run(first)
    commit_and_reindex(first, "night one")
    env, _ = with_model(first, {SCHEMA: verdicts_by(lambda text: ("none", "src_to_dst", 0.9))})
    counts = edge_typing.run(env).counts.wire()
    assert counts["tasksClosed"] == 1 and open_detections(env.repo, "edge-typing") == []


def test_a_seen_contradiction_keeps_its_task_open_and_refreshes_it(tmp_path: Path) -> None:
    first, _ = with_model(mined_env(tmp_path), {SCHEMA: verdicts_by(good_rule)})
    edge_typing.run(first)
    commit_and_reindex(first, "night one")
    env, _ = with_model(first, {SCHEMA: verdicts_by(good_rule)})
    counts = edge_typing.run(env).counts.wire()
    assert (counts["tasksRefreshed"], counts["tasksClosed"], counts["tasksMinted"]) == (1, 0, 0)
    assert detections(env) == [(FRIDAY, "contradicts", MONDAY, 1)]  # same corpus: still one look
    assert links_of(env, FRIDAY) == [] and links_of(env, MONDAY) == []


# --- budget, cap, volume -----------------------------------------------------------------------------------------


WORDS = ("amber", "birch", "cedar", "delta", "ember", "fjord", "grove", "heron", "ivory", "juniper", "kestrel",
         "lagoon", "maple", "nectar", "orchid", "pepper")


def many(n: int) -> dict[str, str]:
    """``n`` notes no veto predicate tells apart (no digit, no negation, no variant word): any rel may join them."""
    return {f"areas/notes/n{i:02d}.html": memory(f"Note {WORDS[i]} about topic {WORDS[-1 - i]} and nothing else.")
            for i in range(n)}


def all_pairs_env(tmp_path: Path, n: int) -> PhaseEnv:
    """``n`` memories and a derived edge between every two of them (what relationship-mining would write)."""
    env = make_env(make_repo(tmp_path, many(n)))
    paths = sorted(many(n))
    edges = [MinedEdge(a, b, 0.9) for a, b in itertools.combinations(paths, 2)]
    replace_mined_edges(env.db, [("relates_to", edges)], run_id=env.run_id, at=AT)
    return env


def stale_task(env: PhaseEnv) -> str:
    """Commit an open edge-typing detection of an earlier night for a pair nobody proposes any more."""
    key = detection_key("edge-typing", "contradicts areas/x.html areas/y.html")
    path = detected_task_path(key, "Decide between x and y")
    write(env.repo.root, {path: render_detected_task(
        detector="edge-typing", run_id="sleep/2026-03-01", title="Decide between x and y",
        claim="decide: areas/x.html and areas/y.html contradict each other; which one holds?",
        evidence=Measurement("confidence 0.9; detection 1 of 2"), now="2026-03-01T00:00:00Z")})
    env.repo.stage([path])
    commit_and_reindex(env, "earlier night")
    return path


def supports_all(text: str) -> tuple[str, str, float]:
    return ("supports", "src_to_dst", 0.9)


def test_the_budget_running_out_mid_phase_skips_the_rest_and_sweeps_nothing(tmp_path: Path) -> None:
    env = all_pairs_env(tmp_path, 9)  # 36 pairs: a batch of 30 and one of 6
    stale = stale_task(env)
    env, client = with_model(env, {SCHEMA: verdicts_by(supports_all)}, remaining=1, max_prompt=WIDE)
    outcome = edge_typing.run(env)
    counts = outcome.counts.wire()
    assert (counts["candidates"], counts["judged"], counts["typed"], counts["skipped"]) == (36, 30, 30, 6)
    assert outcome.model is not None and outcome.model.budget_skipped == 1 and len(client.requests) == 1
    assert counts["tasksClosed"] == 0 and (env.repo.root / stale).is_file()
    assert env.services.llm_budget.remaining == 0


def test_a_fully_judged_night_sweeps_a_stale_detection(tmp_path: Path) -> None:
    env = all_pairs_env(tmp_path, 9)
    stale = stale_task(env)
    env, client = with_model(env, {SCHEMA: verdicts_by(supports_all)}, max_prompt=WIDE)
    counts = edge_typing.run(env).counts.wire()
    assert len(client.requests) == 2 and counts["tasksClosed"] == 1 and not (env.repo.root / stale).exists()


def test_batches_hold_thirty_pairs_in_shared_directory_order(tmp_path: Path) -> None:
    env, client = with_model(all_pairs_env(tmp_path, 9), {SCHEMA: verdicts_by(lambda t: None)}, max_prompt=WIDE)
    edge_typing.run(env)
    assert [len(blocks(r.prompt)) for r in client.requests] == [30, 6]
    first = blocks(client.requests[0].prompt)["m1"]
    assert first.startswith("src:\nNote amber about") and "\n\ndst:\nNote birch about" in first


def test_at_most_fifty_writes_a_night_and_the_rest_is_capped(tmp_path: Path) -> None:
    env, _ = with_model(all_pairs_env(tmp_path, 11), {SCHEMA: verdicts_by(supports_all)})  # 55 pairs
    outcome = edge_typing.run(env)
    counts = outcome.counts.wire()
    assert (counts["judged"], counts["typed"], counts["capped"]) == (55, 50, 5)
    assert outcome.model is not None and dict(outcome.model.rails) == {"cap": 5}
    written = sum(len(links_of(env, p)) for p in many(11))
    assert written == 50


# --- two nights: corroboration over a changed corpus, through whole runs -----------------------------------------

RUN_PHASES = ("preflight", "relationship-mining", "edge-typing", "report")


def _run(repo: GitRepo, date: str) -> tuple[str, dict[str, object]]:
    client = ScriptedClient({SCHEMA: verdicts_by(good_rule)})
    report = run_sleep(repo, IndexDB.for_repo(repo), date=date, phases=RUN_PHASES, embedder=EMBEDDER,
                       clock=lambda: f"{date}T09:00:00Z", model=ModelBinding(client=client))
    by_phase = {p.phase: p for p in report.phases}
    assert by_phase["edge-typing"].status == "ok", by_phase["edge-typing"].detail
    return report.run_id, dict(by_phase["edge-typing"].counts)


def _show(repo: GitRepo, ref: str, path: str) -> str:
    return git(repo.root, "show", f"{ref}:{path}")


def test_a_contradiction_is_linked_into_both_files_only_on_a_second_look_at_a_changed_corpus(
    tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, CORPUS)
    first, counts = _run(repo, "2026-03-10")
    assert counts["contradictions"] == 1 and counts["promoted"] == 0 and counts["tasksMinted"] == 1
    again, counts = _run(repo, "2026-03-11")  # main unchanged: the same corpus
    assert counts["promoted"] == 0
    state = IndexDB.for_repo(repo).query("SELECT detections FROM state.edge_corroboration")
    assert [int(r[0]) for r in state] == [1]
    for ref in (first, again):
        assert "memhtml-contradicts" not in _show(repo, ref, FRIDAY) + _show(repo, ref, MONDAY)
        assert ledger_file(ref) not in git(repo.root, "ls-tree", "-r", "--name-only", ref)

    write(repo.root, {"areas/ops/unrelated.html": memory("The office plants need water on Tuesdays.")})
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "-m", "a new memory")
    third, counts = _run(repo, "2026-03-12")
    assert counts["promoted"] == 1 and counts["contradictions"] == 1 and counts["tasksMinted"] == 0
    friday, monday = _show(repo, third, FRIDAY), _show(repo, third, MONDAY)
    assert Link("contradicts", "/" + MONDAY) in editors.get_links(friday)
    assert Link("contradicts", "/" + FRIDAY) in editors.get_links(monday)
    ledger = _show(repo, third, ledger_file(third))
    assert json.loads(ledger.splitlines()[0]) == EdgePromoted(FRIDAY, "contradicts", MONDAY).as_json()
    subjects = git(repo.root, "log", "--format=%s", f"main..{third}")
    assert "memhtml(sleep(edge-typing)): promote 1 typed edges and 1 corroborated contradictions" in subjects
    # The machine never resolves it: both sides stay where they were, with their text, and nobody supersedes.
    files = git(repo.root, "ls-tree", "-r", "--name-only", third)
    assert FRIDAY in files and MONDAY in files and "archive/" not in files
    for path, text in ((FRIDAY, friday), (MONDAY, monday)):
        original = CORPUS[path]
        assert text[text.index("<article"):] == original[original.index("<article"):]
        assert "superseded-by" not in text and "memhtml-supersedes" not in text
        assert editors.get_meta(text, "status") == "active"

    # Landing applies the mark once; the linked pair is an authored edge from then on and is never asked again.
    landed = merge_run(repo, IndexDB.for_repo(repo), third, gate=None, embedder=EMBEDDER,
                       clock=lambda: "2026-03-12T10:00:00Z")
    assert landed.merged and (landed.marks_pending, landed.marks_applied) == (1, 1)
    rows = IndexDB.for_repo(repo).query("SELECT detections, promoted, confirmed FROM state.edge_corroboration")
    assert [tuple(int(v) for v in r) for r in rows] == [(2, 1, 1)]
    _, counts = _run(repo, "2026-03-13")
    assert counts["candidates"] == 0 and counts["contradictions"] == 0


# --- rails ---------------------------------------------------------------------------------------------------------


def test_a_link_to_a_file_that_left_the_tree_is_refused(tmp_path: Path) -> None:
    def respond(req: ScriptedRequest) -> Reply:
        (env.repo.root / COLD).unlink()  # an earlier write of this night took it away while the model thought
        return verdicts_by(good_rule)(req)

    env, _ = with_model(mined_env(tmp_path), {SCHEMA: respond})
    outcome = edge_typing.run(env)
    assert outcome.model is not None and dict(outcome.model.rails) == {"gone": 1}
    assert outcome.counts.wire()["typed"] == 0 and links_of(env, WARM) == []


def test_a_pair_whose_file_is_missing_before_batching_is_skipped(tmp_path: Path) -> None:
    env, client = with_model(mined_env(tmp_path), {SCHEMA: verdicts_by(good_rule)})
    (env.repo.root / COLD).unlink()
    counts = edge_typing.run(env).counts.wire()
    assert (counts["candidates"], counts["skipped"], counts["judged"]) == (2, 1, 1)
    assert len(blocks(client.requests[0].prompt)) == 1 and counts["tasksClosed"] == 0


OFF_VOCABULARY: dict[str, Any] = {"pair_key": "m2", "rel": "refines", "direction": "src_to_dst", "confidence": 0.9}


def _night(env: PhaseEnv) -> Night:
    return Night(env, PhaseModel.for_phase(env, "edge-typing"))


def test_a_self_link_and_a_rel_outside_the_vocabulary_are_refused(tmp_path: Path) -> None:
    env, _ = with_model(mined_env(tmp_path), {})
    night = _night(env)
    selfish = CandidatePair(WARM, WARM, 0.99, "mined")
    real = CandidatePair(COLD, WARM, 0.98, "mined")
    batch = key_members([Member("self", "src:\na\n\ndst:\na"), Member("real", "src:\nb\n\ndst:\nc")], label="pair",
                        member_chars=100)
    answer = EdgeVerdicts(verdicts=[
        EdgeVerdict(pair_key="m1", rel="supports", direction="src_to_dst", confidence=0.9),
        EdgeVerdict(pair_key="m1", rel="contradicts", direction="src_to_dst", confidence=0.9),
        EdgeVerdict.model_construct(**OFF_VOCABULARY),  # past the schema, as a wire client's bug could let it
    ])
    apply_verdicts(night, batch, {"self": selfish, "real": real}, answer)
    assert dict(night.model.rails) == {"self-link": 1, "unknown-rel": 1}
    assert (night.judged, night.duplicates, night.typed) == (2, 1, 0)
    assert links_of(env, WARM) == [] and links_of(env, COLD) == []


# --- candidates ------------------------------------------------------------------------------------------------------


def test_candidates_leave_out_tasks_and_pairs_an_author_already_linked(tmp_path: Path) -> None:
    files = dict(CORPUS)
    files[WARM] = files[WARM].replace("</head>", f'<link rel="memhtml-part-of" href="/{COLD}">\n</head>', 1)
    files["areas/inbox/tasks/t.html"] = memory("The staging deploy of checkout-api runs every Friday at noon!",
                                               memory_type="task")
    env = mined_env(tmp_path, files)
    pairs = candidate_pairs(env.db, EMBEDDER.space)
    assert [(p.src, p.dst, p.arm) for p in pairs] == [(FRIDAY, MONDAY, "mined")]


def test_the_shared_entity_arm_pairs_claimants_of_one_entity_by_cosine(tmp_path: Path) -> None:
    files = {
        "areas/a.html": memory("Dana runs the payments team from the Lisbon office.", entities=["person:Dana"]),
        "areas/b.html": memory("Dana runs the payments team from the Porto office.", entities=["person:dana"]),
        "areas/c.html": memory("The payments team runs from the Lisbon office with Dana.", entities=["org:Acme"]),
        "areas/d.html": memory("Weather in Lisbon is mild in spring.", entities=["person:Dana"]),
    }
    env = make_env(make_repo(tmp_path, files))  # no mining: only the entity arm proposes
    pairs = candidate_pairs(env.db, EMBEDDER.space)
    assert [(p.src, p.dst, p.arm) for p in pairs] == [("areas/a.html", "areas/b.html", "entity")]
    assert pairs[0].sim >= 0.8
    assert candidate_pairs(env.db, None) == []


def test_rank_shared_entity_pairs_keeps_k_per_memory_and_skips_excluded_pairs() -> None:
    rng = np.random.default_rng(7)
    base = rng.normal(size=16)
    vectors = {f"p{i}": base + 0.05 * i * rng.normal(size=16) for i in range(8)}
    claims = [("person:x", p) for p in vectors] + [("org:y", "p0"), ("org:y", "p1")]
    excluded = {("p0", "p1")}
    ranked = rank_shared_entity_pairs(claims, vectors, excluded, floor=0.0, k=2, limit=100)
    assert ("p0", "p1") not in {(a, b) for a, b, _ in ranked}
    assert ranked == sorted(ranked, key=lambda r: (-r[2], r[0], r[1]))
    for node in vectors:  # each node's own top-2 partners all made it
        sims = sorted(((float(np.dot(vectors[node], vectors[o]) / np.linalg.norm(vectors[node])
                                / np.linalg.norm(vectors[o])), o) for o in vectors
                       if o != node and (min(node, o), max(node, o)) not in excluded), key=lambda s: (-s[0], s[1]))
        for _, other in sims[:2]:
            assert (min(node, other), max(node, other)) in {(a, b) for a, b, _ in ranked}
    assert rank_shared_entity_pairs(claims, vectors, set(), floor=0.0, k=2, limit=3) == \
        rank_shared_entity_pairs(claims, vectors, set(), floor=0.0, k=2, limit=100)[:3]


def test_batch_order_is_deepest_shared_directory_then_paths() -> None:
    pairs = [CandidatePair("projects/b/x.html", "projects/b/y.html", 0.9, "mined"),
             CandidatePair("areas/a/x.html", "projects/b/z.html", 0.99, "mined"),
             CandidatePair("areas/a/b.html", "areas/a/c.html", 0.95, "entity")]
    assert shared_directory("areas/a/b.html", "areas/a/c.html") == "areas/a"
    assert shared_directory("areas/a/x.html", "projects/b/z.html") == ""
    assert [p.src for p in batch_order(pairs)] == ["areas/a/x.html", "areas/a/b.html", "projects/b/x.html"]


def test_a_contradiction_a_person_dismissed_is_never_linked_on_a_later_look(tmp_path: Path) -> None:
    first, _ = with_model(mined_env(tmp_path), {SCHEMA: verdicts_by(good_rule)})
    edge_typing.run(first)
    commit_and_reindex(first, "night one")
    [task] = open_detections(first.repo, "edge-typing")
    archived = edits.archive_file(first.repo, task.path, at=AT, extra=[edits.set_meta("task-status", "done")])
    assert archived is not None  # the person closed the review: "they do not contradict"
    write(first.repo.root, {"areas/ops/unrelated.html": memory("The office plants need water on Tuesdays.")})
    first.repo.stage(["areas/ops/unrelated.html"])
    commit_and_reindex(first, "dismissed, and the corpus changed")
    env, _ = with_model(first, {SCHEMA: verdicts_by(good_rule)})
    outcome = edge_typing.run(env)
    assert detections(env) == [(FRIDAY, "contradicts", MONDAY, 2)]
    assert outcome.counts.wire()["promoted"] == 0 and env.services.ledger == []
    assert outcome.model is not None and dict(outcome.model.rails) == {"dismissed": 1}
    assert links_of(env, FRIDAY) == [] and links_of(env, MONDAY) == []
