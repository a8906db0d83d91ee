"""Both dialects over real HTTP on loopback: the exact request each sends, and every kind of answer decoded into a
value or one of the typed errors (ScriptedModelServer for the scripted replies, a raw server for hand-made ones)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from git_memhtml.errors import LlmContractViolation, ModelUnavailable, ProviderRefused
from git_memhtml.llm.client import HttpModelClient, LlmSettings
from git_memhtml.llm.contract import AnswerSchema, Dialect, ModelRequest, Usage
from git_memhtml.llm.scripted import Answer, Malformed, Refusal, Script, ScriptedRequest, Stall, Status
from git_memhtml.llm.scripted_server import ScriptedModelServer
from tests.llm.rawserver import Raw, closed_port_root, json_reply, serve

DIALECTS: list[Dialect] = ["openai", "anthropic"]
KEY = "sk-test-5ecret-key"


class Verdict(AnswerSchema):
    """Which offered members say the same thing."""

    member_keys: list[str]
    reason: str | None = None


REQUEST = ModelRequest(Verdict, "You judge memories.", "<<<members>>> m1 m2", max_tokens=500_000)
GOOD = {"memberKeys": ["m1", "m2"], "reason": "same fact"}


@pytest.fixture
def raws() -> Iterator[list[Raw]]:
    started: list[Raw] = []
    yield started
    for raw in started:
        raw.close()


# ---- the request on the wire (golden) ----

WIRE_SCHEMA = {
    "description": "Which offered members say the same thing.",
    "properties": {"memberKeys": {"items": {"type": "string"}, "type": "array"},
                   "reason": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
    "type": "object", "required": ["memberKeys", "reason"], "additionalProperties": False,
}

GOLDEN: dict[str, tuple[str, dict[str, str], dict[str, Any]]] = {
    "openai": ("/v1/chat/completions", {"authorization": f"Bearer {KEY}", "content-type": "application/json"}, {
        "model": "m-1",
        "messages": [{"role": "system", "content": "You judge memories."},
                     {"role": "user", "content": "<<<members>>> m1 m2"}],
        "max_completion_tokens": 128000,
        "response_format": {"type": "json_schema",
                            "json_schema": {"name": "Verdict", "strict": True, "schema": WIRE_SCHEMA}},
    }),
    "anthropic": ("/v1/messages", {"x-api-key": KEY, "anthropic-version": "2023-06-01",
                                   "content-type": "application/json"}, {
        "model": "m-1",
        "max_tokens": 128000,
        "system": [{"type": "text", "text": "You judge memories.", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": "<<<members>>> m1 m2"}],
        "tools": [{"name": "Verdict", "description": "Which offered members say the same thing.",
                   "input_schema": WIRE_SCHEMA}],
        "tool_choice": {"type": "tool", "name": "Verdict"},
    }),
}

REPLIES: dict[str, dict[str, Any]] = {
    "openai": {"choices": [{"index": 0, "message": {"role": "assistant", "content": json.dumps(GOOD)},
                            "finish_reason": "stop"}], "usage": {"prompt_tokens": 11, "completion_tokens": 7}},
    "anthropic": {"type": "message", "content": [{"type": "tool_use", "id": "t", "name": "Verdict", "input": GOOD}],
                  "stop_reason": "tool_use", "usage": {"input_tokens": 11, "output_tokens": 7}},
}


def raw_client(raw: Raw, dialect: Dialect, *, key: str | None = KEY, url: str | None = None,
               attempts: int = 1) -> HttpModelClient:
    base = url or (raw.root + "/v1" if dialect == "openai" else raw.root)
    return HttpModelClient(LlmSettings(dialect, base, "m-1", key=key, key_env="TEST_KEY", timeout=5.0,
                                       max_attempts=attempts), sleep=lambda s: None)


def fixed(body: Any, status: int = 200) -> Any:
    return lambda path, headers, raw_body: json_reply(body, status)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_request_bytes_match_the_golden_shape(raws: list[Raw], dialect: Dialect) -> None:
    raw = serve(fixed(REPLIES[dialect]))
    raws.append(raw)
    answer = raw_client(raw, dialect).call(REQUEST)
    path, headers, body = GOLDEN[dialect]
    seen = raw.seen[0]
    assert seen.path == path
    assert {k: seen.headers.get(k) for k in headers} == headers
    assert seen.json() == body  # max_tokens clamped to 128000
    assert answer.value == Verdict(member_keys=["m1", "m2"], reason="same fact")
    assert answer.usage == Usage(11, 7) and answer.attempts == 1


@pytest.mark.parametrize("dialect", DIALECTS)
def test_no_key_sends_no_auth_header_and_an_empty_system_is_left_out(raws: list[Raw], dialect: Dialect) -> None:
    raw = serve(fixed(REPLIES[dialect]))
    raws.append(raw)
    raw_client(raw, dialect, key=None).call(ModelRequest(Verdict, "", "hi", cache_system=False))
    seen = raw.seen[0]
    assert "authorization" not in seen.headers and "x-api-key" not in seen.headers
    body = seen.json()
    if dialect == "openai":
        assert body["messages"] == [{"role": "user", "content": "hi"}]
    else:
        assert "system" not in body and seen.headers["anthropic-version"] == "2023-06-01"


def test_an_uncached_anthropic_system_is_a_plain_string(raws: list[Raw]) -> None:
    raw = serve(fixed(REPLIES["anthropic"]))
    raws.append(raw)
    raw_client(raw, "anthropic").call(ModelRequest(Verdict, "sys", "hi", cache_system=False))
    assert raw.seen[0].json()["system"] == "sys"


@pytest.mark.parametrize(("dialect", "suffix", "path"), [
    ("openai", "/v1/chat/completions", "/v1/chat/completions"), ("openai", "/v1/", "/v1/chat/completions"),
    ("anthropic", "/v1/messages", "/v1/messages"), ("anthropic", "/v1", "/v1/messages"),
    ("anthropic", "/", "/v1/messages")])
def test_a_base_url_or_a_full_endpoint_both_work(raws: list[Raw], dialect: Dialect, suffix: str, path: str) -> None:
    raw = serve(fixed(REPLIES[dialect]))
    raws.append(raw)
    raw_client(raw, dialect, url=raw.root + suffix).call(REQUEST)
    assert raw.seen[0].path == path


def test_anthropic_finds_the_tool_use_block_by_name_not_position(raws: list[Raw]) -> None:
    body = {"type": "message", "stop_reason": "tool_use", "usage": {
        "input_tokens": 3, "cache_creation_input_tokens": 5, "cache_read_input_tokens": 2, "output_tokens": 4},
        "content": [{"type": "text", "text": "Let me think."},
                    {"type": "tool_use", "id": "a", "name": "Other", "input": {"memberKeys": ["m9"]}},
                    {"type": "tool_use", "id": "b", "name": "Verdict", "input": GOOD}]}
    raw = serve(fixed(body))
    raws.append(raw)
    answer = raw_client(raw, "anthropic").call(REQUEST)
    assert answer.value.member_keys == ["m1", "m2"]
    assert answer.usage == Usage(10, 4)  # cache writes and reads are prompt tokens read too


# ---- hand-made replies: truncation, filters, refusals, bodies that are not the protocol ----

OPENAI_BAD: list[tuple[str, Any, type[Exception], str]] = [
    ("truncated", {"choices": [{"message": {"content": '{"memberKeys": ["m1"'}, "finish_reason": "length"}]},
     LlmContractViolation, "cut short"),
    ("content filter", {"choices": [{"message": {"content": None}, "finish_reason": "content_filter"}]},
     ProviderRefused, "content filter"),
    ("refusal field", {"choices": [{"message": {"content": None, "refusal": "No."}, "finish_reason": "stop"}]},
     ProviderRefused, "refused"),
    ("no content", {"choices": [{"message": {"content": ""}, "finish_reason": "stop"}]},
     LlmContractViolation, "no content"),
    ("no choices", {"choices": []}, LlmContractViolation, "no choices"),
    ("not an object", ["x"], LlmContractViolation, "not a chat completion"),
    ("content is a list", {"choices": [{"message": {"content": "[1, 2]"}, "finish_reason": "stop"}]},
     LlmContractViolation, "not an object"),
]

ANTHROPIC_BAD: list[tuple[str, Any, type[Exception], str]] = [
    ("truncated", {"content": [{"type": "tool_use", "name": "Verdict", "input": {}}], "stop_reason": "max_tokens"},
     LlmContractViolation, "cut short"),
    ("refusal", {"content": [{"type": "text", "text": "I won't."}], "stop_reason": "refusal"},
     ProviderRefused, "I won't."),
    ("another tool only", {"content": [{"type": "tool_use", "name": "Other", "input": GOOD}],
                           "stop_reason": "tool_use"}, LlmContractViolation, "no tool_use block named Verdict"),
    ("input not an object", {"content": [{"type": "tool_use", "name": "Verdict", "input": "m1"}],
                             "stop_reason": "tool_use"}, LlmContractViolation, "not an object"),
    ("not a message", {"error": "x"}, LlmContractViolation, "not a Messages API message"),
]


@pytest.mark.parametrize(("dialect", "label", "body", "kind", "needle"),
                         [("openai", *row) for row in OPENAI_BAD] + [("anthropic", *row) for row in ANTHROPIC_BAD],
                         ids=[f"openai-{r[0]}" for r in OPENAI_BAD] + [f"anthropic-{r[0]}" for r in ANTHROPIC_BAD])
def test_hand_made_replies_map_to_typed_errors(raws: list[Raw], dialect: Dialect, label: str, body: Any,
                                               kind: type[Exception], needle: str) -> None:
    raw = serve(fixed(body))
    raws.append(raw)
    with pytest.raises(kind) as err:
        raw_client(raw, dialect).call(REQUEST)
    assert needle in str(err.value) and err.value.hint  # type: ignore[attr-defined]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_2xx_body_that_is_not_json_is_unavailable(raws: list[Raw], dialect: Dialect) -> None:
    raw = serve(lambda p, h, b: (200, {"Content-Type": "text/html"}, b"<html>proxy login</html>"))
    raws.append(raw)
    with pytest.raises(ModelUnavailable, match="not JSON") as err:
        raw_client(raw, dialect).call(REQUEST)
    assert "proxy login" in err.value.message and "memhtml.llmurl" in str(err.value.hint)


@pytest.mark.parametrize(("status", "setting"), [(400, "memhtml.llmmodel"), (401, "$TEST_KEY"),
                                                 (403, "memhtml.llmkeyenv"), (404, "memhtml.llmurl"),
                                                 (422, "memhtml.llmmodel")])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_4xx_is_refused_once_with_a_hint_naming_the_setting(raws: list[Raw], dialect: Dialect, status: int,
                                                            setting: str) -> None:
    raw = serve(fixed({"error": {"message": f"Incorrect API key provided: {KEY}"}}, status))
    raws.append(raw)
    client = raw_client(raw, dialect, attempts=4)
    with pytest.raises(ProviderRefused) as err:
        client.call(REQUEST)
    assert len(raw.seen) == 1 and f"HTTP {status}" in err.value.message
    assert setting in str(err.value.hint)
    assert KEY not in err.value.message and KEY not in str(err.value.hint) and "***" in err.value.message
    assert KEY not in client.describe() and KEY not in repr(client)


def test_a_long_error_body_is_previewed_in_at_most_800_characters(raws: list[Raw]) -> None:
    raw = serve(lambda p, h, b: (500, {}, b"E" * 5000))
    raws.append(raw)
    with pytest.raises(ModelUnavailable) as err:
        raw_client(raw, "openai").call(REQUEST)
    assert err.value.message.count("E") <= 801 and err.value.message.endswith("…")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_unreachable_names_the_url_and_the_setting(dialect: Dialect) -> None:
    root = closed_port_root()
    client = HttpModelClient(LlmSettings(dialect, root, "m", key=KEY, timeout=2.0))
    with pytest.raises(ModelUnavailable) as err:
        client.call(REQUEST)
    assert root in err.value.message and "unreachable" in err.value.message
    assert "memhtml.llmurl" in str(err.value.hint) and KEY not in err.value.message


# ---- scripted replies over both dialects ----


def play(dialect: Dialect, script: Script, *, calls: int = 1, timeout: float = 5.0, attempts: int = 4,
         waits: list[float] | None = None) -> tuple[list[Any], ScriptedModelServer]:
    """Make ``calls`` calls against a scripted server; each outcome is the answer or the exception."""
    outcomes: list[Any] = []
    with ScriptedModelServer(script) as server:
        client = server.client(dialect, timeout=timeout, max_attempts=attempts, key=KEY,
                               sleep=(waits.append if waits is not None else (lambda s: None)))
        for _ in range(calls):
            try:
                outcomes.append(client.call(REQUEST))
            except ModelUnavailable as exc:
                outcomes.append(exc)
    return outcomes, server


SCRIPTED: list[tuple[str, list[Any], type[Exception] | None]] = [
    ("good", [Answer(GOOD)], None),
    ("malformed json", [Malformed()], LlmContractViolation),
    ("off schema", [Answer({"memberKeys": "m1"})], LlmContractViolation),
    ("missing field", [Answer({"reason": "x"})], LlmContractViolation),
    ("extra field", [Answer({**GOOD, "path": "areas/x.html"})], LlmContractViolation),
    ("refusal", [Refusal()], ProviderRefused),
    ("400", [Status(400)], ProviderRefused),
    ("500 exhausted", [Status(500)], ModelUnavailable),
]


@pytest.mark.parametrize(("label", "script", "kind"), SCRIPTED, ids=[r[0] for r in SCRIPTED])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_scripted_replies_decode_or_raise_their_kind(dialect: Dialect, label: str, script: list[Any],
                                                     kind: type[Exception] | None) -> None:
    (outcome,), server = play(dialect, {"Verdict": script})
    if kind is None:
        assert outcome.value == Verdict(member_keys=["m1", "m2"], reason="same fact")
        assert outcome.usage == Usage(100, 20)
    else:
        assert type(outcome) is kind, outcome
        assert isinstance(outcome, ModelUnavailable) and outcome.hint and KEY not in outcome.message
    attempts = 4 if label == "500 exhausted" else 1
    assert len(server.requests) == attempts and all(r.dialect == dialect for r in server.requests)
    if label == "500 exhausted":
        assert "after 4 attempts" in outcome.message


@pytest.mark.parametrize("dialect", DIALECTS)
def test_429_then_ok_honours_retry_after(dialect: Dialect) -> None:
    waits: list[float] = []
    (outcome,), server = play(dialect, {"Verdict": [Status(429, retry_after=2.5), Answer(GOOD)]}, waits=waits)
    assert outcome.value.member_keys == ["m1", "m2"] and outcome.attempts == 2
    assert waits == [2.5] and [r.index for r in server.requests] == [0, 1]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_stall_longer_than_the_timeout_is_unavailable(dialect: Dialect) -> None:
    (outcome,), _ = play(dialect, {"Verdict": [Stall(1.5, Answer(GOOD))]}, timeout=0.3)
    assert type(outcome).__name__ == "TransportFailure" and isinstance(outcome, ModelUnavailable)
    assert "timed out after 0.3 s" in outcome.message and "memhtml.llmtimeout" in str(outcome.hint)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_stall_shorter_than_the_timeout_answers(dialect: Dialect) -> None:
    (outcome,), _ = play(dialect, {"Verdict": [Stall(0.2, Answer(GOOD))]}, timeout=5.0)
    assert outcome.value.member_keys == ["m1", "m2"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_usage_sums_over_calls_and_the_server_logs_decoded_bodies(dialect: Dialect) -> None:
    script = {"Verdict": [Answer(GOOD, 10, 1), Answer(GOOD, 20, 2), Answer(GOOD, 30, 3)]}
    outcomes, server = play(dialect, script, calls=3)
    total = sum((o.usage for o in outcomes), Usage())
    assert total == Usage(60, 6)
    assert [r.schema_name for r in server.requests] == ["Verdict"] * 3
    assert all(r.system == "You judge memories." and r.prompt == "<<<members>>> m1 m2" for r in server.requests)
    assert all(r.body["model"] == "scripted" for r in server.requests)
    auth = "authorization" if dialect == "openai" else "x-api-key"
    assert all(KEY in h[auth] for h in server.headers)


def test_a_responder_sees_each_request_and_the_dialect() -> None:
    seen: list[ScriptedRequest] = []

    def responder(req: ScriptedRequest) -> Answer:
        seen.append(req)
        return Answer({"memberKeys": [req.dialect], "reason": None})

    for dialect in DIALECTS:
        (outcome,), _ = play(dialect, {"Verdict": responder})
        assert outcome.value.member_keys == [dialect]
    assert [r.dialect for r in seen] == DIALECTS


def test_the_server_refuses_what_is_not_a_model_request() -> None:
    import httpx  # the test talks raw HTTP to the server, outside the package's choke point

    with ScriptedModelServer({}) as server:
        root = server.url("anthropic")
        assert httpx.post(root + "/v1/other", json={}).status_code == 404
        assert httpx.post(root + "/v1/messages", content=b"{not json").status_code == 400
        assert httpx.post(root + "/v1/chat/completions", json={"messages": []}).status_code == 400
        unscripted = httpx.post(root + "/v1/messages", json={"tool_choice": {"type": "tool", "name": "Nope"}})
        assert unscripted.status_code == 500 and "no script for Nope" in unscripted.text
    assert [r.schema_name for r in server.requests] == ["Nope"]


def test_the_server_shuts_down_cleanly_with_a_stalled_request_in_flight() -> None:
    """Closing the server does not wait for a handler stuck in a stall: when ``close`` returns, the port is released
    and the stalled handler thread is still alive (it stalls 30 s, far longer than any close; a close that joined
    it would return only once it had ended)."""
    import threading

    before = set(threading.enumerate())
    with ScriptedModelServer({"Verdict": [Stall(30.0)]}) as server:
        client = server.client("openai", timeout=0.2, max_attempts=1)
        with pytest.raises(ModelUnavailable):
            client.call(REQUEST)
    stalled = [t for t in set(threading.enumerate()) - before if "process_request_thread" in t.name]
    assert len(stalled) == 1 and stalled[0].is_alive()
    assert [r.schema_name for r in server.requests] == ["Verdict"]
    with pytest.raises(RuntimeError):
        _ = server.port




def test_the_client_backoff_doubles_with_its_injected_jitter(raws: list[Raw]) -> None:
    raw = serve(fixed({"error": "busy"}, 503))
    raws.append(raw)
    waits: list[float] = []
    client = HttpModelClient(LlmSettings("openai", raw.root + "/v1", "m", timeout=5.0, max_attempts=3),
                             sleep=waits.append, rand=lambda: 1.0, backoff=0.2)
    with pytest.raises(ModelUnavailable, match="after 3 attempts"):
        client.call(REQUEST)
    assert waits == [0.25, 0.5]  # 0.2 and 0.4, each with the full 25 % jitter


def test_a_redirect_is_not_followed_and_names_the_url_setting(raws: list[Raw]) -> None:
    raw = serve(lambda p, h, b: (307, {"Location": "https://elsewhere.invalid/v1/chat/completions"}, b""))
    raws.append(raw)
    with pytest.raises(ModelUnavailable) as err:
        raw_client(raw, "openai", attempts=3).call(REQUEST)
    assert type(err.value) is ModelUnavailable and "HTTP 307" in err.value.message
    assert "memhtml.llmurl" in str(err.value.hint) and len(raw.seen) == 1


@pytest.mark.parametrize(("usage", "expected"), [({"prompt_tokens": 5.0, "completion_tokens": 2}, Usage(5, 2)),
                                                 ({"prompt_tokens": -1, "completion_tokens": "7"}, Usage(0, 0)),
                                                 ({"prompt_tokens": True, "completion_tokens": 2.5}, Usage(0, 0)),
                                                 (None, Usage(0, 0))])
def test_usage_junk_counts_zero(raws: list[Raw], usage: Any, expected: Usage) -> None:
    body = {**REPLIES["openai"], "usage": usage}
    raw = serve(fixed(body))
    raws.append(raw)
    assert raw_client(raw, "openai").call(REQUEST).usage == expected


class Generic_(AnswerSchema):
    ok: bool


def test_a_schema_name_the_providers_refuse_is_a_bug_found_before_sending(raws: list[Raw]) -> None:
    raw = serve(fixed(REPLIES["openai"]))
    raws.append(raw)
    bad = type("Answer[int]", (Generic_,), {})
    with pytest.raises(ValueError, match="cannot be a schema name"):
        raw_client(raw, "openai").call(ModelRequest(bad, "", "x"))
    assert raw.seen == []


@pytest.mark.parametrize("dialect", DIALECTS)
def test_one_pool_serves_every_call_and_close_reopens(dialect: Dialect) -> None:
    with ScriptedModelServer({"Verdict": [Answer(GOOD)]}) as server:
        with server.client(dialect) as client:
            first = client._open()
            client.call(REQUEST)
            client.call(REQUEST)
            assert client._open() is first  # kept across calls
            client.close()
            assert client._transport is None
            assert client.call(REQUEST).value.member_keys == ["m1", "m2"]  # reopened
        assert client._transport is None
        assert len(server.requests) == 3


DEEP = "[" * 100_000 + "]" * 100_000
"""JSON nested far deeper than the decoder's recursion goes."""


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("where", ["content", "body"])
def test_json_nested_too_deep_is_a_contract_violation_or_unavailable_never_a_crash(
    raws: list[Raw], dialect: Dialect, where: str
) -> None:
    def deep(path: str, headers: Any, raw_body: bytes) -> tuple[int, Any, bytes]:
        if where == "body":
            return 200, {"Content-Type": "application/json"}, DEEP.encode()
        if dialect == "openai":
            return json_reply({"choices": [{"message": {"role": "assistant", "content": DEEP},
                                            "finish_reason": "stop"}], "usage": {}})
        return json_reply({"content": [{"type": "text", "text": DEEP}], "stop_reason": "end_turn", "usage": {}})

    raw = serve(deep)
    raws.append(raw)
    with pytest.raises(ModelUnavailable):  # LlmContractViolation is one too: one batch lost, never a RecursionError
        raw_client(raw, dialect).call(ModelRequest(Verdict, "", "x"))
