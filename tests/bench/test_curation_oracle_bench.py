"""bench/curation_oracle.py: the labelled curation corpus, the oracle and the gullible scripted models, and the checks
of what landed.

Three layers. The corpus's own guarantees (every label names a memory, every claim finds its memory, each planted
instruction sits in its memory). The two models read real batch-kernel prompts (``key_members`` framing, the
phases' own answer schemas) and answer as the labels say, the gullible one obeying the planted text. The truth checks
follow a memory through a real git tree (archive move, ``superseded-by``, a rename) the way the figures do. Then one
smoke run on a small slice (no generated background, the fake embedder): the oracle over the openai dialect for one
night and the gullible model over the anthropic dialect for two, each through ``sleep run`` and ``sleep merge``.
The smoke asserts how the harness behaves, never the figures the fixes of issue 27 are meant to move.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from git_memhtml.document.editors import set_meta
from git_memhtml.llm.scripted import Answer, ScriptedRequest
from git_memhtml.sleep.engine.batch import Member, key_members
from git_memhtml.sleep.phases.canonical import carried
from git_memhtml.sleep.phases.synthesis import rekey
from git_memhtml.traces.settled import TRACE_MIN_BYTES
from tests.bench.bench_support import PROJECT_ROOT
from tests.sleep.sleep_corpus_helpers import git, make_repo, memory, write

BENCH = PROJECT_ROOT / "bench"


def _module(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module(name)


corpus_mod = _module("curation_corpus")
models_mod = _module("curation_models")
truth_mod = _module("curation_truth")
bench = _module("curation_oracle")
CORPUS: Any = corpus_mod.build(0)


def _request(schema: str, prompt: str) -> ScriptedRequest:
    return ScriptedRequest("openai", schema, "system", prompt, 0)


def _value(reply: object) -> dict[str, Any]:
    assert isinstance(reply, Answer)
    return dict(reply.value)


def _text(m: Any) -> str:
    """A member as dedup shows it: the claim, then the article text (the claim and any second paragraph)."""
    return f"{m.claim}\n{m.claim} {m.body}".strip()


def _members(keys: list[str], text: Any = _text) -> list[Member]:
    return [Member(k, text(CORPUS.by_key[k])) for k in keys]


# --- the corpus --------------------------------------------------------------------------------------------------


def test_every_label_names_a_memory_and_every_claim_finds_its_own() -> None:
    labels = models_mod.Labels(CORPUS)
    for memory_ in CORPUS.memories:
        assert labels.find(f"{memory_.claim}\nmore text of the body") == memory_.key
    assert len(corpus_mod.build(40).memories) == len(CORPUS.memories) + 120
    for injection in CORPUS.truth.injections:
        if injection.memory is not None:
            planted = CORPUS.by_key[injection.memory]
            assert injection.text in f"{planted.claim} {planted.body}"
        else:
            session = next(s for s in CORPUS.sessions if s.session_id == injection.session)
            assert any(injection.text in text for _, text in session.turns)


def test_a_claim_that_starts_another_is_refused() -> None:
    clash = corpus_mod.Memory("x", "checkout-api runs six replicas", "service:checkout-api")
    with pytest.raises(ValueError, match="prefix"):
        corpus_mod._check([*CORPUS.memories, clash], {**CORPUS.by_key, "x": clash}, CORPUS.truth)


def test_every_session_quote_is_in_its_transcript_and_every_transcript_is_read(tmp_path: Path) -> None:
    paths = bench.write_sessions(tmp_path, CORPUS.sessions)
    for path, session in zip(paths, CORPUS.sessions, strict=True):
        assert path.stat().st_size >= TRACE_MIN_BYTES
        text = " ".join(t for _, t in session.turns)
        for fact in session.facts:
            assert all(q in text for q in fact.quotes), fact.key
        for commitment in session.commitments:
            assert commitment.quote in text


def test_a_compress_answer_of_the_oracle_carries_every_member() -> None:
    for group in CORPUS.truth.communities:
        paragraphs = " ".join(CORPUS.by_key[k].claim for k in group.members)
        for key in group.members:
            assert carried(CORPUS.by_key[key].claim, f"{group.title} {group.claim} {paragraphs}")


# --- the models, on real kernel prompts -------------------------------------------------------------------------


def _dedup_prompt(keys: list[str]) -> str:
    batch = key_members(_members(keys), label="member", member_chars=1200)
    return batch.prompt("Group the members.", preamble=f"component_1 holds {', '.join(batch.keys)}.")


@pytest.mark.parametrize(("gullible", "groups"), [(False, [["m1", "m2"]]), (True, [["m1", "m2", "m3"]])])
def test_dedup_groups_one_fact_and_the_gullible_model_merges_all_where_told(gullible: bool,
                                                                            groups: list[list[str]]) -> None:
    model = models_mod.Model(CORPUS, gullible=gullible)
    reply = _value(model.merge_partition(_request("MergePartition", _dedup_prompt(["d10a", "d10b", "c1b"]))))
    assert [g["memberKeys"] for g in reply["groups"]] == groups
    wrong = [p for p in model.proposals if not p.correct]
    assert len(wrong) == (2 if gullible else 0)
    assert all(p.obeyed == "i1" for p in wrong)


def _entity_prompt(kind: str, names: list[str], titles: dict[str, list[str]]) -> str:
    members = [Member(n, "\n".join([f"name: {n}", "memories: 2", "titles:", *[f"- {t}" for t in titles.get(n, [])],
                                    "nearest by memory centroid:"])) for n in names]
    return key_members(members, label="entity", member_chars=600).prompt("Cluster.", preamble=f"Entity type: {kind}")


def test_entities_cluster_aliases_only_and_the_gullible_model_makes_everyone_priya() -> None:
    names = ["Caroline", "Caroline M.", "Melanie", "Priya Raman"]
    prompt = _entity_prompt("person", names, {"Priya Raman": [corpus_mod.PERSON_ALL]})
    oracle = models_mod.Model(CORPUS, gullible=False)
    clusters = _value(oracle.entity_clustering(_request("EntityClustering", prompt)))["clusters"]
    assert [(c["canonicalKey"], sorted(c["memberKeys"])) for c in clusters] == [("m2", ["m1", "m2"])]
    gullible = models_mod.Model(CORPUS, gullible=True)
    clusters = _value(gullible.entity_clustering(_request("EntityClustering", prompt)))["clusters"]
    assert [(c["canonicalKey"], sorted(c["memberKeys"])) for c in clusters] == [("m4", ["m1", "m2", "m3", "m4"])]
    assert sum(not p.correct for p in gullible.proposals) == 3 and gullible.obeyed == {"i2": 1}


def test_edges_type_the_labels_and_the_gullible_model_supports_the_planted_memory() -> None:
    pairs = [("e1a", "e1b"), ("c4b", "c4a"), ("d1a", "n10a")]

    def side(key: str) -> str:
        m = CORPUS.by_key[key]
        return f"{m.claim} {m.body}".strip()

    members = [Member(f"{a} {b}", f"src:\n{side(a)}\n\ndst:\n{side(b)}") for a, b in pairs]
    prompt = key_members(members, label="pair", member_chars=2500).prompt("Type each pair.")
    oracle = models_mod.Model(CORPUS, gullible=False)
    verdicts = _value(oracle.edge_verdicts(_request("EdgeVerdicts", prompt)))["verdicts"]
    assert [(v["rel"], v["direction"]) for v in verdicts] == [
        ("caused_by", "src_to_dst"), ("contradicts", "src_to_dst"), ("none", "src_to_dst")]
    gullible = models_mod.Model(CORPUS, gullible=True)
    verdicts = _value(gullible.edge_verdicts(_request("EdgeVerdicts", prompt)))["verdicts"]
    assert (verdicts[1]["rel"], verdicts[1]["direction"]) == ("supports", "src_to_dst")
    (wrong,) = [p for p in gullible.proposals if not p.correct]
    assert (wrong.members, wrong.rel, wrong.obeyed) == (("c4b", "c4a"), "supports", "i4")


def test_arcs_cite_a_story_and_the_gullible_model_cites_every_evidence_key() -> None:
    keys = ["s2a", "s2b", "i5", "d1a", "s2c"]
    evidence = rekey(key_members(_members(keys, lambda m: f"{m.claim} {m.body}".strip()), label="evidence",
                                 member_chars=240), "e")
    rekeyed = evidence.prompt("Plan arcs.", preamble="Existing arcs:\n\n(no arcs yet)\n\nEvidence memories:")
    oracle = models_mod.Model(CORPUS, gullible=False)
    entries = _value(oracle.arc_plan(_request("ArcPlan", rekeyed)))["entries"]
    assert [(e["title"], e["evidenceKeys"]) for e in entries] == [("Caroline's road to adoption", ["e1", "e2", "e5"])]
    gullible = models_mod.Model(CORPUS, gullible=True)
    entries = _value(gullible.arc_plan(_request("ArcPlan", rekeyed)))["entries"]
    assert entries[-1]["title"] == corpus_mod.GULLIBLE_TITLE and len(entries[-1]["evidenceKeys"]) == 5


def test_compress_folds_one_community_and_declines_a_mixed_batch() -> None:
    def full(m: Any) -> str:
        return f"{m.claim}\n{m.claim}\n{m.claim} {m.body}".strip()

    oracle = models_mod.Model(CORPUS, gullible=False)
    prompt = key_members(_members(["k1a", "d1a", "k1b", "k1c"], full), label="member", member_chars=1200)
    reply = _value(oracle.compress(_request("CompressSynthesis", prompt.prompt("Fold."))))
    assert reply["absorbedKeys"] == ["m1", "m3", "m4"] and reply["title"] == "What search-indexer is made of"
    mixed = key_members(_members(["k1a", "d1a"], full), label="member", member_chars=1200)
    assert _value(oracle.compress(_request("CompressSynthesis", mixed.prompt("Fold."))))["absorbedKeys"] == []
    gullible = models_mod.Model(CORPUS, gullible=True)
    planted = key_members(_members(["k2a", "k2c", "d1a"], full), label="member", member_chars=1200)
    reply = _value(gullible.compress(_request("CompressSynthesis", planted.prompt("Fold."))))
    assert reply["absorbedKeys"] == ["m1", "m2", "m3"] and gullible.obeyed == {"i7": 1}


def test_tasks_are_open_commitments_of_the_night_and_the_gullible_model_files_the_planted_order() -> None:
    def full(m: Any) -> str:
        return f"{m.claim}\n{m.claim}\n{m.claim} {m.body}".strip()

    batch = key_members(_members(["t1", "t4a", "t4b", "t6a", "i6"], full), label="memory", member_chars=1200)
    prompt = batch.prompt("Find open work.")
    for night, expected in ((1, ["m1", "m4"]), (2, ["m1"])):
        oracle = models_mod.Model(CORPUS, gullible=False)
        oracle.night = night
        findings = _value(oracle.task_detection(_request("TaskDetection", prompt)))["findings"]
        assert [f["memberKey"] for f in findings] == expected
    gullible = models_mod.Model(CORPUS, gullible=True)
    findings = _value(gullible.task_detection(_request("TaskDetection", prompt)))["findings"]
    assert findings[-1] == {"memberKey": "m5", "sentence": corpus_mod.TASK_ORDER, "kind": "commitment",
                            "confidence": models_mod.OBEYED_CONFIDENCE}


def test_a_commitment_closed_in_its_session_is_reported_resolved() -> None:
    session = CORPUS.sessions[0]
    text = "\n".join(t for _, t in session.turns)
    prompt = key_members([Member("s", text)], label="transcript", member_chars=24_000).prompt("Extract.")
    oracle = models_mod.Model(CORPUS, gullible=False)
    reply = _value(oracle.trace_extraction(_request("TraceExtraction", prompt)))
    assert [(c["actor"], c["resolved"]) for c in reply["commitments"]] == [("agent", True)]
    hostile = "\n".join(t for _, t in CORPUS.sessions[2].turns)
    prompt = key_members([Member("s", hostile)], label="transcript", member_chars=24_000).prompt("Extract.")
    gullible = models_mod.Model(CORPUS, gullible=True)
    reply = _value(gullible.trace_extraction(_request("TraceExtraction", prompt)))
    assert corpus_mod.ORDER_STATEMENT in [c["statement"] for c in reply["commitments"]]
    assert [p.obeyed for p in gullible.proposals if not p.correct] == ["i9", "i9"]


# --- the truth checks on a real tree --------------------------------------------------------------------------------


def test_a_fold_is_followed_through_the_archive_and_a_rename_through_the_files(tmp_path: Path) -> None:
    keep, drop, other = "resources/x/keep.html", "resources/x/drop.html", "resources/x/other.html"
    a = CORPUS.by_key["cm1"]
    files = {keep: memory(CORPUS.by_key["d1a"].claim, entities=["service:checkout-api"]),
             drop: memory(CORPUS.by_key["d1b"].claim, entities=["service:checkout-api"]),
             other: memory(a.claim, entities=["person:Caroline M."])}
    repo = make_repo(tmp_path, files)
    base_sha = repo.head_sha()
    root = repo.root
    moved = set_meta((root / drop).read_text(), "superseded-by", "/" + keep)
    git(root, "rm", "-q", drop)
    write(root, {f"archive/2026/{drop}": moved, other: memory(a.claim, entities=["person:Caroline"])})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "night")
    base, tip = truth_mod.Tree(repo, base_sha), truth_mod.Tree(repo, repo.head_sha())
    assert tip.rep(drop) == keep and tip.rep(keep) == keep
    paths = truth_mod.Paths(CORPUS, base, {"d1a": keep, "d1b": drop, "cm1": other})
    fold = models_mod.Proposal(1, "dedup-merge", "fold", ("d1a", "d1b"))
    assert truth_mod.present(fold, tip, paths, first_look=True) is True
    assert truth_mod.present(fold, base, paths, first_look=True) is False
    alias = models_mod.Proposal(1, "entity-resolution", "alias", ("person:Caroline M.", "person:Caroline"))
    assert truth_mod.present(alias, tip, paths, first_look=False) is True
    wrong = models_mod.Proposal(1, "entity-resolution", "alias", ("person:Caroline M.", "person:Melanie"))
    assert truth_mod.present(wrong, tip, paths, first_look=False) is False


def test_defects_name_a_fold_across_subjects(tmp_path: Path) -> None:
    n9a, n9b = "resources/people/n9a.html", "resources/people/n9b.html"
    repo = make_repo(tmp_path, {n9a: memory(CORPUS.by_key["n9a"].claim, entities=["person:Caroline"]),
                                n9b: memory(CORPUS.by_key["n9b"].claim, entities=["person:Melanie"])})
    base_sha = repo.head_sha()
    root = repo.root
    archived = set_meta((root / n9b).read_text(), "superseded-by", "/" + n9a)
    git(root, "rm", "-q", n9b)
    write(root, {f"archive/2026/{n9b}": archived})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "fold")
    base, tip = truth_mod.Tree(repo, base_sha), truth_mod.Tree(repo, repo.head_sha())
    found = truth_mod.defects(CORPUS, tip, base, {"n9a": n9a, "n9b": n9b}, 1)
    assert [(d.kind, d.members) for d in found] == [("wrong-fold", ("n9a", "n9b"))]
    assert truth_mod.defects(CORPUS, base, base, {"n9a": n9a, "n9b": n9b}, 1) == []


# --- the smoke run ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The oracle over openai for one night, the gullible model over anthropic for two (fake embedder, no
    generated background)."""
    out: dict[str, Any] = {"runs": []}
    for name, dialect, nights in (("oracle", "openai", 1), ("gullible", "anthropic", 2)):
        folder = tmp_path_factory.mktemp(f"curation-{name}")
        corpus = corpus_mod.build(0)
        model = models_mod.Model(corpus, gullible=name == "gullible")
        out["runs"].append(bench.measure_pair(corpus, model, dialect, embed="fake", workdir=folder, nights=nights))
    out["config"] = {"memories": len(CORPUS.memories), "sessions": len(CORPUS.sessions), "embed": "fake",
                     "nightDates": list(corpus_mod.NIGHT_DATES), "nproc": 2, "python": "3", "loadavg_before": [],
                     "wall_s": 0.0}
    yield out


def test_the_smoke_run_asks_every_model_phase_over_both_dialects(smoke: dict[str, Any]) -> None:
    oracle, gullible = smoke["runs"]
    assert (oracle["dialect"], gullible["dialect"]) == ("openai", "anthropic")
    assert [len(r["nights"]) for r in smoke["runs"]] == [1, 2]
    for run in smoke["runs"]:
        asked = {phase for night in run["nights"] for phase in night["requests"]}
        assert asked == set(bench.PHASES), asked
        assert not any(night["failed_phases"] for night in run["nights"])
    assert all(u["correct"] for n in oracle["nights"] for u in n["units"])


def test_the_gullible_model_reads_and_obeys_the_planted_instructions(smoke: dict[str, Any]) -> None:
    _, gullible = smoke["runs"]
    obeyed = {k for n in gullible["nights"] for k in n["obeyed"]}
    assert {"i2", "i5", "i6", "i9"} <= obeyed
    wrong = {u["phase"] for n in gullible["nights"] for u in n["units"] if not u["correct"]}
    assert {"entity-resolution", "arc-synthesis", "trace-consolidation", "task-detection"} <= wrong
    assert all(u["obeyed"] for n in gullible["nights"] for u in n["units"] if not u["correct"])


def test_what_landed_is_what_the_merge_took(smoke: dict[str, Any]) -> None:
    for run in smoke["runs"]:
        first = run["nights"][0]
        for unit in first["units"]:
            if first["merged"]:
                assert unit["landed"] == unit["onBranch"], unit
            else:
                assert not unit["landed"], unit
        for night in run["nights"]:
            for row in night["phases"].values():
                assert row["proposed"] == row["correct"] + row["wrong"] + row["unplaced"]
                assert row["deferred"] <= row["correct"]


def test_the_report_and_the_json_carry_every_night(smoke: dict[str, Any], tmp_path: Path) -> None:
    text = bench.render(smoke)
    assert text.count("| oracle | openai | 1 |") == len(bench.PHASES)
    assert text.count("| gullible | anthropic | 2 |") == len(bench.PHASES)
    assert "Targets:" in text
    verdicts = bench.verdicts(smoke)
    assert set(verdicts["oracle"]) == {"openai night 1"}
    assert set(verdicts["gullible"]) == {"anthropic night 1", "anthropic night 2"}
    assert set(verdicts["oracleOverNights"]) == {"openai"} and set(verdicts["oracleCountingDeferred"]) == {
        "openai night 1"}
    out = tmp_path / "out.json"
    out.write_text(json.dumps(smoke))
    assert json.loads(out.read_text())["runs"][1]["nights"][1]["night"] == 2


def _unit(night: int, members: list[str], *, landed: bool, correct: bool = True, deferred: bool = False,
          phase: str = "entity-resolution") -> dict[str, Any]:
    return {"night": night, "phase": phase, "kind": "alias", "members": members, "rel": "", "correct": correct,
            "landed": landed, "deferred": deferred}


def test_over_both_nights_a_deferred_merge_counts_once_and_lands_when_a_later_night_lands_it() -> None:
    nights = [
        {"units": [_unit(1, ["person:Caroline", "person:Caroline M."], landed=False, deferred=True),
                   _unit(1, ["a", "b"], landed=True, phase="dedup-merge"),
                   _unit(1, ["x", "y"], landed=True, correct=False, phase="dedup-merge")]},
        {"units": [_unit(2, ["person:Caroline M.", "person:Caroline"], landed=True),
                   _unit(2, ["service:n", "service:n-worker"], landed=False, deferred=True)]},
    ]
    assert bench.over_nights(nights) == 2 / 3  # Caroline landed on night 2; n/n-worker still deferred; x/y is wrong
    assert bench.over_nights([{"units": []}]) is None
