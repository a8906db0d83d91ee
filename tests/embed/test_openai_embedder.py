"""The ``openai`` embedder against a real HTTP server on loopback: batching, retry, errors, degradation."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from git_memhtml.cli.main import main
from git_memhtml.config import Settings, resolve_settings
from git_memhtml.embed import openai as openai_mod
from git_memhtml.embed.base import Embedder
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.embed.openai import OpenAIEmbedder, OpenAIOptions, endpoint_url
from git_memhtml.embed.registry import get_embedder
from git_memhtml.errors import ModelUnavailable

DIM = 8
VECTORS = FakeEmbedder(dim=DIM)
"""The server's deterministic vectors: the fake embedder's rows, scaled by 3 (so the client must normalise)."""

Reply = tuple[int, dict[str, str], bytes]


def vectors_reply(texts: list[str], *, dim: int = DIM) -> Reply:
    rows = FakeEmbedder(dim=dim).embed(texts) * 3.0
    data = [{"object": "embedding", "index": i, "embedding": rows[i].tolist()} for i in range(len(texts))]
    data.reverse()  # the client must order by "index", not by position
    return 200, {"Content-Type": "application/json"}, json.dumps({"object": "list", "data": data}).encode()


@dataclass
class Server:
    """A loopback server whose replies come from ``script`` (one callable per request; the last one repeats)."""

    script: list[Callable[[dict[str, Any]], Reply]]
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    delay: float = 0.0
    url: str = ""

    def handle(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        self.requests.append(body)
        self.headers.append(headers)
        if self.delay:
            time.sleep(self.delay)
        step = self.script[min(len(self.requests) - 1, len(self.script) - 1)]
        return step(body)


@pytest.fixture
def serve() -> Iterator[Callable[..., Server]]:
    servers: list[ThreadingHTTPServer] = []

    def start(*script: Callable[[dict[str, Any]], Reply], delay: float = 0.0) -> Server:
        state = Server(list(script) or [lambda b: vectors_reply(b["input"])], delay=delay)

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                status, headers, payload = state.handle(body, {k.lower(): v for k, v in self.headers.items()})
                try:
                    self.send_response(status)
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: object) -> None:
                pass

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        servers.append(httpd)
        threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        return state

    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def make(url: str, sleeps: list[float] | None = None, **kw: Any) -> OpenAIEmbedder:
    options = OpenAIOptions(url=url, model="test-embed", dim=DIM, backoff=0.01, **kw)
    return OpenAIEmbedder(options, sleep=(sleeps.append if sleeps is not None else (lambda s: None)))


def error_reply(status: int, **headers: str) -> Callable[[dict[str, Any]], Reply]:
    return lambda body: (status, headers, b'{"error": {"message": "nope"}}')


def test_batches_order_by_index_normalise_and_send_the_key(serve: Callable[..., Server]) -> None:
    server = serve()
    emb = make(server.url, batch=2, api_key="sk-test")
    texts = ["alpha deploys", "beta", "  ", "gamma caches", "delta"]
    out = emb.embed(texts)
    assert [r["input"] for r in server.requests] == [["alpha deploys", "beta"], ["gamma caches", "delta"]]
    assert all(r["model"] == "test-embed" for r in server.requests)
    assert server.headers[0]["authorization"] == "Bearer sk-test"
    assert out.shape == (5, DIM) and out.dtype == np.float32
    expected = VECTORS.embed(texts)
    np.testing.assert_allclose(out, expected, atol=1e-6)
    assert not np.any(out[2])  # a blank text is a zero row and is never sent
    assert emb.space == "openai:test-embed@8" and isinstance(emb, Embedder)


def test_no_key_no_header_and_endpoint_forms(serve: Callable[..., Server]) -> None:
    server = serve()
    make(server.url).embed(["x"])
    assert "authorization" not in server.headers[0]
    assert endpoint_url("http://h:1/v1/") == "http://h:1/v1/embeddings"
    assert endpoint_url("http://h:1/v1/embeddings") == "http://h:1/v1/embeddings"


def test_429_then_success_retries_after_the_servers_delay(serve: Callable[..., Server]) -> None:
    server = serve(error_reply(429, **{"Retry-After": "0.25"}), lambda b: vectors_reply(b["input"]))
    sleeps: list[float] = []
    out = make(server.url, sleeps).embed(["alpha"])
    assert len(server.requests) == 2 and sleeps == [0.25]
    np.testing.assert_allclose(out, VECTORS.embed(["alpha"]), atol=1e-6)


def test_500_exhaustion_backs_off_then_names_url_and_status(serve: Callable[..., Server]) -> None:
    server = serve(error_reply(500))
    sleeps: list[float] = []
    with pytest.raises(ModelUnavailable) as err:
        make(server.url, sleeps).embed(["alpha"])
    assert len(server.requests) == openai_mod.MAX_ATTEMPTS == 4
    assert sleeps == [0.01, 0.02, 0.04]
    assert server.url + "/embeddings" in err.value.message and "HTTP 500 after 4 attempts" in err.value.message
    assert err.value.hint and "try again later" in err.value.hint


def test_unauthorised_is_not_retried_and_hints_the_key_variable(serve: Callable[..., Server]) -> None:
    server = serve(error_reply(401))
    with pytest.raises(ModelUnavailable) as err:
        make(server.url, key_env="MY_EMBED_KEY").embed(["alpha"])
    assert len(server.requests) == 1 and "HTTP 401" in err.value.message
    assert err.value.hint is not None and "$MY_EMBED_KEY" in err.value.hint


def test_timeout_fails_fast_and_marks_the_endpoint_down(serve: Callable[..., Server]) -> None:
    """A timed-out endpoint is remembered as down: the next embed fails at once with the remembered reason, and the
    server never sees a second request (so no second timeout is waited)."""
    server = serve(delay=1.0)
    emb = make(server.url, timeout=0.2)
    with pytest.raises(ModelUnavailable, match=r"timed out after 0\.2 s") as err:
        emb.embed(["alpha"])
    assert err.value.hint is not None and "memhtml.embedtimeout" in err.value.hint
    with pytest.raises(ModelUnavailable, match=r"is unreachable: timed out after 0\.2 s"):
        emb.embed(["beta"])  # remembered: no second request, so no second timeout to wait
    assert len(server.requests) == 1


def test_unreachable_endpoint_names_the_url() -> None:
    url = closed_port_url()
    with pytest.raises(ModelUnavailable) as err:
        make(url).embed(["alpha"])
    assert url + "/embeddings" in err.value.message and "unreachable" in err.value.message
    assert err.value.hint is not None and "memhtml.embed off" in err.value.hint


@pytest.mark.parametrize(
    "payload",
    [b"this is not json", b'{"data": "nope"}', b'{"data": [{"index": 0}]}', b'{"object": "list"}'],
    ids=["not-json", "data-not-list", "no-embedding", "no-data"],
)
def test_malformed_answers_are_model_unavailable(serve: Callable[..., Server], payload: bytes) -> None:
    server = serve(lambda body: (200, {"Content-Type": "application/json"}, payload))
    with pytest.raises(ModelUnavailable, match="malformed answer"):
        make(server.url).embed(["alpha"])


def test_wrong_dimension_names_the_fix(serve: Callable[..., Server]) -> None:
    server = serve(lambda body: vectors_reply(body["input"], dim=4))
    with pytest.raises(ModelUnavailable, match="returned 4-dimensional vectors") as err:
        make(server.url).embed(["alpha"])
    assert err.value.hint is not None and "memhtml.embeddim 4" in err.value.hint


def test_registry_and_settings_resolution() -> None:
    emb = get_embedder("OpenAI", openai=OpenAIOptions(model="m", dim=3))
    assert isinstance(emb, OpenAIEmbedder) and emb.space == "openai:m@3"
    git = {"memhtml.embed": "openai", "memhtml.embedurl": "http://gpu:8000/v1", "memhtml.embeddim": "1024"}
    resolved = resolve_settings(git_config=git.get, env={"MEMHTML_EMBED_MODEL": "bge-m3",
                                                         "MEMHTML_EMBED_KEY_ENV": "VLLM_KEY"})
    s = resolved.settings
    assert (s.embed, s.embed_url, s.embed_dim, s.embed_model, s.embed_key_env) == (
        "openai", "http://gpu:8000/v1", 1024, "bge-m3", "VLLM_KEY")
    assert resolved.sources["embed_url"] == "git-config" and resolved.sources["embed_model"] == "env"
    assert resolved.sources["embed_timeout"] == "default"
    defaults = Settings()
    assert (defaults.embed_url, defaults.embed_model, defaults.embed_dim, defaults.embed_key_env,
            defaults.embed_timeout, defaults.embed_batch) == (
        openai_mod.DEFAULT_URL, openai_mod.DEFAULT_MODEL, openai_mod.DEFAULT_DIM, openai_mod.DEFAULT_KEY_ENV,
        openai_mod.DEFAULT_TIMEOUT_SECONDS, openai_mod.DEFAULT_BATCH)


def test_a_key_in_the_key_env_setting_is_refused_without_echo() -> None:
    from git_memhtml.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        resolve_settings(git_config=lambda k: None, env={"MEMHTML_EMBED_KEY_ENV": "sk-secret-123"})
    assert "sk-secret-123" not in err.value.message and "MEMHTML_EMBED_KEY_ENV" in err.value.message


# -- through the CLI: configuration, degradation ----------------------------------------------------------


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    capsys.readouterr()
    code = main([*args, "--json"])
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if captured.out.strip() else None), captured.err


@pytest.fixture
def memrepo(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "mem"
    monkeypatch.setenv("MEMHTML_EMBED", "off")
    monkeypatch.setenv("MEMHTML_NOW", "2026-02-01T00:00:00Z")
    assert cli(capsys, "init", str(root))[0] == 0
    for title, claim in [("Checkout timeout", "The checkout-api upstream timeout is 30 seconds."),
                         ("Deploy day", "Alpha deploys on Mondays.")]:
        code, out, _ = cli(capsys, "-C", str(root), "write", "--type", "semantic", "--title", title,
                           "--claim", claim)
        assert code == 0, out
    return root


def test_config_shows_openai_keys_and_sources(memrepo: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from git_memhtml.gitrepo import GitRepo

    GitRepo.discover(memrepo).config_set("memhtml.embedurl", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MEMHTML_EMBED", "openai")
    code, out, _ = cli(capsys, "-C", str(memrepo), "config")
    data = out["data"]
    assert code == 0
    def shown(key: str) -> dict[str, object]:
        return {k: data[key][k] for k in ("value", "source")}

    assert shown("memhtml.embed") == {"value": "openai", "source": "env"}
    assert shown("memhtml.embedurl") == {"value": "http://127.0.0.1:9/v1", "source": "git-config"}
    assert shown("memhtml.embedkeyenv") == {"value": "OPENAI_API_KEY", "source": "default"}


def test_unreachable_endpoint_degrades_search_and_update(memrepo: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMHTML_EMBED", "openai")
    monkeypatch.setenv("MEMHTML_EMBED_URL", closed_port_url())
    monkeypatch.setenv("MEMHTML_EMBED_DIM", str(DIM))
    code, out, err = cli(capsys, "-C", str(memrepo), "index", "update")
    assert code == 0, out
    assert out["data"]["embeddings_written"] == 0 and "unreachable" in out["data"]["embed_error"]
    assert "warning: embedding stopped early" in err
    code, out, err = cli(capsys, "-C", str(memrepo), "write", "--type", "semantic", "--title", "Cache",
                         "--claim", "Beta caches pages for an hour.")
    assert code == 0 and out["data"]["created"], out  # the file is committed and indexed without a vector
    code, out, err = cli(capsys, "-C", str(memrepo), "search", "checkout timeout")
    assert code == 0, out
    data = out["data"]
    assert data["degraded"] is True and "vector" not in data["arms"] and "fts" in data["arms"]
    assert data["hits"][0]["title"] == "Checkout timeout"
    code, out, _ = cli(capsys, "-C", str(memrepo), "search", "caches", "--limit", "1")
    assert out["data"]["hits"][0]["title"] == "Cache"
    assert "warning:" in err and "lexical" in err
    code, out, _ = cli(capsys, "-C", str(memrepo), "search", "?!… --")
    assert code == 0 and "fts" not in out["data"]["arms"]


def test_reachable_endpoint_serves_the_vector_arm(memrepo: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  serve: Callable[..., Server]) -> None:
    server = serve()
    monkeypatch.setenv("MEMHTML_EMBED", "openai")
    monkeypatch.setenv("MEMHTML_EMBED_URL", server.url)
    monkeypatch.setenv("MEMHTML_EMBED_MODEL", "test-embed")
    monkeypatch.setenv("MEMHTML_EMBED_DIM", str(DIM))
    monkeypatch.setenv("MEMHTML_EMBED_KEY_ENV", "TEST_EMBED_KEY")
    monkeypatch.setenv("TEST_EMBED_KEY", "sk-loopback")
    code, out, _ = cli(capsys, "-C", str(memrepo), "index", "rebuild")
    assert code == 0 and out["data"]["embeddings_written"] >= 2
    code, out, _ = cli(capsys, "-C", str(memrepo), "search", "deploys")
    assert code == 0 and out["data"]["degraded"] is False and "vector" in out["data"]["arms"]
    assert server.headers[-1]["authorization"] == "Bearer sk-loopback"


# -- no API key set (F6): the error says so and how to set one, and still names the URL ------------------------


def test_a_refusal_without_a_key_says_no_key_was_set_and_how_to_set_one(serve: Callable[..., Server]) -> None:
    for status in (401, 403):
        server = serve(error_reply(status))
        with pytest.raises(ModelUnavailable) as err:
            make(server.url, key_env="MY_EMBED_KEY").embed(["alpha"])
        message = err.value.message
        assert server.url + "/embeddings" in message and f"HTTP {status}" in message
        assert "no API key was set ($MY_EMBED_KEY is unset or empty)" in message
        assert "export MY_EMBED_KEY=<key>" in message and "memhtml.embedkeyenv" in message
        assert err.value.hint is not None and "export MY_EMBED_KEY=<key>" in err.value.hint
        assert "authorization" not in server.headers[-1]  # keyless servers stay supported: no header was sent


def test_a_refusal_with_a_key_does_not_blame_a_missing_key(serve: Callable[..., Server]) -> None:
    server = serve(error_reply(401))
    with pytest.raises(ModelUnavailable) as err:
        make(server.url, api_key="sk-wrong", key_env="MY_EMBED_KEY").embed(["alpha"])
    assert "no API key" not in err.value.message and "sk-wrong" not in err.value.message
    assert err.value.hint is not None and "valid API key in $MY_EMBED_KEY" in err.value.hint


def test_another_error_without_a_key_notes_that_none_was_sent(serve: Callable[..., Server]) -> None:
    server = serve(error_reply(404))
    embedder = make(server.url, key_env="MY_EMBED_KEY")
    with pytest.raises(ModelUnavailable) as err:
        embedder.embed(["alpha"])
    assert "HTTP 404 (no API key was sent: $MY_EMBED_KEY is unset or empty)" in err.value.message
    assert embedder.last_failure is err.value


def test_search_without_a_key_warns_that_none_was_set(memrepo: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      serve: Callable[..., Server]) -> None:
    """``git config memhtml.embed openai`` and no key: the request still goes (keyless servers), and both the
    index catch-up's warning and search's own say that no key was set, how to set one, and the URL."""
    from git_memhtml.gitrepo import GitRepo

    server = serve(error_reply(401))
    repo = GitRepo.discover(memrepo)
    for key, value in (("memhtml.embed", "openai"), ("memhtml.embedurl", server.url), ("memhtml.embeddim", str(DIM))):
        repo.config_set(key, value)
    monkeypatch.delenv("MEMHTML_EMBED", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for command in ("search", "recall"):
        capsys.readouterr()
        assert main(["-C", str(memrepo), command, "deploys"]) == 0
        captured = capsys.readouterr()
        assert "Deploy day" in captured.out or "deploy" in captured.out.lower()
        unavailable = [line for line in captured.err.splitlines() if "the vector arm is unavailable" in line]
        assert len(unavailable) == 1, captured.err
        assert server.url + "/embeddings" in unavailable[0] and "HTTP 401" in unavailable[0]
        assert "no API key was set ($OPENAI_API_KEY is unset or empty)" in unavailable[0]
        assert "export OPENAI_API_KEY=<key>" in captured.err and "memhtml.embedkeyenv" in captured.err
    assert server.requests and all("authorization" not in h for h in server.headers)
