"""MCP round-trip latency of ``memory_search`` and ``memory_write`` over stdio, beside the same verbs called in
process (issue 14; bench/README.md "mcp_latency.py").

    python bench/mcp_latency.py [--size 10000] [--queries 50] [--writes 20] [--warmup 5] [--workdir DIR]
                                [--json OUT]

Builds a memory repository of ``--size`` memories (the corpus of ``bench/synth.py``, committed in one commit, the
index rebuilt with the ``fake`` embedder the server resolves from ``MEMHTML_EMBED=fake``), then times:

- **in process**: the same two verbs as plain functions in this process (:func:`in_process`), on one long-lived
  door with the index open and the vectors resident, as the server keeps them;
- **over stdio**: ``git memhtml -C REPO mcp`` started once, one ``initialize``, then each call a JSON-RPC
  ``tools/call`` written to its stdin and read back from its stdout (the newline-delimited JSON of the MCP stdio
  transport, spoken by a few lines here rather than a client library, so the figure is the server's and the
  pipe's).

Each side runs ``--warmup`` untimed searches, then ``--queries`` searches (the same 3–4 word queries of
``synth.query``, limit 10) and ``--writes`` writes (new memories drawn like the corpus, ``synth.op``; each is one
commit and its index catch-up). p50/p95 are nearest-rank (``timing.pct``) of wall milliseconds
(``time.perf_counter``). Every answer is checked: a search returns hits, a write a committed path.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from synth import op as synth_op
from synth import query, render
from timing import RunFigures, Stopwatch, failure, pct, scratch, write_json

from git_memhtml.cli.common import init_memory
from git_memhtml.embed.registry import get_embedder
from git_memhtml.errors import MemhtmlError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB

NOW = "2026-01-15T12:00:00Z"
"""The instant every write is stamped with (``MEMHTML_NOW``; the corpus' own instant in ``bench/synth.py``)."""
PROTOCOL = "2025-11-25"
"""The MCP protocol revision the stdio client asks for in ``initialize``: the newest of the classic handshake that
the SDK's server (mcp 2.3) accepts, measured when this script was written."""
REPLY_TIMEOUT_S = 120.0
"""Seconds the client waits for one answer before it gives up (the server's start-up at 10k is a few seconds)."""


def build(root: Path, size: int) -> float:
    """Make a memory repository at ``root`` holding memories ``0 .. size-1`` of ``synth.render`` in one commit,
    index it with the ``fake`` embedder; return the seconds it took."""
    watch = Stopwatch()
    init_memory(root)
    paths = []
    for i in range(size):
        path, html = render(i)
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8")
        paths.append(path)
    repo = GitRepo.discover(root)
    repo.stage(paths)
    repo.commit(f"bench: {size} synthetic memories")
    with IndexDB.for_repo(repo) as db:
        report = indexer.rebuild(repo, db, get_embedder("fake"), now=NOW)
    if report.errors:
        raise SystemExit(f"error: the corpus did not index: {report.errors[:3]}")
    return watch.wall()


def write_arguments(i: int) -> dict[str, Any]:
    """The ``memory_write`` arguments of new memory ``i`` (``synth.op``: its title, type, claim + body, tags and
    entity; no path, so the placement rules choose it)."""
    drawn = synth_op(i)
    return {"title": drawn["title"], "memory_type": drawn["type"], "body": f"{drawn['claim']} {drawn['body']}",
            "tags": drawn["tags"], "entities": drawn["entities"]}


def queries(count: int, seed: int) -> list[str]:
    """``count`` queries of ``synth.query`` drawn from ``random.Random(seed)``."""
    rng = random.Random(seed)
    return [query(rng) for _ in range(count)]


class StdioClient:
    """``git memhtml -C root mcp`` as a child process spoken to in newline-delimited JSON-RPC: :meth:`call` sends
    one ``tools/call`` and returns its result; notifications and log lines the server sends between are skipped.

    Raises (any method): RuntimeError when the server exits, answers with a JSON-RPC error, or takes longer than
    :data:`REPLY_TIMEOUT_S`.
    """

    def __init__(self, root: Path, env: Mapping[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "git_memhtml", "-C", str(root), "mcp"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=dict(env), text=True, encoding="utf-8",
            bufsize=1)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                    "clientInfo": {"name": "memhtml-bench", "version": "1"}})
        self.notify("notifications/initialized")

    def _send(self, message: Mapping[str, Any]) -> None:
        stdin = self._pipe(self.proc.stdin)
        stdin.write(json.dumps(message) + "\n")
        stdin.flush()

    @staticmethod
    def _pipe(pipe: IO[str] | None) -> IO[str]:
        if pipe is None:
            raise RuntimeError("the server's pipes are closed")
        return pipe

    def notify(self, method: str) -> None:
        """Send the notification ``method`` (no answer)."""
        self._send({"jsonrpc": "2.0", "method": method})

    def request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Send ``method`` with ``params`` and return the ``result`` of its answer."""
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": dict(params)})
        stdout = self._pipe(self.proc.stdout)
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        while time.monotonic() < deadline:
            line = stdout.readline()
            if not line:
                raise RuntimeError(f"the server exited (status {self.proc.wait()}) before answering {method}")
            message = json.loads(line)
            if message.get("id") != self.next_id:
                continue  # a notification or a request of the server's: not our answer
            if "error" in message:
                raise RuntimeError(f"{method}: {message['error']}")
            result = message["result"]
            assert isinstance(result, dict)
            return result
        raise RuntimeError(f"no answer to {method} within {REPLY_TIMEOUT_S} s")

    def call(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """``tools/call`` of ``tool``; return its structured result.

        Raises:
            RuntimeError: the tool answered with ``isError`` (its text is the message).
        """
        result = self.request("tools/call", {"name": tool, "arguments": dict(arguments)})
        if result.get("isError"):
            raise RuntimeError(f"{tool}: {result.get('content')}")
        structured = result.get("structuredContent")
        if isinstance(structured, dict):
            return structured
        parsed = json.loads(result["content"][0]["text"])
        assert isinstance(parsed, dict)
        return parsed

    def close(self) -> int:
        """Close the server's stdin (the end of the session) and return its exit status."""
        self._pipe(self.proc.stdin).close()
        try:
            return self.proc.wait(timeout=30)
        finally:
            if self.proc.stdout is not None:
                self.proc.stdout.close()


Verb = Callable[[str, Mapping[str, Any]], Mapping[str, Any]]
"""One way to call a tool: ``(tool name, arguments) -> structured result``."""


@dataclass(frozen=True)
class Side:
    """The figures of one side (in process or over stdio): wall milliseconds of each search and each write."""

    search_ms: list[float]
    write_ms: list[float]

    def figures(self) -> dict[str, float | int]:
        """p50 / p95 of each verb (ms, 0.01) and the sample counts."""
        out: dict[str, float | int] = {}
        for verb, times in (("memory_search", self.search_ms), ("memory_write", self.write_ms)):
            out[f"{verb}_p50_ms"] = round(pct(times, 0.5), 2)
            out[f"{verb}_p95_ms"] = round(pct(times, 0.95), 2)
            out[f"{verb}_n"] = len(times)
        return out


def timed(call: Verb, root: Path, searches: Sequence[str], writes: Sequence[int], warmup: int) -> Side:
    """Run the first ``warmup`` searches of ``searches`` untimed, then time the others and every write of ``writes``
    through ``call``, checking each answer (hits found; the written file on disk)."""
    for text in searches[:warmup]:
        call("memory_search", {"query": text, "limit": 10})
    search_ms = []
    for text in searches[warmup:]:
        start = time.perf_counter()
        answer = call("memory_search", {"query": text, "limit": 10})
        search_ms.append((time.perf_counter() - start) * 1000)
        if not answer["hits"]:
            raise RuntimeError(f"memory_search {text!r} found nothing in the corpus")
    write_ms = []
    for i in writes:
        start = time.perf_counter()
        answer = call("memory_write", write_arguments(i))
        write_ms.append((time.perf_counter() - start) * 1000)
        if not answer.get("path") or not (root / str(answer["path"])).is_file():
            raise RuntimeError(f"memory_write {i} answered {answer}")
    return Side(search_ms, write_ms)


def server_env(base: Mapping[str, str]) -> dict[str, str]:
    """``base`` with the server's pins: the fake embedder, the fixed instant, no hooks, one BLAS thread."""
    return {**base, "MEMHTML_EMBED": "fake", "MEMHTML_NOW": NOW, "MEMHTML_HOOKS": "0"}


def in_process(root: Path, env: Mapping[str, str]) -> tuple[Verb, Callable[[], None]]:
    """The verbs the two tools call (``service/retrieval.py:search``, ``service/memories.py:write_one``) as plain
    functions in this process, on one long-lived door (``cli/app.py:App``) with one open index and its vectors
    resident, as the server keeps them: ``(call, close)``. ``memory_search`` uses the default scope; a
    ``memory_write`` op is read by the apply op model, as the tool reads it; both answer with the tools' keys.
    """
    from git_memhtml.cli.app import App  # noqa: PLC0415
    from git_memhtml.index.resident import ResidentVectors  # noqa: PLC0415
    from git_memhtml.index.retrieval_sql import Scope  # noqa: PLC0415
    from git_memhtml.service import memories, retrieval  # noqa: PLC0415
    from git_memhtml.store.ops import WriteOp  # noqa: PLC0415

    app = App(repo_path=root, quiet=True, env=server_env(env))
    stack = ExitStack()
    db = stack.enter_context(app.index())
    embedder = app.embedder()
    resident = ResidentVectors.load(db, embedder.space) if embedder is not None else None

    def call(tool: str, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        if tool == "memory_search":
            return retrieval.search(app, db, str(arguments["query"]), scope=Scope(), limit=int(arguments["limit"]),
                                    now=NOW, resident=resident).json()
        op = WriteOp.from_json({"op": "write", "title": arguments["title"], "type": arguments["memory_type"],
                                "body": arguments["body"], "tags": arguments["tags"],
                                "entities": arguments["entities"]})  # prose: its first sentence is the claim
        return memories.write_one(app, db, op, now=NOW, hints={}).json()

    return call, stack.close


def measure(size: int, *, searches: int, writes: int, warmup: int, workdir: Path | None,
            env: Mapping[str, str]) -> dict[str, Any]:
    """Build the corpus, time both sides, return ``{"config", "in_process", "stdio", "overhead"}``."""
    run = RunFigures()
    with scratch(workdir, "memhtml-mcp-latency-") as folder:
        root = folder / "mem"
        build_s = build(root, size)
        texts = queries(searches + warmup, seed=size)
        call, close = in_process(root, env)
        try:
            local = timed(call, root, texts, range(size, size + writes), warmup)
        finally:
            close()
        client = StdioClient(root, server_env(env))
        try:
            remote = timed(client.call, root, texts, range(size + writes, size + 2 * writes), warmup)
        finally:
            status = client.close()
        if status != 0:
            raise RuntimeError(f"the server exited with status {status} at the end of the session")
    local_figures, remote_figures = local.figures(), remote.figures()
    overhead = {key.replace("_ms", "_added_ms"): round(float(remote_figures[key]) - float(local_figures[key]), 2)
                for key in local_figures if key.endswith("_ms")}
    return {"config": {"size": size, "queries": searches, "writes": writes, "warmup": warmup, "embed": "fake",
                       "build_s": round(build_s, 1), **run.figures()},
            "in_process": local_figures, "stdio": remote_figures, "overhead": overhead}


def table(result: Mapping[str, Any]) -> str:
    """The figures as a text table: one row per verb and quantile, in process beside over stdio (ms)."""
    rows = ["verb            quantile  in process  over stdio  added"]
    for verb in ("memory_search", "memory_write"):
        for q in ("p50", "p95"):
            key = f"{verb}_{q}_ms"
            rows.append(f"{verb:<15} {q:<8} {result['in_process'][key]:>11.2f} {result['stdio'][key]:>11.2f} "
                        f"{result['overhead'][key.replace('_ms', '_added_ms')]:>6.2f}")
    config = result["config"]
    rows.append(f"{config['size']} memories, {config['queries']} searches, {config['writes']} writes each side; "
                f"nproc {config['nproc']}, load {config['loadavg_before']} -> {config['loadavg_after']}")
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the flags, run :func:`measure`, print the table, write ``--json``; 0, or 1 on a refusal."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000, help="memories in the corpus (default %(default)s)")
    parser.add_argument("--queries", type=int, default=50, help="timed searches per side (default %(default)s)")
    parser.add_argument("--writes", type=int, default=20, help="timed writes per side (default %(default)s)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed searches first (default %(default)s)")
    parser.add_argument("--workdir", type=Path, help="keep the corpus here (a new or empty folder)")
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    args = parser.parse_args(argv)
    try:
        result = measure(args.size, searches=args.queries, writes=args.writes, warmup=args.warmup,
                         workdir=args.workdir, env=os.environ)
    except MemhtmlError as exc:
        sys.stderr.write(failure(exc) + "\n")
        return 1
    print(table(result))
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
