"""A tiny loopback HTTP server for the wire tests that must see request bytes or send hand-made replies.

``serve(handler)`` starts a ``ThreadingHTTPServer`` on ``127.0.0.1:0`` whose every ``POST`` is answered by
``handler(path, headers, body bytes) -> (status, headers, payload bytes)``; the :class:`Raw` it returns records
each request and stops the server on ``close``.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Handler = Callable[[str, Mapping[str, str], bytes], tuple[int, Mapping[str, str], bytes]]


@dataclass
class Seen:
    """One request as it arrived: path, headers (lower-cased names) and the raw body."""

    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Raw:
    """A running raw server."""

    httpd: ThreadingHTTPServer
    seen: list[Seen] = field(default_factory=list)

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def serve(handler: Handler) -> Raw:
    """Start a raw server answering with ``handler``."""
    holder: list[Raw] = []

    class H(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            holder[0].seen.append(Seen(self.path, headers, body))
            status, reply_headers, payload = handler(self.path, headers, body)
            try:
                self.send_response(status)
                for key, value in reply_headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
    httpd.daemon_threads = True
    raw = Raw(httpd)
    holder.append(raw)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return raw


def json_reply(body: Any, status: int = 200, **headers: str) -> tuple[int, Mapping[str, str], bytes]:
    """A JSON reply."""
    return status, {"Content-Type": "application/json", **headers}, json.dumps(body).encode()


def closed_port_root() -> str:
    """``http://127.0.0.1:<a port nothing listens on>``."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
