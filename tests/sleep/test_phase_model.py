"""PhaseModel (sleep/engine/model.py; docs/models.md §2, §3): one budget per run, isolated calls, summed usage, and
the rails log in the git common dir."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from git_memhtml.errors import ModelUnavailable
from git_memhtml.gitrepo import GitRepo
from git_memhtml.llm.contract import AnswerSchema, ModelRequest
from git_memhtml.llm.scripted import (
    Answer,
    Malformed,
    Refusal,
    Reply,
    ScriptedClient,
    ScriptedRequest,
    Stall,
    Status,
    offered_keys,
)
from git_memhtml.sleep.engine.batch import Member, key_members
from git_memhtml.sleep.engine.env import LlmBudget, PhaseEnv, RunServices
from git_memhtml.sleep.engine.model import (
    DRY_RUN,
    KEY_CHARS,
    LINE_CHARS,
    PAYLOAD_CHARS,
    PAYLOAD_KEYS,
    PhaseModel,
    rails_log_path,
)
from git_memhtml.sleep.engine.tokens import request_tokens
from tests.sleep.sleep_corpus_helpers import git, make_env, make_repo, memory


class PickKeys(AnswerSchema):
    """The test's answer: the keys a model picks."""

    member_keys: list[str]


def _request(prompt: str = "pick") -> ModelRequest[PickKeys]:
    return ModelRequest(PickKeys, "You pick keys.", prompt)


GOOD = Answer({"memberKeys": ["m1"]}, input_tokens=120, output_tokens=7)


@pytest.fixture()
def env(tmp_path: Path) -> PhaseEnv:
    """A PhaseEnv whose repo is a linked worktree (as a real run's is), with no model bound."""
    main = make_repo(tmp_path, {"resources/notes/a.html": memory("Ann likes tea.")})
    base = make_env(main, embed=False)
    wt = tmp_path / "run-tree"
    git(main.root, "worktree", "add", "-q", "-b", "sleep/2026-03-10", str(wt))
    return dataclasses.replace(base, repo=GitRepo.discover(wt))


def _bind(env: PhaseEnv, client: ScriptedClient | None, remaining: int | None = None,
          dry_run: bool = False) -> PhaseEnv:
    return dataclasses.replace(env, dry_run=dry_run,
                               services=RunServices(model=client, llm_budget=LlmBudget(remaining=remaining)))


def _log_lines(env: PhaseEnv) -> list[dict[str, object]]:
    path = rails_log_path(env)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="ascii").splitlines()]


# --- bound or not ---------------------------------------------------------------------------------------------------

def test_unbound_phase_makes_no_call_and_has_no_usage(env: PhaseEnv) -> None:
    model = PhaseModel.for_phase(env, "dedup-merge")
    assert not model.bound and model.detail == "no model bound"
    assert model.call(_request()) is None
    assert model.usage() is None and not model.judged_all
    assert env.services.llm_budget.spent == 0


def test_dry_run_makes_no_call_spends_nothing_and_writes_no_log(env: PhaseEnv) -> None:
    client = ScriptedClient({"PickKeys": [GOOD]})
    dry = _bind(env, client, remaining=5, dry_run=True)
    model = PhaseModel.for_phase(dry, "edge-typing")
    assert not model.bound and model.detail == DRY_RUN
    assert model.call(_request()) is None
    model.reject("unknown-key", {"key": "m9"})
    assert client.requests == [] and dry.services.llm_budget.remaining == 5 and dry.services.llm_budget.spent == 0
    assert model.usage() is None  # a dry run's counts are the counts without a model
    assert not rails_log_path(dry).exists()


def test_bound_phase_calls_and_sums_usage(env: PhaseEnv) -> None:
    client = ScriptedClient({"PickKeys": [GOOD, Answer({"memberKeys": []}, input_tokens=30, output_tokens=3)]})
    bound = _bind(env, client)
    model = PhaseModel.for_phase(bound, "compress")
    assert model.bound and model.detail is None
    first = model.call(_request("one"))
    second = model.call(_request("two"))
    assert first is not None and first.member_keys == ["m1"]
    assert second is not None and second.member_keys == []
    usage = model.usage()
    assert usage is not None
    assert (usage.calls, usage.failed_calls, usage.budget_skipped) == (2, 0, 0)
    assert (usage.input_tokens, usage.output_tokens) == (150, 10)
    assert usage.prompt_bytes == 2 * len(b"You pick keys.") + len(b"one") + len(b"two")
    assert model.judged_all and bound.services.llm_budget.spent == 2
    one = request_tokens("You pick keys.", "one")
    assert (usage.prompt_tokens, usage.largest_prompt) == (2 * one, one)  # "one" and "two": one token each
    assert usage.wire() == {"inputTokens": 150, "outputTokens": 10, "failedCalls": 0, "budgetSkipped": 0,
                            "promptTokens": 2 * one, "largestPrompt": one}
    assert [r.prompt for r in client.requests] == ["one", "two"]


# --- one budget per run ---------------------------------------------------------------------------------------------

def test_the_budget_is_shared_by_every_phase_of_the_run(env: PhaseEnv) -> None:
    client = ScriptedClient({"PickKeys": [GOOD]})
    bound = _bind(env, client, remaining=3)
    first = PhaseModel.for_phase(bound, "dedup-merge")
    second = PhaseModel.for_phase(bound, "edge-typing")
    assert first.call(_request()) is not None and first.call(_request()) is not None
    assert second.call(_request()) is not None
    assert second.call(_request()) is None and second.call(_request()) is None
    assert first.call(_request()) is None
    assert len(client.requests) == 3
    assert bound.services.llm_budget.remaining == 0 and bound.services.llm_budget.spent == 3
    one, two = first.usage(), second.usage()
    assert one is not None and two is not None
    assert (one.calls, one.budget_skipped, two.calls, two.budget_skipped) == (2, 1, 1, 2)
    assert not second.judged_all and not first.judged_all


def test_a_spent_budget_skips_every_call_without_asking(env: PhaseEnv) -> None:
    client = ScriptedClient({"PickKeys": [GOOD]})
    bound = _bind(env, client, remaining=0)
    model = PhaseModel.for_phase(bound, "task-detection")
    assert [model.call(_request()) for _ in range(4)] == [None] * 4
    assert client.requests == []
    usage = model.usage()
    assert usage is not None and (usage.calls, usage.budget_skipped, usage.input_tokens) == (0, 4, 0)
    assert usage.wire()["budgetSkipped"] == 4 and not model.judged_all
    assert bound.services.llm_budget.spent == 0


# --- isolation: a failing call costs one batch ----------------------------------------------------------------------

@pytest.mark.parametrize(("reply", "error"), [
    (Malformed(), "LlmContractViolation"),
    (Answer({"memberKeys": "m1", "extra": 1}), "LlmContractViolation"),
    (Status(429, retry_after=1), "ModelUnavailable"),
    (Status(503), "ModelUnavailable"),
    (Stall(60.0), "ModelUnavailable"),
    (Refusal(), "ProviderRefused"),
    (Status(401), "ProviderRefused"),
])
def test_a_failing_call_is_counted_logged_and_never_raised(env: PhaseEnv, reply: Reply, error: str) -> None:
    client = ScriptedClient({"PickKeys": [reply, GOOD]}, timeout=5.0)
    bound = _bind(env, client, remaining=5)
    model = PhaseModel.for_phase(bound, "arc-synthesis")
    assert model.call(_request()) is None
    after = model.call(_request())
    assert after is not None and after.member_keys == ["m1"]  # the next batch still works
    usage = model.usage()
    assert usage is not None
    assert (usage.calls, usage.failed_calls, usage.input_tokens) == (2, 1, 120)
    assert bound.services.llm_budget.remaining == 3  # the failed call cost one call of the budget
    assert not model.judged_all and usage.rails == ()  # a failed call is not a rail refusal
    lines = _log_lines(bound)
    assert len(lines) == 1
    assert lines[0]["rail"] == "call-failed" and lines[0]["phase"] == "arc-synthesis"
    payload = lines[0]["payload"]
    assert isinstance(payload, dict) and payload["error"] == error and payload["schema"] == "PickKeys"


# --- rails: counted per rail, logged in the git common dir ----------------------------------------------------------

def test_rejections_are_counted_per_rail_and_logged_outside_the_work_tree(env: PhaseEnv) -> None:
    bound = _bind(env, ScriptedClient({"PickKeys": [GOOD]}))
    model = PhaseModel.for_phase(bound, "dedup-merge")
    model.reject("unknown-key", {"key": "m99"})
    model.reject("veto", {"keep": "m1", "drop": "m2", "reasons": ["negation"]})
    model.reject("unknown-key", {"key": "areas/x.html"})
    usage = model.usage()
    assert usage is not None and usage.rails == (("unknown-key", 2), ("veto", 1)) and usage.rejected == 3
    assert usage.wire()["railUnknownKey"] == 2 and usage.wire()["railVeto"] == 1
    path = rails_log_path(bound)
    common = bound.repo.common_dir.resolve()
    assert path.resolve().is_relative_to(common)
    assert not path.resolve().is_relative_to(bound.repo.root.resolve())
    assert path.name == "sleep-2026-03-10.rails.jsonl"
    assert git(bound.repo.root, "status", "--porcelain", "--untracked-files=all") == ""
    lines = _log_lines(bound)
    assert [(line["rail"], line["payload"]) for line in lines] == [
        ("unknown-key", {"key": "m99"}),
        ("veto", {"keep": "m1", "drop": "m2", "reasons": ["negation"]}),
        ("unknown-key", {"key": "areas/x.html"}),
    ]
    assert {line["run"] for line in lines} == {"sleep/2026-03-10"}
    assert not model.judged_all  # an answer about keys it was never offered is no verdict on the offered ones


def test_a_refusal_other_than_an_unknown_key_keeps_the_night_judged(env: PhaseEnv) -> None:
    model = PhaseModel.for_phase(_bind(env, ScriptedClient({"PickKeys": [GOOD]})), "dedup-merge")
    model.reject("veto", {"keep": "m1", "drop": "m2", "reasons": ["negation"]})
    model.reject("role-guard", {"keep": "m1", "drop": "m3"})
    assert model.judged_all  # the model answered about what it was shown; code refused some of it


def test_a_hostile_payload_is_bounded_in_the_log(env: PhaseEnv) -> None:
    bound = _bind(env, ScriptedClient({"PickKeys": [GOOD]}))
    model = PhaseModel.for_phase(bound, "compress")
    many = {f"k{i}": i for i in range(PAYLOAD_KEYS + 30)}
    model.reject("many-keys", many)
    model.reject("long", {"text": "x" * 1_000_000, "k" * 5000: 1, "list": ["y" * 3000] * 500})
    model.reject("astral", {f"a{i}": "😀" * PAYLOAD_CHARS for i in range(PAYLOAD_KEYS)})
    model.reject("odd", {"tuple-keys": {(1, 2): 3}, "nan": float("nan"), "set": {1}, "bytes": b"\xff",
                         "lone": "\ud800"})
    model.reject("quotes", {f"q{i}": ['"\\' * PAYLOAD_CHARS] for i in range(PAYLOAD_KEYS)})
    raw = rails_log_path(bound).read_text(encoding="ascii").splitlines()
    assert len(raw) == 5 and all(len(line) <= LINE_CHARS + 200 for line in raw)
    assert set(json.loads(raw[4])["payload"]) == {"truncated"}
    raw = raw[:4]
    first, second, third, fourth = (json.loads(line) for line in raw)
    assert len(first["payload"]) == PAYLOAD_KEYS + 1 and first["payload"]["…"] == 30
    assert len(second["payload"]["text"]) == PAYLOAD_CHARS + 1
    assert all(len(key) <= KEY_CHARS for key in second["payload"])
    assert len(second["payload"]["list"]) == PAYLOAD_CHARS + 1  # a long non-scalar is logged as cut JSON text
    assert set(third["payload"]) == {"truncated"}
    assert isinstance(fourth["payload"]["tuple-keys"], str) and fourth["payload"]["nan"] == "nan"
    assert fourth["payload"]["lone"] == "\ud800"


def test_an_unwritable_log_does_not_fail_the_phase(env: PhaseEnv) -> None:
    bound = _bind(env, ScriptedClient({"PickKeys": [GOOD]}))
    runs = rails_log_path(bound).parent
    runs.parent.mkdir(parents=True, exist_ok=True)
    runs.write_text("a file where the folder should be", encoding="utf-8")
    model = PhaseModel.for_phase(bound, "compress")
    model.reject("unknown-key", {"key": "m9"})
    assert model.rails["unknown-key"] == 1


# --- ScriptedClient: the in-process player the phase tests use ------------------------------------------------------

def test_scripted_client_plays_replies_in_order_and_repeats_the_last() -> None:
    client = ScriptedClient({"PickKeys": [Answer({"memberKeys": ["m2"]}), Answer({"member_keys": ["m1"]})]})
    values = [client.call(_request(str(i))).value.member_keys for i in range(3)]
    assert values == [["m2"], ["m1"], ["m1"]]
    assert [r.index for r in client.requests] == [0, 1, 2] and client.requests[0].system == "You pick keys."


def test_scripted_client_gives_a_responder_the_request() -> None:
    def echo(req: ScriptedRequest) -> Reply:
        return Answer({"memberKeys": list(reversed(offered_keys(req.prompt)))}, input_tokens=len(req.prompt))

    batch = key_members([Member("a", "x"), Member("b", "y")], label="member", member_chars=10)
    answer = ScriptedClient({"PickKeys": echo}).call(_request(batch.prompt("pick")))
    assert answer.value.member_keys == ["m2", "m1"] and answer.usage.input_tokens == len(batch.prompt("pick"))


@pytest.mark.parametrize(("script", "error", "needle"), [
    ({}, "ModelUnavailable", "HTTP 500"),
    ({"PickKeys": []}, "ModelUnavailable", "HTTP 500"),
    ({"PickKeys": [Stall(1.0)]}, "ModelUnavailable", "sent nothing"),
    ({"PickKeys": [Stall(9.0, GOOD)]}, "ModelUnavailable", "timed out"),
    ({"PickKeys": [Status(404)]}, "ProviderRefused", "HTTP 404"),
    ({"PickKeys": [Answer({"memberKeys": ["m1"], "paths": ["a.html"]})]}, "LlmContractViolation", "fails PickKeys"),
    ({"PickKeys": [Answer({"memberKeys": [float("nan")]})]}, "LlmContractViolation", "not JSON"),
    ({"PickKeys": [Answer({"memberKeys": {"m1"}})]}, "LlmContractViolation", "not JSON"),
    ({"PickKeys": [Answer({"memberKeys": [b"m1"]})]}, "LlmContractViolation", "not JSON"),
])
def test_scripted_client_raises_the_typed_errors(script: dict[str, list[Reply]], error: str, needle: str) -> None:
    with pytest.raises(ModelUnavailable, match=needle) as caught:
        ScriptedClient(script, timeout=5.0).call(_request())
    assert type(caught.value).__name__ == error and caught.value.hint


def test_scripted_client_decodes_what_json_carries() -> None:
    answer = ScriptedClient({"PickKeys": [Answer({"memberKeys": ("m2", "m1")})]}).call(_request())
    assert answer.value.member_keys == ["m2", "m1"]  # a tuple arrives as a JSON array


def test_scripted_client_plays_through_a_short_stall() -> None:
    answer = ScriptedClient({"PickKeys": [Stall(0.5, Stall(0.5, GOOD))]}, timeout=5.0).call(_request())
    assert answer.value.member_keys == ["m1"]
