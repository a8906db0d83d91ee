"""The one HTTP choke point: retries on 429/5xx only, backoff with deterministic jitter, Retry-After (seconds and
HTTP date, capped), bounded attempts, transport failures named and not retried."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from git_memhtml.errors import ModelUnavailable
from git_memhtml.transport import PREVIEW_CHARS, RetryPolicy, Transport, TransportFailure, preview, retry_after
from tests.llm.rawserver import Raw, closed_port_root, json_reply, serve


@pytest.fixture
def raws() -> Iterator[list[Raw]]:
    started: list[Raw] = []
    yield started
    for raw in started:
        raw.close()


def statuses(raws: list[Raw], *codes: int, retry_after_value: str | None = None) -> Raw:
    """A server answering ``codes`` in turn (the last repeats), each 429/5xx with ``Retry-After`` when given."""
    def handler(path: str, headers: Mapping[str, str], body: bytes) -> tuple[int, Mapping[str, str], bytes]:
        code = codes[min(len(raw.seen) - 1, len(codes) - 1)]
        extra = {"Retry-After": retry_after_value} if retry_after_value and code != 200 else {}
        return json_reply({"n": len(raw.seen)}, code, **extra)

    raw = serve(handler)
    raws.append(raw)
    return raw


def test_backoff_doubles_with_injected_jitter_and_stops_at_max_attempts(raws: list[Raw]) -> None:
    raw = statuses(raws, 503)
    waits: list[float] = []
    policy = RetryPolicy(max_attempts=4, backoff=0.5, max_backoff=10.0, jitter=0.25)
    with Transport("t", 5.0, policy=policy, sleep=waits.append, rand=lambda: 0.5) as t:
        result = t.post_json(raw.root + "/x", {"a": 1})
    assert result.status == 503 and result.attempts == 4 and result.retried_out
    assert len(raw.seen) == 4
    assert waits == [0.5 * 1.125, 1.0 * 1.125, 2.0 * 1.125]  # base * (1 + 0.25 * 0.5), doubling


def test_retry_after_seconds_is_honoured_without_jitter_then_success(raws: list[Raw]) -> None:
    raw = statuses(raws, 429, 200, retry_after_value="1.5")
    waits: list[float] = []
    policy = RetryPolicy(max_attempts=3, backoff=0.1, jitter=0.9)
    with Transport("t", 5.0, policy=policy, sleep=waits.append, rand=lambda: 0.99) as t:
        result = t.post_json(raw.root + "/x", {})
    assert result.status == 200 and result.attempts == 2 and waits == [1.5]
    assert result.json() == {"n": 2}


def test_retry_after_http_date_counts_from_the_injected_clock_and_is_capped(raws: list[Raw]) -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC).timestamp()
    in_3s = format_datetime(datetime(2026, 1, 1, 12, 0, 3, tzinfo=UTC), usegmt=True)
    assert retry_after(in_3s, now) == 3.0
    assert retry_after(format_datetime(datetime(2025, 1, 1, tzinfo=UTC), usegmt=True), now) == 0.0  # in the past
    assert retry_after("garbage", now) is None and retry_after(None, now) is None and retry_after("-4", now) == 0.0
    assert retry_after("nan", now) is None and retry_after("inf", now) is None
    raw = statuses(raws, 429, 200, retry_after_value="3600")
    waits: list[float] = []
    with Transport("t", 5.0, policy=RetryPolicy(max_backoff=7.0), sleep=waits.append) as t:
        assert t.post_json(raw.root + "/x", {}).status == 200
    assert waits == [7.0]  # an hour asked, the cap waited


@pytest.mark.parametrize("code", [400, 401, 404, 501])
def test_final_statuses_are_not_retried(raws: list[Raw], code: int) -> None:
    raw = statuses(raws, code)
    waits: list[float] = []
    with Transport("t", 5.0, sleep=waits.append) as t:
        result = t.post_json(raw.root + "/x", {})
    assert (result.status, result.attempts, waits, len(raw.seen)) == (code, 1, [], 1)


def test_unreachable_is_one_attempt_naming_the_url_with_the_hint() -> None:
    url = closed_port_root() + "/v1/chat/completions"
    waits: list[float] = []
    with pytest.raises(TransportFailure) as err, Transport("model endpoint", 2.0, sleep=waits.append,
                                                           unreachable_hint="check memhtml.llmurl") as t:
        t.post_json(url, {})
    assert isinstance(err.value, ModelUnavailable) and not err.value.timed_out
    assert url in err.value.message and "unreachable" in err.value.message
    assert err.value.hint == "check memhtml.llmurl" and waits == []


def test_a_timeout_is_named_and_not_retried(raws: list[Raw]) -> None:
    import time

    def slow(path: str, headers: Mapping[str, str], body: bytes) -> tuple[int, Mapping[str, str], bytes]:
        time.sleep(0.6)
        return json_reply({})

    raw = serve(slow)
    raws.append(raw)
    with pytest.raises(TransportFailure) as err, Transport("t", 0.2, timeout_hint="raise it") as t:
        t.post_json(raw.root + "/x", {})
    assert err.value.timed_out and "timed out after 0.2 s" in err.value.message and err.value.hint == "raise it"
    assert len(raw.seen) == 1


def test_preview_is_one_line_clipped_and_masks_the_secret() -> None:
    text = "Incorrect API key provided: sk-live-123.\n" + "x" * 2000
    shown = preview(text, "sk-live-123")
    assert "sk-live-123" not in shown and "***" in shown and "\n" not in shown
    assert len(shown) == PREVIEW_CHARS + 1 and shown.endswith("…")
    assert preview("  ") == "(empty body)"


def test_a_failure_message_never_quotes_the_secret() -> None:
    secret = "sk-header-secret"
    with pytest.raises(TransportFailure) as err, Transport("t", 2.0, {"Authorization": f"Bearer {secret}\nX: y"},
                                                           secret=secret) as t:
        t.post_json(closed_port_root() + "/x", {})
    assert secret not in err.value.message and secret not in err.value.reason


class _Drip:
    """A loopback server that sends its headers, then one byte every ``gap`` seconds for ``count`` bytes (or a body
    of ``size`` bytes at once); :attr:`sent` counts the dripped bytes written."""

    def __init__(self, *, gap: float = 0.2, count: int = 40, size: int = 0) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        outer = self

        class H(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(size or count))
                self.end_headers()
                try:
                    if size:
                        self.wfile.write(b" " * size)
                        return
                    for _ in range(count):
                        if outer.stop.is_set():
                            return
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        outer.sent += 1
                        outer.stop.wait(gap)
                except OSError:
                    return

            def log_message(self, format: str, *args: object) -> None:
                return

        self.stop = threading.Event()
        self.sent = 0
        """Bytes of the dripped body written so far."""
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


def test_a_server_that_drips_its_answer_is_cut_at_the_attempt_deadline() -> None:
    """httpx's timeout is per read; a byte every 0.2 s never trips it, so the attempt keeps its own deadline.

    The drip lasts 600 bytes (two minutes), far past the 1 s attempt: only the attempt's own deadline can end the
    call with ``timed_out`` and "the whole answer", before the server has sent all it announced. Without the
    deadline the call would wait for the whole drip and return it (no failure at all)."""
    drip = _Drip(gap=0.2, count=600)
    try:
        with Transport("t", 1.0, policy=RetryPolicy(max_attempts=1)) as t, pytest.raises(TransportFailure) as err:
            t.post_json(drip.url, {})
        assert err.value.timed_out and "timed out after 1 s (the whole answer)" in err.value.message
        assert drip.sent < 600  # cut while the answer was still dripping
    finally:
        drip.close()


def test_an_answer_larger_than_the_cap_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import git_memhtml.transport as transport

    monkeypatch.setattr(transport, "MAX_BODY_BYTES", 1000)
    big = _Drip(size=5000)
    try:
        with Transport("t", 5.0, policy=RetryPolicy(max_attempts=1)) as t, pytest.raises(TransportFailure) as err:
            t.post_json(big.url, {})
        assert not err.value.timed_out and "more than 1000 bytes" in err.value.message
    finally:
        big.close()
