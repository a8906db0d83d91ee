"""A scripted model server on loopback that speaks both wire dialects, for tests and benches (docs/models.md §1.6).

:class:`ScriptedModelServer` is a real HTTP server (stdlib ``ThreadingHTTPServer`` on ``127.0.0.1:<free port>``,
served from a daemon thread) answering ``POST /v1/chat/completions`` (``openai``) and ``POST /v1/messages``
(``anthropic``). It reads the schema name out of each request (``response_format.json_schema.name`` / the forced
tool's name), plays the script with the same :class:`~git_memhtml.llm.scripted.Player` as the in-process
:class:`~git_memhtml.llm.scripted.ScriptedClient`, and encodes the reply in the request's dialect:

=============  ==========================================================  ===========================================
reply          openai                                                      anthropic
=============  ==========================================================  ===========================================
``Answer``     a chat completion, content = the JSON, ``finish_reason``    a message with a ``tool_use`` block of that
               ``stop``, usage ``prompt_tokens``/``completion_tokens``     name, ``stop_reason`` ``tool_use``, usage
``Malformed``  content = the text, ``finish_reason`` ``stop``              one ``text`` block and no ``tool_use``
``Refusal``    ``message.refusal``, content ``null``                       ``stop_reason`` ``refusal`` and a text block
``Status``     that status with ``Retry-After`` when given, the body       the same
``Stall``      no answer for ``seconds``, then ``then`` (500 when none)    the same
=============  ==========================================================  ===========================================

A request whose schema name cannot be found is answered 400; an unknown path 404. ``requests`` is the log (each
with its decoded body) and ``headers`` the request headers in the same order. It is a real implementation of the
wire (a client under test cannot tell it from a server), never used outside tests and benches.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from git_memhtml.llm.client import HttpModelClient, LlmSettings
from git_memhtml.llm.contract import Dialect
from git_memhtml.llm.scripted import (
    Answer,
    Malformed,
    Player,
    Refusal,
    Reply,
    Script,
    ScriptedRequest,
    Stall,
    Status,
)

PATHS: Mapping[str, Dialect] = {"/v1/chat/completions": "openai", "/v1/messages": "anthropic"}
"""Request path → the dialect it speaks."""

MODEL = "scripted"
"""The model id :meth:`ScriptedModelServer.client` binds (any id is accepted and echoed back)."""


def _text(content: Any) -> str:
    """A message's content as text: a string, or the ``text`` of its text blocks joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _role_text(body: Mapping[str, Any], role: str) -> str:
    """The text of every message of ``role`` in ``body["messages"]``, joined by newlines."""
    messages: list[Any] = body["messages"] if isinstance(body.get("messages"), list) else []
    return "\n".join(_text(m.get("content")) for m in messages if isinstance(m, dict) and m.get("role") == role)


def parse_request(dialect: Dialect, body: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """``(schema name, system, prompt)`` of a request body, or ``None`` when it names no schema."""
    if dialect == "openai":
        fmt = body.get("response_format")
        schema = fmt.get("json_schema") if isinstance(fmt, dict) else None
        name = schema.get("name") if isinstance(schema, dict) else None
        system = _role_text(body, "system")
    else:
        choice = body.get("tool_choice")
        name = choice.get("name") if isinstance(choice, dict) else None
        system = _text(body.get("system"))
    prompt = _role_text(body, "user")
    return (name, system, prompt) if isinstance(name, str) and name else None


def encode_reply(dialect: Dialect, req: ScriptedRequest, reply: Answer | Malformed | Refusal) -> dict[str, Any]:
    """The 200 body that carries ``reply`` in ``dialect``."""
    n = len(req.schema_name) + req.index
    model = str(req.body.get("model", MODEL))
    usage = (reply.input_tokens, reply.output_tokens) if isinstance(reply, Answer) else (10, 0)
    if dialect == "openai":
        message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
        if isinstance(reply, Answer):
            message["content"] = json.dumps(dict(reply.value))
        elif isinstance(reply, Malformed):
            message["content"] = reply.text
        else:
            message["refusal"] = reply.message
        return {"id": f"chatcmpl-scripted-{n}", "object": "chat.completion", "created": 0, "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                          "total_tokens": usage[0] + usage[1]}}
    if isinstance(reply, Answer):
        content: list[dict[str, Any]] = [{"type": "tool_use", "id": f"toolu_scripted_{n}", "name": req.schema_name,
                                          "input": dict(reply.value)}]
        stop = "tool_use"
    elif isinstance(reply, Malformed):
        content, stop = [{"type": "text", "text": reply.text}], "end_turn"
    else:
        content, stop = [{"type": "text", "text": reply.message}], "refusal"
    return {"id": f"msg_scripted_{n}", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]}}


class _Server(ThreadingHTTPServer):
    """The stdlib server, knowing the :class:`ScriptedModelServer` its handlers report to."""

    owner: ScriptedModelServer


class ScriptedHandler(BaseHTTPRequestHandler):
    """Hands every ``POST`` to the owning :class:`ScriptedModelServer` (HTTP/1.1 keep-alive, no access log)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body leave at once: no 40 ms delayed-ACK stall per reply
    server: _Server

    def do_POST(self) -> None:
        """Answer one request (``ScriptedModelServer._handle``)."""
        self.server.owner._handle(self)

    def log_message(self, format: str, *args: object) -> None:
        """Silent: tests read :attr:`ScriptedModelServer.requests` instead."""


class ScriptedModelServer:
    """The loopback model server; a context manager (``with ScriptedModelServer(script) as server: …``).

    Attributes:
        player: plays the script (shared request counts per schema name, the request log).
        headers: the headers of each request, lower-cased names, in arrival order.
    """

    def __init__(self, script: Script) -> None:
        self.player = Player(script)
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def requests(self) -> list[ScriptedRequest]:
        """Every request that named a schema, in arrival order, with its decoded body."""
        return self.player.requests

    @property
    def port(self) -> int:
        """The port it listens on (after :meth:`start`)."""
        if self._httpd is None:
            raise RuntimeError("the scripted model server is not started")
        return int(self._httpd.server_address[1])

    def url(self, dialect: Dialect) -> str:
        """The base URL a client of ``dialect`` is configured with (``…/v1`` for openai, the root for anthropic)."""
        root = f"http://127.0.0.1:{self.port}"
        return root + "/v1" if dialect == "openai" else root

    def client(self, dialect: Dialect, *, timeout: float = 10.0, max_attempts: int = 4, key: str | None = None,
               sleep: Callable[[float], None] = time.sleep, backoff: float = 0.01) -> HttpModelClient:
        """A real :class:`HttpModelClient` of ``dialect`` pointed at this server (``sleep`` waits the retries)."""
        settings = LlmSettings(dialect=dialect, url=self.url(dialect), model=MODEL, key=key,
                               key_env="SCRIPTED_KEY", timeout=timeout, max_attempts=max_attempts)
        return HttpModelClient(settings, sleep=sleep, backoff=backoff)

    def start(self) -> ScriptedModelServer:
        """Bind ``127.0.0.1:0`` and serve from a daemon thread."""
        httpd = _Server(("127.0.0.1", 0), ScriptedHandler)
        httpd.owner = self
        httpd.daemon_threads = True
        httpd.block_on_close = False  # a stalled handler must not hold up shutdown
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True,
                                        name="scripted-model-server")
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and release the port."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length > 0 else b""
        dialect = PATHS.get(handler.path.split("?", 1)[0])
        with self._lock:
            self.headers.append({k.lower(): v for k, v in handler.headers.items()})
        if dialect is None:
            _send(handler, 404, {"error": {"message": f"no such path {handler.path}"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            _send(handler, 400, {"error": {"message": "the request body is not JSON"}})
            return
        parsed = parse_request(dialect, body) if isinstance(body, dict) else None
        if parsed is None:
            _send(handler, 400, {"error": {"message": "the request names no schema (json_schema.name / tool_choice)"}})
            return
        with self._lock:
            req = self.player.request(dialect, *parsed, body=body)
            reply: Reply | None = self.player.reply(req)
        while isinstance(reply, Stall):
            time.sleep(reply.seconds)
            reply = reply.then
        if reply is None:
            _send(handler, 500, {"error": {"message": "scripted stall with nothing after it"}})
        elif isinstance(reply, Status):
            headers = {} if reply.retry_after is None else {"Retry-After": f"{reply.retry_after:g}"}
            _send_raw(handler, reply.code, reply.body.encode(), headers)
        else:
            _send(handler, 200, encode_reply(dialect, req, reply))


def _send(handler: BaseHTTPRequestHandler, status: int, body: Mapping[str, Any]) -> None:
    _send_raw(handler, status, json.dumps(body).encode(), {})


def _send_raw(handler: BaseHTTPRequestHandler, status: int, payload: bytes, headers: Mapping[str, str]) -> None:
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        for key, value in headers.items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the client gave up (its timeout): nothing to answer
