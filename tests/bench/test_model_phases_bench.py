"""bench/model_phases.py: model use per phase over the scripted loopback server, and the kernel overhead table.

The smoke run uses a tiny LoCoMo-shaped conversation written by the test (no shared data needed) and the fake
embedder: two speakers, two sessions, a near-duplicate pair (dedup-merge's model band), two ``will`` sentences
(task-detection), and memories of one speaker (edge-typing's shared-entity pairs).
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from git_memhtml.llm.defaults import DEFAULT_MAX_PROMPT_TOKENS
from git_memhtml.llm.scripted import ScriptedRequest
from git_memhtml.sleep.engine.batch import Member, key_members
from git_memhtml.sleep.phases.dedup_model import MergePartition
from git_memhtml.sleep.phases.entity_model import EntityClustering
from git_memhtml.sleep.phases.task_detection import TaskDetection
from tests.bench.bench_support import PROJECT_ROOT
from tests.conftest import SHARED_DATA

TRANSCRIPTS = SHARED_DATA / "transcripts" / "claude-code"
"""Real Claude Code transcripts: what trace-consolidation reads in the smoke run."""


def _load() -> ModuleType:
    path = PROJECT_ROOT / "bench" / "model_phases.py"
    spec = importlib.util.spec_from_file_location("bench_model_phases", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = _load()

SESSION_1 = {
    "Sam": [["Sam will send the quarterly budget report to Alex on Friday.", "D1:1"],
            ["Sam will send the quarterly budget report to Alex by Friday.", "D1:3"],
            ["Sam enjoys hiking in the mountains with friends on weekends.", "D1:5"]],
    "Alex": [["Alex adopted a rescue dog named Biscuit last spring.", "D1:2"],
             ["Alex is learning to play the cello at a community school.", "D1:4"]],
}
SESSION_2 = {
    "Sam": [["Sam finished a half marathon and felt proud of the training.", "D2:1"],
            ["Sam says the team will review the hiring plan next week.", "D2:3"]],
    "Alex": [["Alex took Biscuit to the beach and the dog loved the waves.", "D2:2"],
             ["Alex practices the cello every evening after work.", "D2:4"]],
}


def tiny_locomo(path: Path) -> Path:
    """Write a one-conversation LoCoMo file (``conv-t``, 9 observations) at ``path``."""
    conv: dict[str, Any] = {"speaker_a": "Sam", "speaker_b": "Alex",
                            "session_1_date_time": "1:00 pm on 2 May, 2023",
                            "session_2_date_time": "3:30 pm on 9 May, 2023"}
    for n, session in ((1, SESSION_1), (2, SESSION_2)):
        turns = [{"speaker": speaker, "dia_id": dia, "text": text}
                 for speaker, facts in session.items() for text, dia in facts]
        conv[f"session_{n}"] = sorted(turns, key=lambda t: int(str(t["dia_id"]).split(":")[1]))
    item = {"sample_id": "conv-t", "conversation": conv, "qa": [],
            "observation": {"session_1_observation": SESSION_1, "session_2_observation": SESSION_2}}
    path.write_text(json.dumps([item]), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, dict[str, Any]]:
    base = tmp_path_factory.mktemp("model-bench")
    data = tiny_locomo(base / "tiny.json")
    out = base / "figures.json"
    capture = base / "stdout.md"
    saved = sys.stdout
    with capture.open("w", encoding="utf-8") as handle:
        sys.stdout = handle
        try:
            code = bench.main(["--embed", "fake", "--data", str(data), "--repeat", "3", "--json", str(out),
                               "--workdir", str(base / "work"), "--deep", "--traces", str(TRANSCRIPTS)])
        finally:
            sys.stdout = saved
    return code, capture.read_text(encoding="utf-8"), json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.slow
def test_every_model_phase_is_measured_and_makes_calls(smoke: tuple[int, str, dict[str, Any]]) -> None:
    code, _, result = smoke
    assert code == 0
    (conv,) = result["conversations"]
    assert conv["conversation"] == "conv-t" and conv["memories"] == 9
    assert conv["failed"] == [] and conv["unscripted"] == []
    phases = {p["phase"]: p for p in conv["phases"]}
    for name in bench.MODEL_PHASES:
        p = phases[name]
        assert p["status"] == "ok", p
        assert p["failed_calls"] == 0, p
        if name in ("compress", "placement-triage"):  # LoCoMo observations are episodic, which compress never
            # offers, and none is in the inbox: their calls are whatever else they found (here the person files)
            assert p["calls"] >= p["counts"].get("batches", 0), p
            if not p["calls"]:
                continue
        else:
            assert p["calls"] > 0, p
        assert 0 < p["largest_request"] <= DEFAULT_MAX_PROMPT_TOKENS, p  # every request under the prompt cap
        assert p["request_tokens"] >= p["largest_request"], p
        assert p["tokens_match"], p
        assert p["request_bytes"] > p["prompt_bytes"] > 0, p  # the wire adds the schema and the envelope
        # usage is the responder's ceil(bytes / 4) of system and prompt, per call
        assert p["prompt_bytes"] / 4 <= p["input_tokens"] <= p["prompt_bytes"] / 4 + 2 * p["calls"], p
        assert p["output_tokens"] > 0
        assert p["wall_s"] >= p["model_s"] > 0
        assert p["own_s"] == pytest.approx(p["wall_s"] - p["model_s"], abs=1e-5)
        assert p["cpu_s"] > 0 and p["model_cpu_s"] > 0 and p["own_cpu_s"] >= -1e-3
    assert sum(p["calls"] for p in conv["phases"]) == sum(phases[n]["calls"] for n in bench.MODEL_PHASES)
    # the scripted answers are plausible work that passes the rails
    assert phases["dedup-merge"]["counts"]["merged"] == 1
    assert phases["arc-synthesis"]["counts"]["written"] == 1
    assert phases["task-detection"]["counts"]["minted"] == 2
    assert phases["task-detection"]["counts"]["unverified"] == 0
    assert phases["arc-synthesis"]["schemas"] == {"ArcPlan": 1, "ArcContent": 1}
    totals = result["totals"]
    assert set(totals) == set(bench.MODEL_PHASES)
    assert totals["task-detection"]["calls"] == phases["task-detection"]["calls"]


@pytest.mark.slow
def test_overhead_figures_are_positive_and_consistent(smoke: tuple[int, str, dict[str, Any]]) -> None:
    o = smoke[2]["overhead"]
    assert o["members"] == 20 and o["memberChars"] == 1200 and o["repeat"] == 3
    assert o["promptBytes"] > 20 * 1200
    for key in ("key_frame_us", "prompt_us", "phase_call_us", "bare_call_us", "resolve_us", "http_session_us",
                "http_session_cpu_us"):
        assert o[key] > 0, key
    assert o["overhead_us"] == pytest.approx(o["key_frame_us"] + o["prompt_us"] + o["resolve_us"]
                                             + o["bookkeeping_us"], abs=0.2)
    assert set(o["http_round_trip_us"]) == set(o["http_round_trip_cpu_us"]) == set(o["http_encode_us"]) == {
        "openai", "anthropic"}
    assert all(us > 0 for us in o["http_round_trip_us"].values())


@pytest.mark.slow
def test_markdown_tables_have_their_shape(smoke: tuple[int, str, dict[str, Any]]) -> None:
    _, text, _ = smoke
    lines = text.splitlines()
    head = "| " + " | ".join(bench.PHASE_COLUMNS) + " |"
    start = lines.index(head)
    assert lines[start + 1] == "| " + " | ".join("---" for _ in bench.PHASE_COLUMNS) + " |"
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split(" | ")])
    assert len(rows) == 2 * len(bench.MODEL_PHASES)  # one conversation, then the totals
    assert all(len(r) == len(bench.PHASE_COLUMNS) for r in rows)
    assert [r[1] for r in rows] == list(bench.MODEL_PHASES) * 2
    assert all(int(r[2]) > 0 for r in rows if r[1] not in ("compress", "placement-triage"))
    assert "| step | µs | CPU µs |" in text and "| **kernel overhead** |" in text
    assert "loopback HTTP round trip, openai" in text


# --- the responders, on prompts the kernel frames ---------------------------------------------------------


def _request(schema: str, prompt: str) -> ScriptedRequest:
    return ScriptedRequest("openai", schema, "system text", prompt, 0)


def test_merge_partition_groups_members_sharing_most_words_within_a_component() -> None:
    members = [Member("a", "Sam will send the budget report on Friday."),
               Member("b", "Sam will send the budget report by Friday."),
               Member("c", "Alex adopted a rescue dog.")]
    batch = key_members(members, label="member", member_chars=1200)
    prompt = batch.prompt("task", preamble="component_1 holds m1, m2, m3.")
    reply = bench.merge_partition(_request("MergePartition", prompt))
    value = MergePartition.model_validate(reply.value)
    assert [g.member_keys for g in value.groups] == [["m1", "m2"]]
    assert reply.input_tokens == math.ceil(len("system text") / 4) + math.ceil(len(prompt.encode()) / 4)
    assert reply.output_tokens == math.ceil(len(json.dumps(reply.value)) / 4)


def test_entity_clustering_joins_a_name_and_its_prefix_under_the_longest() -> None:
    members = [Member("x", "name: Jo\nmemories: 3"), Member("y", "name: Joanna\nmemories: 9"),
               Member("z", "name: Nate\nmemories: 4")]
    prompt = key_members(members, label="entity", member_chars=600).prompt("task")
    value = EntityClustering.model_validate(bench.entity_clustering(_request("EntityClustering", prompt)).value)
    assert [(c.canonical_key, sorted(c.member_keys)) for c in value.clusters] == [("m2", ["m1", "m2"])]


def test_task_findings_quote_the_will_sentence_verbatim() -> None:
    text = "Dana, session 1\nDana met Lee. Dana will call the landlord tomorrow. It rained."
    prompt = key_members([Member("p", text), Member("q", "Nothing open here.")], label="memory",
                         member_chars=1200).prompt("task")
    value = TaskDetection.model_validate(bench.task_findings(_request("TaskDetection", prompt)).value)
    assert [(f.member_key, f.sentence) for f in value.findings] == [("m1", "Dana will call the landlord tomorrow.")]


@pytest.mark.parametrize(("args", "needle"), [
    (["--conversation", "conv-nope"], "no LoCoMo conversation 'conv-nope'"),
    (["--repeat", "0"], "--repeat must be at least 1"),
])
def test_bad_arguments_exit_2_with_error_and_hint(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  args: list[str], needle: str) -> None:
    data = tiny_locomo(tmp_path / "tiny.json")
    assert bench.main(["--embed", "fake", "--data", str(data), *args]) == 2
    err = capsys.readouterr().err
    assert f"error: {needle}" in err and "hint: " in err


def test_missing_data_exits_2_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "absent.json"
    assert bench.main(["--embed", "fake", "--data", str(missing)]) == 2
    assert str(missing) in capsys.readouterr().err
