"""Model use of the six model phases on LoCoMo, and the batch kernel's overhead per call (issue 11, "Measure").

Two measurements in one run:

1. **Per phase, per conversation.** For each LoCoMo dev conversation (or ``--conversation ID``): its observations
   (``bench/locomo.py`` ``convert``, as ``bench/import_sleep.py`` imports them) are written into a fresh memory
   repository by ``apply_batch``, indexed with ``--embed`` (``wordllama``, the product default, or ``fake``), and
   one ``sleep run`` is made with a model bound: a real ``HttpModelClient`` of ``--dialect`` (default ``openai``)
   pointed at the scripted loopback server (``git_memhtml.llm.scripted_server.ScriptedModelServer``). The server
   plays :func:`script`: one deterministic responder per answer schema that reads the offered keys back out of the
   prompt (``git_memhtml.llm.scripted.blocks``) and answers plausible work built with the phases' own schema
   classes (so this bench breaks when a schema changes). Each responder reports usage as a provider would:
   ``input ≈ ceil(prompt bytes / 4)``, ``output ≈ ceil(answer bytes / 4)`` (:data:`BYTES_PER_TOKEN`).

   The client is wrapped (:class:`TimedClient`): every ``call()`` is timed (``perf_counter``) and its prompt bytes
   (UTF-8 of system + user prompt, the kernel's own ``prompt_bytes`` definition), HTTP request body bytes
   (``Content-Length`` of what reached the server) and the usage the server reported are recorded, then attributed
   to the phase that was running when the runner calls ``after_phase``. A phase's wall time comes from the run's
   ``clock()`` calls around it (``import_sleep.PhaseTimer``); ``own s`` is that wall time minus the time spent
   inside ``call()``: the phase's own work without the model (client encode/decode and the loopback round trip are
   on the model side of the line). The bench checks that the tokens it saw equal the ``inputTokens`` /
   ``outputTokens`` the phase counted (``tokensMatch``).

2. **Kernel overhead per call** (:func:`kernel_overhead`): one task-detection-shaped batch (20 members × 1,200
   characters, the phase's own ``BATCH_SIZE`` and ``MEMBER_CHARS``, its real prompts): ``key_members`` (keying and
   framing), ``KeyedBatch.prompt``, ``PhaseModel.call`` on an in-process ``ScriptedClient`` that answers at once,
   and ``KeyedBatch.resolve`` of the 20 answered keys; minus the bare ``ScriptedClient.call`` of the same request.
   The call counts the request's tokens (``sleep/engine/tokens.py``), under a prompt cap raised out of the way (the
   batch is about 9,000 tokens: this measures the kernel, not the split).
   Beside it, one loopback HTTP round trip per dialect (``HttpModelClient.call`` against the scripted server: the
   request encoded with its strict schema, sent, answered, decoded). Medians of ``--repeat`` iterations after
   :data:`WARMUP` warm-ups.

Usage::

    python bench/model_phases.py                                   # six conversations, wordllama, figures on stdout
    python bench/model_phases.py --embed fake --conversation conv-26 --json conv26.json

Errors (unknown conversation, unreadable data) print ``error:`` and ``hint:`` lines on stderr and exit 2; a failed
sleep phase, an unscripted schema or a token mismatch exits 1.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import platform
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel

from git_memhtml.cli.common import init_memory
from git_memhtml.errors import LlmContractViolation, MemhtmlError, ModelUnavailable, ProviderRefused, UsageError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.index.traces import TraceTables
from git_memhtml.llm import anthropic, openai
from git_memhtml.llm.contract import Dialect, ModelAnswer, ModelClient, ModelRequest, T
from git_memhtml.llm.defaults import MAX_MAX_PROMPT_TOKENS
from git_memhtml.llm.scripted import Answer, Reply, Script, ScriptedClient, ScriptedRequest, blocks
from git_memhtml.llm.scripted_server import ScriptedModelServer
from git_memhtml.output import emit, log
from git_memhtml.sleep.engine.batch import Member, key_members
from git_memhtml.sleep.engine.env import LlmBudget, PhaseEnv, PhaseReport, RunServices
from git_memhtml.sleep.engine.model import PhaseModel
from git_memhtml.sleep.engine.prompts import load_prompt
from git_memhtml.sleep.engine.run import ModelBinding, run_sleep
from git_memhtml.sleep.engine.tokens import counter_name, request_tokens
from git_memhtml.sleep.phases import task_detection
from git_memhtml.sleep.phases.arc_synthesis import ArcContent, ArcPlan, ArcPlanEntry
from git_memhtml.sleep.phases.compress import CompressSynthesis
from git_memhtml.sleep.phases.dedup_model import MergeGroup, MergePartition
from git_memhtml.sleep.phases.edge_typing import EdgeVerdict, EdgeVerdicts
from git_memhtml.sleep.phases.entity_model import EntityCluster, EntityClustering
from git_memhtml.sleep.phases.placement_rails import PlacementTriage
from git_memhtml.sleep.phases.task_detection import TaskDetection, TaskFinding
from git_memhtml.sleep.phases.trace_answers import TraceExtraction, TraceSynthesis
from git_memhtml.traces.scan import discover, scan
from git_memhtml.transport import Transport

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from timing import (  # noqa: E402  (a script beside this one)
    RunFigures,
    Stopwatch,
    conversation_ids,
    failure,
    imported_memory,
    load_script,
    scratch,
    write_json,
)

DEFAULT_DATA = BENCH_DIR.parent.parent / "shared" / "data" / "locomo" / "locomo-dev.json"
DEFAULT_TRACES = BENCH_DIR.parent.parent / "shared" / "data" / "transcripts" / "claude-code"
"""Real Claude Code transcripts (``projects/<slug>/<session>.jsonl``): what trace-consolidation reads."""
EMBED_CHOICES = ("wordllama", "fake")
DIALECTS: tuple[Dialect, ...] = ("openai", "anthropic")
WIRES: Mapping[str, ModuleType] = {"openai": openai, "anthropic": anthropic}

MODEL_PHASES = ("dedup-merge", "entity-resolution", "edge-typing", "arc-synthesis", "compress",
                "trace-consolidation", "task-detection", "placement-triage")
"""The eight model phases, in run order (placement-triage asks only on ``--deep``, trace-consolidation only when
``--traces`` gives transcripts)."""

BYTES_PER_TOKEN = 4
"""The scripted server's usage: about four bytes of English per token (the usual rule of thumb for BPE tokenizers)."""

WARMUP = 5
"""Untimed iterations before each overhead measurement (imports, caches, the first connection)."""

OVERHEAD_MEMBERS = task_detection.BATCH_SIZE
OVERHEAD_CHARS = task_detection.MEMBER_CHARS

SHARE_FLOOR = 0.5
"""MergePartition responder: two members restate one fact when the Jaccard overlap of their word sets is at least
this (they share most of their words)."""

WILL = "will "
"""TaskDetection responder: a sentence holding this word is a commitment."""


# --- the scripted answers ----------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9']+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_STOP_TEXT = ("a an and are as at be by for from has have her his in is it its of on or she that the their "
              "they this to was were with he him them about after also been but did do does had into just more "
              "most not now our out so some than then there these those very who will would your you "
              "observed session agent memory appears")
_STOP = frozenset(_STOP_TEXT.split())
"""Words no arc title is made of: function words, and the boilerplate of the LoCoMo observation and person texts."""


def tokens_of(text: str) -> int:
    """Tokens a provider would report for ``text``: ``ceil(UTF-8 bytes / BYTES_PER_TOKEN)``."""
    return math.ceil(len(text.encode("utf-8", "replace")) / BYTES_PER_TOKEN)


def answer(req: ScriptedRequest, value: BaseModel) -> Answer:
    """``value`` (a phase's schema instance) as the JSON the model emits, with realistic usage."""
    body = value.model_dump(by_alias=True, mode="json")
    return Answer(body, input_tokens=tokens_of(req.system) + tokens_of(req.prompt),
                  output_tokens=tokens_of(json.dumps(body)))


def words(text: str) -> set[str]:
    """Lower-cased word set of ``text``."""
    return set(_WORD.findall(text.lower()))


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, line by line (a block's lines are never joined)."""
    out: list[str] = []
    for line in text.splitlines():
        out += [s.strip() for s in _SENTENCE_END.split(line) if s.strip()]
    return out


def merge_partition(req: ScriptedRequest) -> Reply:
    """Per ``component_<i> holds m1, m2.`` heading, group the members whose texts share most words
    (Jaccard >= :data:`SHARE_FLOOR`, single-linkage within the component); groups of two or more."""
    texts = blocks(req.prompt)
    groups: list[MergeGroup] = []
    for line in req.prompt.splitlines():
        head = re.fullmatch(r"component_\d+ holds (.+)\.", line.strip())
        if head is None:
            continue
        keys = [k.strip() for k in head.group(1).split(",") if k.strip() in texts]
        seen: set[str] = set()
        for key in keys:
            if key in seen:
                continue
            group, frontier = [key], [key]
            seen.add(key)
            while frontier:
                here = words(texts[frontier.pop()])
                for other in keys:
                    there = words(texts[other])
                    if other not in seen and here and there and len(here & there) / len(here | there) >= SHARE_FLOOR:
                        seen.add(other)
                        group.append(other)
                        frontier.append(other)
            if len(group) > 1:
                groups.append(MergeGroup(member_keys=group))
    return answer(req, MergePartition(groups=groups))


def entity_clustering(req: ScriptedRequest) -> Reply:
    """Cluster names where one is a proper prefix of the other (case-insensitive); the canonical is the longest."""
    names: dict[str, str] = {}
    for key, text in blocks(req.prompt).items():
        line = next((ln for ln in text.splitlines() if ln.startswith("name: ")), None)
        if line is not None:
            names[key] = line[len("name: "):].strip().lower()
    parent = {k: k for k in names}

    def root(k: str) -> str:
        while parent[k] != k:
            k = parent[k]
        return k

    for a in names:
        for b in names:
            if a != b and names[b].startswith(names[a]) and len(names[b]) > len(names[a]):
                parent[root(a)] = root(b)
    members: dict[str, list[str]] = {}
    for k in names:
        members.setdefault(root(k), []).append(k)
    clusters = [EntityCluster(canonical_key=max(keys, key=lambda k: (len(names[k]), k)), member_keys=keys,
                              confidence=0.9, evidence="one name is the start of the other")
                for keys in members.values() if len(keys) > 1]
    return answer(req, EntityClustering(clusters=clusters))


def edge_verdicts(speakers: Sequence[str]) -> Callable[[ScriptedRequest], Reply]:
    """``supports`` (src to dst, 0.8) for a pair whose two sides name a common speaker of ``speakers``, else
    ``none`` (0.6)."""
    known = {s.lower() for s in speakers}

    def respond(req: ScriptedRequest) -> Reply:
        verdicts = []
        for key, text in blocks(req.prompt).items():
            src, _, dst = text.partition("\ndst:\n")
            shared = sorted(known & words(src) & words(dst))
            verdicts.append(EdgeVerdict(pair_key=key, rel="supports" if shared else "none", direction="src_to_dst",
                                        confidence=0.8 if shared else 0.6,
                                        rationale=f"both sides are about {shared[0]}" if shared else None))
        return answer(req, EdgeVerdicts(verdicts=verdicts))

    return respond


def _topic(texts: Sequence[str], n: int = 3) -> list[str]:
    """The ``n`` most frequent content words of ``texts`` (ties by word)."""
    counted = Counter(w for t in texts for w in re.findall(r"[a-z]+", t.lower()) if w not in _STOP and len(w) > 3)
    return [w for w, _ in sorted(counted.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def arc_plan(req: ScriptedRequest) -> Reply:
    """Skip every existing arc (``a…``); create one arc from the first three evidence keys (``e…``)."""
    found = blocks(req.prompt)
    evidence = [k for k in found if k.startswith("e")][:3]
    entries = [ArcPlanEntry(slug=k, title="existing arc", action="skip", rationale="nothing new", evidence_keys=[])
               for k in found if k.startswith("a")]
    if len(evidence) >= 2:
        topic = _topic([found[k] for k in evidence]) or ["shared", "experience"]
        entries.append(ArcPlanEntry(slug="", title="Recurring theme of " + " and ".join(topic), action="create",
                                    rationale="the first evidence memories share this theme",
                                    evidence_keys=evidence))
    return answer(req, ArcPlan(entries=entries))


def arc_content(req: ScriptedRequest) -> Reply:
    """Title = the planned title (the first block); claim and paragraphs from the evidence's first sentences."""
    found = blocks(req.prompt)
    title = next(iter(found.values()), "Recurring theme").splitlines()[0].strip() or "Recurring theme"
    firsts = [(sentences(t) or [t])[0] for k, t in found.items() if k.startswith("e")]
    claim = f"IF {title.lower()} comes up again THEN recall what the {len(firsts)} memories below record."
    return answer(req, ArcContent(title=title, claim=claim, paragraphs=firsts))


def compress_synthesis(req: ScriptedRequest) -> Reply:
    """Absorb every member: title and claim from the first, one paragraph per member's first sentence."""
    found = blocks(req.prompt)
    texts = list(found.values())
    first = (texts[0].splitlines() or ["Canonical memory"]) if texts else ["Canonical memory"]
    claim = (sentences(texts[0]) or [first[0]])[-1] if texts else "Canonical memory."
    return answer(req, CompressSynthesis(title=first[0][:80], claim=claim,
                                         paragraphs=[(sentences(t) or [t])[0] for t in texts],
                                         absorbed_keys=list(found)))


def task_findings(req: ScriptedRequest) -> Reply:
    """A ``commitment`` (0.8) for each member with a sentence holding ``"will "``, quoting that sentence exactly."""
    findings = []
    for key, text in blocks(req.prompt).items():
        quote = next((s for s in sentences(text) if WILL in s), None)
        if quote is not None:
            findings.append(TaskFinding(member_key=key, sentence=quote, kind="commitment", confidence=0.8))
    return answer(req, TaskDetection(findings=findings))


def no_op(value: BaseModel) -> Callable[[ScriptedRequest], Reply]:
    """A responder answering every request with ``value`` (an empty answer: nothing extracted, nothing moved)."""

    def respond(req: ScriptedRequest) -> Reply:
        return answer(req, value)

    return respond


def script(speakers: Sequence[str] = ()) -> Script:
    """The scripted model: schema name → deterministic responder (one per schema the eight phases ask with;
    trace-consolidation and placement-triage get empty answers: the bench measures what they are asked)."""
    return {
        TraceExtraction.__name__: no_op(TraceExtraction(candidates=[], commitments=[])),
        TraceSynthesis.__name__: no_op(TraceSynthesis(memories=[])),
        PlacementTriage.__name__: no_op(PlacementTriage(placements=[])),
        MergePartition.__name__: merge_partition,
        EntityClustering.__name__: entity_clustering,
        EdgeVerdicts.__name__: edge_verdicts(speakers),
        ArcPlan.__name__: arc_plan,
        ArcContent.__name__: arc_content,
        CompressSynthesis.__name__: compress_synthesis,
        TaskDetection.__name__: task_findings,
    }


# --- timing the client -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallRecord:
    """One ``call()``: schema name, seconds inside it (wall, and process CPU: client and server threads), prompt
    bytes (system + user, UTF-8), HTTP request body bytes that reached the server (all attempts), the request's
    tokens as ``sleep/engine/tokens.py`` counts them (system + user + the template allowance), tokens reported, and the
    error class when it raised."""

    schema: str
    seconds: float
    cpu_s: float
    prompt_bytes: int
    request_bytes: int
    request_tokens: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    error: str | None = None


class TimedClient:
    """A :class:`ModelClient` around ``inner`` that records a :class:`CallRecord` per call (see module docstring).

    ``wire_bytes`` returns the request body bytes the server has received so far (0 when unknown).
    """

    def __init__(self, inner: ModelClient, wire_bytes: Callable[[], int] = lambda: 0) -> None:
        self.inner = inner
        self.wire_bytes = wire_bytes
        self.pending: list[CallRecord] = []

    def describe(self) -> str:
        """The inner client's description."""
        return self.inner.describe()

    def call(self, request: ModelRequest[T]) -> ModelAnswer[T]:
        """Time ``inner.call(request)`` and record it; errors are recorded and re-raised unchanged."""
        prompt_bytes = len(request.system.encode("utf-8", "replace")) + len(request.prompt.encode("utf-8", "replace"))
        tokens = request_tokens(request.system, request.prompt)
        wire = self.wire_bytes()
        watch = Stopwatch()
        try:
            result = self.inner.call(request)
        except (ModelUnavailable, LlmContractViolation, ProviderRefused) as exc:
            self.pending.append(CallRecord(request.name, watch.wall(), watch.cpu(), prompt_bytes,
                                           self.wire_bytes() - wire, tokens, error=type(exc).__name__))
            raise
        self.pending.append(CallRecord(request.name, watch.wall(), watch.cpu(), prompt_bytes, self.wire_bytes() - wire,
                                       tokens, result.usage.input_tokens, result.usage.output_tokens))
        return result

    def take(self) -> list[CallRecord]:
        """The records since the last ``take`` (the calls of the phase that just ended)."""
        out, self.pending = self.pending, []
        return out


def _request_bytes(server: ScriptedModelServer) -> Callable[[], int]:
    def total() -> int:
        return sum(int(h.get("content-length") or 0) for h in list(server.headers))

    return total


# --- per conversation --------------------------------------------------------------------------------------


@dataclass
class PhaseFigures:
    """One phase of one run. Seconds: ``wall_s`` (from the run's clock), ``model_s`` (inside ``call()``), ``own_s``
    (``wall_s - model_s``); the same in process CPU seconds (``cpu_s``, ``model_cpu_s``, ``own_cpu_s``: the server
    thread runs only inside a call, so its CPU falls on the model side; CPU time is what a loaded machine does not
    inflate). Bytes: ``prompt_bytes`` (system + user prompts), ``request_bytes`` (HTTP bodies). Request tokens
    (``sleep/engine/tokens.py``): ``largest_request`` (the phase's largest request) and ``request_tokens`` (all of
    them)."""

    phase: str
    status: str
    calls: int
    failed_calls: int
    input_tokens: int
    output_tokens: int
    prompt_bytes: int
    request_bytes: int
    largest_request: int
    request_tokens: int
    wall_s: float
    model_s: float
    own_s: float
    cpu_s: float
    model_cpu_s: float
    own_cpu_s: float
    tokens_match: bool
    schemas: dict[str, int] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)
    detail: str | None = None


def _phase_figures(report: PhaseReport, window: Any, records: Sequence[CallRecord]) -> PhaseFigures:
    wall = float(window.end - window.start)
    model_s = sum(r.seconds for r in records)
    cpu, model_cpu = float(window.cpu), sum(r.cpu_s for r in records)
    counts = dict(report.counts)
    inp, out = sum(r.input_tokens for r in records), sum(r.output_tokens for r in records)
    match = (counts.get("inputTokens", 0), counts.get("outputTokens", 0)) == (inp, out) and report.llm_calls == len(
        records)
    return PhaseFigures(report.phase, report.status, len(records), sum(1 for r in records if r.error), inp, out,
                        sum(r.prompt_bytes for r in records), sum(r.request_bytes for r in records),
                        max((r.request_tokens for r in records), default=0), sum(r.request_tokens for r in records),
                        round(wall, 6),
                        round(model_s, 6), round(wall - model_s, 6), round(cpu, 6), round(model_cpu, 6),
                        round(cpu - model_cpu, 6), match,
                        dict(Counter(r.schema for r in records)), counts, report.detail)


def speakers_of(data: Sequence[Mapping[str, Any]], sample_id: str) -> list[str]:
    """``speaker_a`` and ``speaker_b`` of one conversation (what the EdgeVerdicts responder calls a speaker)."""
    for item in data:
        if item.get("sample_id") == sample_id:
            conv = item.get("conversation", {})
            return [str(conv[k]) for k in ("speaker_a", "speaker_b") if conv.get(k)]
    return []


def settled_traces(source: Path, target: Path, date: str) -> Path:
    """Copy the transcripts under ``source`` (``projects/...``) to ``target``, every file's mtime a day before the
    run ``date`` (settled: quiet long enough for trace-consolidation to read it); return ``target``."""
    settled = datetime.fromisoformat(f"{date}T00:00:00+00:00").timestamp() - 86400
    for path in sorted(source.rglob("*.jsonl")):
        copy = target / path.relative_to(source)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(path.read_bytes())
        os.utime(copy, (settled, settled))
    return target


def index_traces(db: IndexDB, claude: Path, date: str) -> None:
    """Scan the Claude Code transcripts under ``claude`` into ``db``'s trace plane, as ``git memhtml trace index``
    does, on the morning before ``date``."""
    roots, files = discover(claude, claude.parent / "no-codex")
    scan(TraceTables(db), roots, files, now=f"{date}T00:00:00Z")


def measure_conversation(data: Sequence[Mapping[str, Any]], sample_id: str, *, embed: str, dialect: Dialect,
                         root: Path, now: str, date: str, deep: bool = False, traces: Path | None = None,
                         max_prompt: int | None = None) -> dict[str, Any]:
    """Import ``sample_id``'s observations into a new repository at ``root``, index, sleep with the scripted model.

    ``deep`` runs ``sleep run --deep`` (placement-triage asks only then); ``traces`` (a Claude Code root) is copied
    beside ``root``, settled and indexed first, so trace-consolidation reads it; ``max_prompt`` is
    ``memhtml.llmmaxprompt`` (``None``: the default).

    Returns ``{conversation, memories, run_id, sleep_wall_s, sleep_model_s, failed, unscripted, phases}``
    (``phases``: a :class:`PhaseFigures` dict per phase in run order).

    Raises:
        UsageError: unknown conversation or embedder, or the import refused an op.
    """
    locomo = load_script("locomo")
    importer = load_script("import_sleep")
    ops = locomo.convert(data, sample_id, "observations")
    with imported_memory(root, locomo.dumps_jsonl(ops), sample_id=sample_id, embed=embed, now=now) as mem:
        repo, db, embedder, result = mem.repo, mem.db, mem.embedder, mem.result
        if traces is not None:
            index_traces(db, settled_traces(traces, root.parent / "claude", date), date)
        timer = importer.PhaseTimer(importer.RssSampler(), f"{date}T09:00:00Z")
        with ScriptedModelServer(script(speakers_of(data, sample_id))) as server:
            client = TimedClient(server.client(dialect), _request_bytes(server))
            taken: list[tuple[PhaseReport, list[CallRecord]]] = []

            def after_phase(report: PhaseReport) -> None:
                timer.after_phase(report)
                taken.append((report, client.take()))

            watch = Stopwatch()
            binding = ModelBinding(client) if max_prompt is None else ModelBinding(client, max_prompt=max_prompt)
            run = run_sleep(repo, db, date=date, embedder=embedder, clock=timer.clock, after_phase=after_phase,
                            model=binding, deep=deep)
            wall = watch.wall()
            unscripted = sorted({r.schema_name for r in server.requests} - set(script()))
    phases = [_phase_figures(report, window, records)
              for (report, records), window in zip(taken, timer.windows, strict=True)]
    return {"conversation": sample_id, "memories": int(result.summary["written"]), "run_id": run.run_id,
            "sleep_wall_s": round(wall, 6), "sleep_model_s": round(sum(p.model_s for p in phases), 6),
            "failed": list(run.failed_phases), "unscripted": unscripted, "phases": [asdict(p) for p in phases]}


# --- kernel overhead ---------------------------------------------------------------------------------------


_VOCAB = ("the team will send the report after the review and the budget meeting on friday while the new service "
          "keeps answering requests from the old clients until the migration is done")


def member_text(i: int, chars: int = OVERHEAD_CHARS) -> str:
    """A deterministic English-like text of exactly ``chars`` characters, different per ``i``."""
    vocab = _VOCAB.split()
    out: list[str] = []
    k = i
    while sum(len(w) + 1 for w in out) < chars:
        k = (k * 1103515245 + 12345) % (1 << 31)
        out.append(vocab[k % len(vocab)])
    return " ".join(out)[:chars]


def _median_us(samples: Sequence[float]) -> float:
    return round(statistics.median(samples) * 1e6, 1)


def kernel_overhead(root: Path, *, repeat: int) -> dict[str, Any]:
    """The kernel's overhead per call and one HTTP round trip per dialect (see module docstring), medians in µs.

    Returns ``{members, memberChars, promptBytes, repeat, key_frame_us, prompt_us, phase_call_us, bare_call_us,
    bookkeeping_us, resolve_us, overhead_us, http_round_trip_us: {dialect: µs}, http_round_trip_cpu_us: {dialect:
    µs}, http_encode_us: {dialect: µs}, http_session_us, http_session_cpu_us}`` (``…cpu_us``: process CPU, both
    threads); ``overhead_us`` = keying and framing + prompt + resolve + (``PhaseModel.call`` − bare call),
    each term a median. Two parts of the round trip are timed on their own: ``http_encode_us``, the dialect's
    request body (``<dialect>.encode``: the strict wire schema is derived from the pydantic model on every call), and
    ``http_session_us``, opening and closing one ``transport.Transport`` (an ``httpx.Client``, whose default SSL
    context loads the CA store): what a client pays once, on its first call (``HttpModelClient`` keeps its session).
    """
    init_memory(root)
    repo = GitRepo.discover(root)
    db = IndexDB.for_repo(repo)
    try:
        system = load_prompt(repo, task_detection.PHASE)
        instruction = load_prompt(repo, f"{task_detection.PHASE}.task")
        members = [Member(f"projects/x/m{i}.html", member_text(i)) for i in range(OVERHEAD_MEMBERS)]
        keys = [f"m{i}" for i in range(1, OVERHEAD_MEMBERS + 1)]
        reply = TaskDetection(findings=[TaskFinding(member_key=k, sentence=member_text(i)[:60], kind="commitment",
                                                    confidence=0.8) for i, k in enumerate(keys)])
        fixed = Answer(reply.model_dump(by_alias=True, mode="json"))
        inner = ScriptedClient({TaskDetection.__name__: [fixed]})
        env = PhaseEnv(repo, db, None, "sleep/2026-12-14", "0" * 40, "2026-12-14", "2026-12-14T00:00:00Z",
                       services=RunServices(model=inner, llm_budget=LlmBudget(), max_prompt=MAX_MAX_PROMPT_TOKENS))
        model = PhaseModel.for_phase(env, task_detection.PHASE)
        parts: dict[str, list[float]] = {n: [] for n in ("key", "prompt", "call", "bare", "resolve")}
        prompt_bytes = 0
        for n in range(WARMUP + repeat):
            t0 = time.perf_counter()
            batch = key_members(members, label="memory", member_chars=OVERHEAD_CHARS)
            t1 = time.perf_counter()
            prompt = batch.prompt(instruction)
            t2 = time.perf_counter()
            request = ModelRequest(TaskDetection, system, prompt)
            value = model.call(request)
            t3 = time.perf_counter()
            if value is None:
                raise UsageError("the in-process scripted call failed", hint="check the overhead script")
            resolved, unknown = batch.resolve([f.member_key for f in value.findings])
            t4 = time.perf_counter()
            inner.call(request)
            t5 = time.perf_counter()
            if len(resolved) != OVERHEAD_MEMBERS or unknown:
                raise UsageError("resolve lost members", hint="the kernel changed: update the bench")
            prompt_bytes = len(system.encode()) + len(prompt.encode())
            if n >= WARMUP:
                for name, took in zip(parts, (t1 - t0, t2 - t1, t3 - t2, t5 - t4, t4 - t3), strict=True):
                    parts[name].append(took)
        med = {name: _median_us(values) for name, values in parts.items()}
        http: dict[str, float] = {}
        http_cpu: dict[str, float] = {}
        encode: dict[str, float] = {}
        request = ModelRequest(TaskDetection, system, prompt)
        with ScriptedModelServer({TaskDetection.__name__: [fixed]}) as server:
            for dialect in DIALECTS:
                client = server.client(dialect)
                encoder = WIRES[dialect].encode
                samples, cpus, encodes = [], [], []
                for n in range(WARMUP + repeat):
                    t0, c0 = time.perf_counter(), time.process_time()
                    client.call(request)
                    t1, c1 = time.perf_counter(), time.process_time()
                    encoder(request, "scripted")
                    t2 = time.perf_counter()
                    if n >= WARMUP:
                        samples.append(t1 - t0)
                        cpus.append(c1 - c0)
                        encodes.append(t2 - t1)
                http[dialect] = _median_us(samples)
                http_cpu[dialect] = _median_us(cpus)
                encode[dialect] = _median_us(encodes)
        sessions, session_cpus = [], []
        for n in range(WARMUP + repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            with Transport("model endpoint", 10.0):
                pass
            if n >= WARMUP:
                sessions.append(time.perf_counter() - t0)
                session_cpus.append(time.process_time() - c0)
    finally:
        db.close()
    bookkeeping = round(med["call"] - med["bare"], 1)
    return {"members": OVERHEAD_MEMBERS, "memberChars": OVERHEAD_CHARS, "promptBytes": prompt_bytes,
            "repeat": repeat, "key_frame_us": med["key"], "prompt_us": med["prompt"], "phase_call_us": med["call"],
            "bare_call_us": med["bare"], "bookkeeping_us": bookkeeping, "resolve_us": med["resolve"],
            "overhead_us": round(med["key"] + med["prompt"] + med["resolve"] + bookkeeping, 1),
            "http_round_trip_us": http, "http_round_trip_cpu_us": http_cpu, "http_encode_us": encode,
            "http_session_us": _median_us(sessions), "http_session_cpu_us": _median_us(session_cpus)}


# --- the whole bench ---------------------------------------------------------------------------------------


def measure(*, data_path: Path, conversation: str, embed: str, dialect: Dialect, workdir: Path, repeat: int,
            now: str, date: str | None = None, deep: bool = False, traces: Path | None = None,
            max_prompt: int | None = None) -> dict[str, Any]:
    """Every conversation asked for (``all`` = every item of the data), then the kernel overhead.

    Returns ``{config, conversations: [...], totals: {phase: {...}}, overhead: {...}}``.

    Raises:
        UsageError: unknown embedder or conversation, data unreadable.
    """
    if embed not in EMBED_CHOICES:
        raise UsageError(f"unknown embedder {embed!r}", hint=f"use --embed {'|'.join(EMBED_CHOICES)}")
    if dialect not in DIALECTS:
        raise UsageError(f"unknown dialect {dialect!r}", hint=f"use --dialect {'|'.join(DIALECTS)}")
    importer = load_script("import_sleep")
    run_date = date or (datetime.fromisoformat(now.replace("Z", "+00:00")) + importer.DECAY_DELAY).date().isoformat()
    locomo = load_script("locomo")
    data = locomo.load_data(data_path)
    ids = conversation_ids(locomo, data, conversation)
    run = RunFigures()
    convs = [measure_conversation(data, sid, embed=embed, dialect=dialect, root=workdir / sid / "memory", now=now,
                                  date=run_date, deep=deep, traces=traces, max_prompt=max_prompt) for sid in ids]
    overhead = kernel_overhead(workdir / "overhead" / "memory", repeat=repeat)
    totals: dict[str, dict[str, Any]] = {}
    for phase in MODEL_PHASES:
        rows = [p for c in convs for p in c["phases"] if p["phase"] == phase]
        totals[phase] = {k: round(sum(p[k] for p in rows), 6) for k in (
            "calls", "failed_calls", "input_tokens", "output_tokens", "prompt_bytes", "request_bytes",
            "request_tokens", "wall_s", "model_s", "own_s", "cpu_s", "model_cpu_s", "own_cpu_s")}
        totals[phase]["largest_request"] = max((p["largest_request"] for p in rows), default=0)
        totals[phase]["tokens_match"] = all(p["tokens_match"] for p in rows)
    return {
        "config": {"conversations": ids, "units": "observations", "embed": embed, "dialect": dialect, "now": now,
                   "date": run_date, "data": str(data_path), "repeat": repeat, "bytesPerToken": BYTES_PER_TOKEN,
                   "deep": deep, "traces": str(traces) if traces else None, "maxPrompt": max_prompt,
                   "tokenCounter": counter_name(),
                   "platform": platform.platform(), **run.figures()},
        "conversations": convs,
        "totals": totals,
        "overhead": overhead,
    }


# --- output ------------------------------------------------------------------------------------------------

PHASE_COLUMNS = ("conversation", "phase", "calls", "failed", "largest request tok", "request tok", "input tok",
                 "output tok", "prompt bytes", "request bytes", "wall s", "model s", "own s", "own CPU s", "work")
"""Columns of the per-phase table (``own s`` = wall − model; ``own CPU s`` = process CPU − CPU inside calls)."""

WORK_KEYS: Mapping[str, tuple[str, ...]] = {
    "dedup-merge": ("candidates", "components", "llmGroups", "merged", "vetoed"),
    "entity-resolution": ("entities", "llmMerges", "pendingCorroboration", "reviewCandidates"),
    "edge-typing": ("candidates", "judged", "typed", "contradictions"),
    "arc-synthesis": ("planned", "written", "skipped"),
    "compress": ("candidates", "batches", "canonicals", "archived"),
    "task-detection": ("candidates", "batches", "findings", "minted", "unverified", "capped"),
}
"""The counts shown as what each phase did with the answers."""


def _md(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join("---" for _ in headers) + " |"]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _work(phase: str, counts: Mapping[str, Any]) -> str:
    shown = [f"{k}={counts[k]}" for k in WORK_KEYS.get(phase, ()) if k in counts]
    rails = [f"{k}={v}" for k, v in counts.items() if k.startswith("rail")]
    return " ".join(shown + rails)


def _row(label: str, p: Mapping[str, Any], work: str) -> list[object]:
    return [label, p["phase"], p["calls"], p["failed_calls"], f"{p['largest_request']:,}", f"{p['request_tokens']:,}",
            f"{p['input_tokens']:,}", f"{p['output_tokens']:,}",
            f"{p['prompt_bytes']:,}", f"{p['request_bytes']:,}", f"{p['wall_s']:.3f}", f"{p['model_s']:.3f}",
            f"{p['own_s']:.3f}", f"{p['own_cpu_s']:.3f}", work]


def render(result: Mapping[str, Any]) -> str:
    """The markdown report: config line, the per-phase table, totals, the sleep lines, the overhead table."""
    c = result["config"]
    load = "/".join(str(x) for x in c["loadavg_before"]) or "?"
    lines = [f"LoCoMo {', '.join(c['conversations'])} ({c['units']}), embed {c['embed']}, dialect {c['dialect']}, "
             f"sleep --date {c['date']}{' --deep' if c['deep'] else ''}, traces {c['traces'] or 'none'}, "
             f"memhtml.llmmaxprompt {c['maxPrompt'] or 'default'}, tokens by {c['tokenCounter']}; "
             f"nproc {c['nproc']}, Python {c['python']}, load average at start {load}", ""]
    rows = [_row(conv["conversation"], p, _work(p["phase"], p["counts"]))
            for conv in result["conversations"] for p in conv["phases"] if p["phase"] in MODEL_PHASES]
    rows += [_row("**all**", {"phase": phase, **t}, "") for phase, t in result["totals"].items()]
    lines.append(_md(PHASE_COLUMNS, rows))
    lines.append("")
    for conv in result["conversations"]:
        lines.append(f"- {conv['conversation']}: {conv['memories']} memories, sleep {conv['sleep_wall_s']:.2f} s wall "
                     f"({conv['sleep_model_s']:.2f} s in model calls), failed: {', '.join(conv['failed']) or 'none'}"
                     + (f", unscripted schemas: {', '.join(conv['unscripted'])}" if conv["unscripted"] else ""))
    o = result["overhead"]
    lines += ["", f"Kernel overhead per call: {o['members']} members × {o['memberChars']} chars "
              f"({o['promptBytes']:,} prompt bytes), median of {o['repeat']}", ""]
    lines.append(_md(["step", "µs", "CPU µs"], [
        ["key_members (clean, cut, fence digest)", o["key_frame_us"], ""],
        ["KeyedBatch.prompt (framing)", o["prompt_us"], ""],
        ["PhaseModel.call bookkeeping (call − bare client call)", o["bookkeeping_us"], ""],
        ["KeyedBatch.resolve (20 keys)", o["resolve_us"], ""],
        ["**kernel overhead**", f"**{o['overhead_us']}**", ""],
        ["bare ScriptedClient.call (JSON round trip + schema decode)", o["bare_call_us"], ""],
        *[[f"loopback HTTP round trip, {d} (HttpModelClient.call)", us, o["http_round_trip_cpu_us"][d]]
          for d, us in o["http_round_trip_us"].items()],
        *[[f"… of which the request body with its strict schema, {d}", us, ""]
          for d, us in o["http_encode_us"].items()],
        ["one Transport session (httpx.Client, SSL context), opened once per client", o["http_session_us"],
         o["http_session_cpu_us"]],
    ]))
    return "\n".join(lines)


def problems(result: Mapping[str, Any]) -> list[str]:
    """What makes the run not count: a failed phase, a schema with no responder, a token mismatch."""
    out = []
    for conv in result["conversations"]:
        out += [f"{conv['conversation']}: phase {p} failed" for p in conv["failed"]]
        out += [f"{conv['conversation']}: no responder for {s}" for s in conv["unscripted"]]
        out += [f"{conv['conversation']}: {p['phase']} tokens differ from its counts"
                for p in conv["phases"] if not p["tokens_match"]]
    return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="model_phases.py", description="model use per phase on LoCoMo; kernel overhead")
    p.add_argument("--conversation", default="all", help="sample id (e.g. conv-26) or all (default)")
    p.add_argument("--embed", choices=EMBED_CHOICES, default="wordllama", help="embedder (default: wordllama)")
    p.add_argument("--dialect", choices=DIALECTS, default="openai", help="wire dialect of the phases' client")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help=f"LoCoMo JSON (default {DEFAULT_DATA})")
    p.add_argument("--repeat", type=int, default=200, help="iterations of each overhead measurement (default 200)")
    p.add_argument("--now", default="2026-11-30T09:00:00Z", help="import instant (default 2026-11-30T09:00:00Z)")
    p.add_argument("--date", default=None, help="sleep run date YYYY-MM-DD (default: import date + 14 days)")
    p.add_argument("--workdir", type=Path, default=None, help="keep the repositories under DIR (DIR empty)")
    p.add_argument("--deep", action="store_true", help="sleep run --deep (placement-triage asks only then)")
    p.add_argument("--traces", type=Path, default=None, metavar="DIR",
                   help=f"a Claude Code root to consolidate (e.g. {DEFAULT_TRACES}); default: none")
    p.add_argument("--max-prompt", type=int, default=None, metavar="TOKENS",
                   help="memhtml.llmmaxprompt of the run (default: the setting's default)")
    p.add_argument("--json", type=Path, default=None, dest="json_out", help="also write the figures as JSON here")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Script entry: measure, print the markdown, write ``--json``. A :class:`MemhtmlError` prints ``error:`` and
    ``hint:`` on stderr and returns its exit code; :func:`problems` print on stderr and return 1."""
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request otherwise
    if args.repeat < 1:
        log("error: --repeat must be at least 1\nhint: give --repeat 200")
        return 2
    try:
        with scratch(args.workdir, "memhtml-bench-model-") as workdir:
            result = measure(data_path=args.data, conversation=args.conversation, embed=args.embed,
                             dialect=args.dialect, workdir=workdir, repeat=args.repeat, now=args.now, date=args.date,
                             deep=args.deep, traces=args.traces, max_prompt=args.max_prompt)
    except MemhtmlError as exc:
        log(failure(exc))
        return exc.exit_code
    emit(render(result))
    write_json(args.json_out, result)
    bad = problems(result)
    for line in bad:
        log(f"problem: {line}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
