"""The model binding at the CLI edge: ``git memhtml config`` rows, ``doctor --model``, ``sleep run|resume
--max-llm-calls`` and ``demo --llm``, against the scripted server over loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.app import App
from git_memhtml.cli.main import main
from git_memhtml.cli.model_binding import bind_model
from git_memhtml.llm.client import HttpModelClient
from git_memhtml.llm.scripted import Answer, Status
from git_memhtml.llm.scripted_server import ScriptedModelServer
from git_memhtml.sleep.engine.run import NO_MODEL

KEY = "sk-cli-secret-0042"


def cli(capsys: pytest.CaptureFixture[str], *args: str, as_json: bool = True) -> tuple[int, Any, str]:
    capsys.readouterr()
    code = main([*args, "--json"] if as_json else list(args))
    captured = capsys.readouterr()
    out: Any = captured.out
    if as_json and captured.out.strip():
        out = json.loads(captured.out)
    return code, out, captured.err


@pytest.fixture
def memrepo(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "mem"
    monkeypatch.setenv("MEMHTML_NOW", "2026-02-01T00:00:00Z")
    assert cli(capsys, "init", str(root))[0] == 0
    for title, claim in [("Checkout timeout", "The checkout-api upstream timeout is 30 seconds."),
                         ("Deploy day", "Alpha deploys on Mondays.")]:
        assert cli(capsys, "-C", str(root), "write", "--type", "semantic", "--title", title, "--claim", claim)[0] == 0
    return root


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer({"DoctorPing": [Answer({"ok": True}, 12, 3)]}) as srv:
        yield srv


def bind_env(monkeypatch: pytest.MonkeyPatch, server: ScriptedModelServer, dialect: str = "openai") -> None:
    monkeypatch.setenv("MEMHTML_LLM", dialect)
    monkeypatch.setenv("MEMHTML_LLM_URL", server.url(dialect))  # type: ignore[arg-type]
    monkeypatch.setenv("MEMHTML_LLM_MODEL", "qwen-test")
    monkeypatch.setenv("MEMHTML_LLM_KEY_ENV", "TEST_LLM_KEY")
    monkeypatch.setenv("TEST_LLM_KEY", KEY)
    monkeypatch.setenv("MEMHTML_LLM_ATTEMPTS", "1")


def test_config_shows_the_model_rows_with_dialect_defaults(memrepo: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = cli(capsys, "-C", str(memrepo), "config")
    rows = out["data"]
    assert code == 0 and rows["memhtml.llm"]["value"] == "off" and rows["memhtml.llmurl"]["value"] is None
    monkeypatch.setenv("MEMHTML_LLM", "anthropic")
    monkeypatch.setenv("MEMHTML_LLM_TIMEOUT", "9")
    code, out, _ = cli(capsys, "-C", str(memrepo), "config")
    rows = out["data"]
    shown = {k: (rows[k]["value"], rows[k]["source"], rows[k]["env"]) for k in
             ("memhtml.llm", "memhtml.llmurl", "memhtml.llmmodel", "memhtml.llmkeyenv", "memhtml.llmtimeout",
              "memhtml.llmattempts", "memhtml.llmmaxprompt")}
    assert shown == {
        "memhtml.llm": ("anthropic", "env", "MEMHTML_LLM"),
        "memhtml.llmurl": ("https://api.anthropic.com", "default (anthropic)", "MEMHTML_LLM_URL"),
        "memhtml.llmmodel": (None, "default", "MEMHTML_LLM_MODEL"),
        "memhtml.llmkeyenv": ("ANTHROPIC_API_KEY", "default (anthropic)", "MEMHTML_LLM_KEY_ENV"),
        "memhtml.llmtimeout": (9.0, "env", "MEMHTML_LLM_TIMEOUT"),
        "memhtml.llmattempts": (4, "default", "MEMHTML_LLM_ATTEMPTS"),
        "memhtml.llmmaxprompt": (4000, "default", "MEMHTML_LLM_MAX_PROMPT"),
    }


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_doctor_model_reports_latency_and_tokens(memrepo: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch, server: ScriptedModelServer,
                                                 dialect: str) -> None:
    bind_env(monkeypatch, server, dialect)
    code, out, err = cli(capsys, "-C", str(memrepo), "doctor", "--model")
    data = out["data"]
    assert code == 0 and out["type"] == "doctor.model", out
    assert data["ok"] is True and data["dialect"] == dialect and data["model"] == "qwen-test"
    assert data["url"].startswith(server.url(dialect))  # type: ignore[arg-type]
    assert (data["inputTokens"], data["outputTokens"], data["attempts"]) == (12, 3, 1)
    assert isinstance(data["latencyMs"], int) and data["latencyMs"] >= 0 and data["error"] is None
    assert server.requests[-1].schema_name == "DoctorPing"
    sent = server.headers[-1]
    assert KEY in (sent.get("authorization", "") + sent.get("x-api-key", ""))
    assert KEY not in json.dumps(out) + err
    code, text, err = cli(capsys, "-C", str(memrepo), "doctor", "--model", as_json=False)
    assert code == 0 and f"{dialect} qwen-test at " in text and "answered in" in text and KEY not in text + err


def test_doctor_model_failure_is_the_exact_error_and_exit_1(memrepo: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedModelServer({"DoctorPing": [Status(401, body=f'{{"error": "bad key {KEY}"}}')]}) as srv:
        bind_env(monkeypatch, srv)
        code, out, err = cli(capsys, "-C", str(memrepo), "doctor", "--model")
        data = out["data"]
        assert code == 1 and data["ok"] is False and data["code"] == "ERR_LLM_REFUSED"
        assert "HTTP 401" in data["error"] and "$TEST_LLM_KEY" in data["hint"]
        assert KEY not in json.dumps(out) + err
        code, text, err = cli(capsys, "-C", str(memrepo), "doctor", "--model", as_json=False)
        assert code == 1 and "failed after" in text and "hint: put a valid API key in $TEST_LLM_KEY" in text
        assert KEY not in text + err


def test_doctor_model_against_nothing_listening_names_the_url(memrepo: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.llm.rawserver import closed_port_root

    root = closed_port_root()
    monkeypatch.setenv("MEMHTML_LLM", "openai")
    monkeypatch.setenv("MEMHTML_LLM_URL", root + "/v1")
    monkeypatch.setenv("MEMHTML_LLM_MODEL", "m")
    code, out, _ = cli(capsys, "-C", str(memrepo), "doctor", "--model")
    assert code == 1 and root in out["data"]["error"] and "memhtml.llmurl" in out["data"]["hint"]


def test_doctor_model_with_no_model_configured(memrepo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "-C", str(memrepo), "doctor", "--model")
    assert code == 1 and "memhtml.llm" in out["error"] and "git config memhtml.llm" in out["hint"]
    code, out, _ = cli(capsys, "-C", str(memrepo), "doctor", "--model", "--fix")
    assert code == 2 and "--model" in out["error"]


def test_the_binding_carries_the_client_and_the_budget(memrepo: Path, monkeypatch: pytest.MonkeyPatch,
                                                       server: ScriptedModelServer) -> None:
    assert bind_model(App(repo_path=memrepo, env={}), None) is NO_MODEL
    bind_env(monkeypatch, server)
    import os

    binding = bind_model(App(repo_path=memrepo, env=dict(os.environ)), 3)
    assert isinstance(binding.client, HttpModelClient) and binding.max_calls == 3
    assert binding.client.settings.key == KEY and binding.client.settings.max_attempts == 1
    assert binding.services().llm_budget.remaining == 3
    assert binding.max_prompt == binding.services().max_prompt == 4000
    monkeypatch.setenv("MEMHTML_LLM_MAX_PROMPT", "1500")
    assert bind_model(App(repo_path=memrepo, env=dict(os.environ)), None).services().max_prompt == 1500


def model_counts(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["phase"]: p["counts"] for p in report["phases"]}


def test_sleep_run_binds_the_model_and_resume_takes_the_flag(memrepo: Path, capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             server: ScriptedModelServer) -> None:
    code, out, _ = cli(capsys, "-C", str(memrepo), "sleep", "run", "--date", "2026-02-01", "--dry-run")
    assert code == 0, out
    unbound = model_counts(out["data"])
    assert "inputTokens" not in unbound["arc-synthesis"]  # llm=off: the counts are exactly as before
    bind_env(monkeypatch, server)
    code, out, err = cli(capsys, "-C", str(memrepo), "sleep", "run", "--date", "2026-02-01", "--max-llm-calls", "0")
    assert code == 0, (out, err)
    bound = model_counts(out["data"])
    assert bound["arc-synthesis"]["budgetSkipped"] == 1 and bound["arc-synthesis"]["failedCalls"] == 0
    assert server.requests == []  # a budget of 0: every batch is skipped, no call reaches the server
    assert KEY not in json.dumps(out) + err
    code, out, err = cli(capsys, "-C", str(memrepo), "sleep", "resume", out["data"]["runId"], "--max-llm-calls", "2")
    assert "--max-llm-calls" not in err and "No such option" not in err


def test_a_budget_with_no_model_warns_once(memrepo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "-C", str(memrepo), "sleep", "run", "--date", "2026-02-01", "--dry-run",
                       "--max-llm-calls", "5")
    assert code == 0 and err.count("--max-llm-calls has nothing to limit") == 1


@pytest.mark.parametrize("argv", [["sleep", "run", "--max-llm-calls", "-1"],
                                  ["sleep", "resume", "sleep/2026-02-01", "--max-llm-calls", "-3"],
                                  ["sleep", "run", "--max-llm-calls", "many"]])
def test_a_bad_budget_is_a_usage_error(memrepo: Path, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, out, _ = cli(capsys, "-C", str(memrepo), *argv)
    assert code == 2 and "--max-llm-calls" in out["error"] and out["hint"]


def test_demo_with_the_model_step_stays_green_with_failed_batches(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # every schema but the ping is unscripted: the server answers 500, so every batch a phase asks for fails
    with ScriptedModelServer({"DoctorPing": [Answer({"ok": True})]}) as srv:
        monkeypatch.setenv("MEMHTML_LLM_ATTEMPTS", "1")
        code, text, err = cli(capsys, "demo", str(tmp_path / "demo"), "--llm", "openai", "--llm-url",
                              srv.url("openai"), "--llm-model", "qwen2.5", "--max-llm-calls", "40", as_json=False)
        assert code == 0, (text, err)
        assert "3b. model    openai qwen2.5 at " in text and "answered in" in text and "at most 40 calls" in text
        assert "all 17 phases ok" in text and "6. merge     merged" in text
        assert srv.requests[0].schema_name == "DoctorPing"
        assert all(r.body["model"] == "qwen2.5" for r in srv.requests)


def test_demo_model_step_with_a_silent_model_still_completes(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedModelServer({}) as srv:
        monkeypatch.setenv("MEMHTML_LLM_ATTEMPTS", "1")
        code, text, err = cli(capsys, "demo", str(tmp_path / "demo"), "--llm", "anthropic", "--llm-url",
                              srv.url("anthropic"), "--llm-model", "claude-test", as_json=False)
        assert code == 0, (text, err)
        assert "did not answer" in text and "HTTP 500" in text and "all 17 phases ok" in text
