"""Phase 12, trace-consolidation: settled session transcripts become memories, one commit per memory
(docs/phases.md §1.12, docs/traces.md §8).

**Selection.** The settled sessions of the trace plane (``git memhtml trace index``; the rule and its constants are
:mod:`git_memhtml.traces.settled`), newest first, 10 a run.

**Reading.** Each session's files are read read-only (:mod:`git_memhtml.traces.dialogue`); its conversation is cut
into at most :data:`MAX_CHUNKS` chunks of :data:`CHUNK_CHARS`, each *redacted* (``secrets.redact``) before it is
framed as data by the batch kernel and sent: no transcript text reaches a prompt, a memory, a commit or an index row
unredacted. One extraction call per chunk (:mod:`~git_memhtml.sleep.phases.trace_answers`); every quote of a
candidate is checked against the session's own text, and a candidate with one quote that fails is refused whole.
Then one synthesis call merges restatements across the batch (skipped with fewer than two candidates).

**Writing.** Per memory: title = the claim's first sentence cut to :data:`TITLE_CHARS`; folder by
``placement_for(kind, tags=["trace-consolidation"])``; author ``agent:sleep``; the claim as the mark and
the gist as the body; the evidence quotes only in the commit body (at most :data:`EVIDENCE_LINES`, redacted, one
line each, indented by the committer so no quote can forge a trailer). A claim whose frame key matches a live
memory's is written anyway, flagged ``(frame conflict)`` in the subject, the other path named in the body.
Commitments: one more commit (:mod:`~git_memhtml.sleep.phases.trace_commitments`).

**Watermark.** Never written here: every session whose every chunk was answered gets a ``session-consolidated``
ledger mark, applied by ``sleep merge`` (docs/ledger.md §1), so a dropped branch leaves its sessions to be read again.
The phase stages the ledger file with its own last commit, so a run killed between this phase and the report phase
keeps its marks on resume; a run killed inside the phase keeps none, and its sessions are read again (the safe
direction: a memory written twice is dedup-merge's to fold, a session marked but not distilled would be lost).

**Outcomes** (docs/phases.md §1.12, carried over): ``no consolidator bound`` (no model bound);
``consolidator unavailable: ConsolidatorUnavailable`` (no transcript of the batch could be read, or no call reached
the model); ``consolidator unavailable: ConsolidatorRunFailed`` (calls reached the model and none gave a usable
answer, or the synthesis call failed); no detail (the batch was read: ``candidates`` may be 0, and
``consolidated`` sessions are marked). Nothing is marked in the first three, nor with ``model call budget spent``
(``--max-llm-calls`` left nothing for this phase) or when the synthesis call fails.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from git_memhtml.cut import clip
from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.template import render_memory
from git_memhtml.domain.frame import frame_key_of
from git_memhtml.errors import InvalidMemory, ModelUnavailable, PathRefused
from git_memhtml.index.corpus import active_corpus
from git_memhtml.index.traces import TraceTables
from git_memhtml.llm.contract import ModelRequest
from git_memhtml.secrets import redact
from git_memhtml.sleep.engine.batch import KeyedBatch, Member, clean_text, key_members
from git_memhtml.sleep.engine.commit import PhaseSteps
from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.sleep.engine.ledger import SessionConsolidated
from git_memhtml.sleep.engine.model import DRY_RUN, PhaseModel
from git_memhtml.sleep.engine.prompts import load_prompt, stated
from git_memhtml.sleep.phases.report import stage_ledger
from git_memhtml.sleep.phases.synthesis import SLEEP_AUTHOR, free_memory_path, rekey, usage_counts, write_new_memory
from git_memhtml.sleep.phases.tasks import norm
from git_memhtml.sleep.phases.trace_answers import (
    CLAIM_CHARS,
    GIST_CHARS,
    MIN_EVIDENCE,
    QUOTE_CHARS,
    Candidate,
    Commitment,
    TraceCommitment,
    TraceExtraction,
    TraceSynthesis,
    candidate_problem,
    merged,
    verify_candidate,
    verify_commitment,
)
from git_memhtml.sleep.phases.trace_commitments import (
    COMMITMENT_FLOOR,
    CommitmentTally,
    body_quote,
    settle_commitments,
)
from git_memhtml.traces.dialogue import SessionText, read_session_text
from git_memhtml.traces.settled import (
    TRACE_MIN_BYTES,
    TRACE_SESSIONS_CAP,
    TRACE_SESSIONS_PER_RUN,
    quiet_before_millis,
)
from git_memhtml.tree.layout import placement_for, slugify

PHASE = "trace-consolidation"

CHUNK_CHARS = 24_000
"""Characters of conversation per extraction call (ours: about 6k tokens, well inside every model's window)."""

MAX_CHUNKS = 4
"""Extraction calls per session at most at :data:`CHUNK_CHARS` (ours: the largest real session, 1.1 MB, is 58k
characters of conversation, three chunks; a longer one is read up to here and counted ``truncated``)."""

READ_CHARS = MAX_CHUNKS * CHUNK_CHARS
"""Characters of conversation read per session, whatever the chunk size: a smaller ``memhtml.llmmaxprompt`` makes
more, smaller calls, never a shorter read."""

CHARS_PER_TOKEN_FLOOR = 3
"""Characters per token a chunk is first sized by from the room the cap leaves (LoCoMo dialogue runs at 3.8 by the
Llama 2 tokenizer; transcripts with code and paths lower). Only a first guess: every chunk is then checked with the
real count and halved until it fits (:func:`split_to_fit`)."""

SYNTHESIS_CHARS = 2000
"""Characters of one candidate shown to the synthesis call (claim + gist: 300 + 1500, and the kind)."""

TITLE_CHARS = 90
EVIDENCE_LINES = 3
"""A memory's title is its claim's first sentence cut to 90 characters; its commit body carries at most 3 evidence
lines (carried over)."""

TAG = "trace-consolidation"
"""The tag of every distilled memory (placement and provenance; carried over)."""

NO_CONSOLIDATOR = "no consolidator bound"
UNAVAILABLE = "consolidator unavailable: ConsolidatorUnavailable"
RUN_FAILED = "consolidator unavailable: ConsolidatorRunFailed"
NO_SESSIONS = "no settled session"
BUDGET_SPENT = "model call budget spent: no session read; raise --max-llm-calls"
BUDGET_SYNTHESIS = "model call budget spent before the synthesis: nothing written; raise --max-llm-calls"
"""Details (carried over; the last three are ours: nothing to read, and ``--max-llm-calls`` spent before any call)."""


def prompt_values() -> dict[str, str]:
    """The limits the extraction and synthesis prompts state, from the constants the rails apply (docs/models.md
    §10)."""
    return {"claim_chars": stated(CLAIM_CHARS), "gist_chars": stated(GIST_CHARS), "quote_chars": stated(QUOTE_CHARS),
            "min_evidence": stated(MIN_EVIDENCE), "commitment_floor": stated(COMMITMENT_FLOOR)}


_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


@dataclass(frozen=True)
class TraceConsolidationCounts(PhaseCounts):
    """Counts (carried over, plus ours: ``unreachable`` sessions unread, ``truncated`` sessions read in part,
    ``refused`` candidates refused whole, ``merged`` candidates folded into another by the synthesis,
    ``redactions`` secrets replaced in what was sent).

    With no consolidator bound, or on a dry run, only ``sessions, batch, candidates, consolidated`` are measured
    (the others are ``None`` and left off the wire), so a night with ``memhtml.llm = off`` reports exactly the
    counts it always did (``tests/e2e/test_nomodel_unchanged.py``)."""

    sessions: int = 0
    batch: int = 0
    unreachable: int | None = None
    truncated: int | None = None
    candidates: int = 0
    refused: int | None = None
    merged: int | None = None
    written: int | None = None
    skipped: int | None = None
    conflicts: int | None = None
    consolidated: int = 0
    redactions: int | None = None
    commitments: int | None = None
    commitment_tasks: int | None = None
    completions_applied: int | None = None
    completions_unmatched: int | None = None
    commitments_skipped: int | None = None
    commitments_below_floor: int | None = None
    commitments_refreshed: int | None = None
    commitments_framed: int | None = None
    commitments_dismissed: int | None = None
    commitments_capped: int | None = None


@dataclass
class _Night:
    """What the phase gathered, as it goes."""

    sessions: int = 0
    batch: int = 0
    unreachable: int = 0
    truncated: int = 0
    candidates: int = 0
    refused: int = 0
    merged: int = 0
    written: int = 0
    skipped: int = 0
    conflicts: int = 0
    redactions: int = 0
    answers: int = 0
    analyzed: list[str] = field(default_factory=list)
    verified: list[Candidate] = field(default_factory=list)
    commitments: list[Commitment] = field(default_factory=list)
    stated: dict[tuple[str, str], int] = field(default_factory=dict)
    """``(session, norm(statement))`` → the index in :attr:`commitments` of the commitment that statement made (-1
    when it was refused): a restatement in the same session is the same commitment."""
    synthesis_budget: bool = False
    tally: CommitmentTally = field(default_factory=CommitmentTally)

    def counts(self) -> TraceConsolidationCounts:
        t = self.tally
        return TraceConsolidationCounts(
            sessions=self.sessions, batch=self.batch, unreachable=self.unreachable, truncated=self.truncated,
            candidates=self.candidates, refused=self.refused, merged=self.merged, written=self.written,
            skipped=self.skipped, conflicts=self.conflicts, consolidated=len(self.analyzed),
            redactions=self.redactions, commitments=t.commitments, commitment_tasks=t.tasks,
            completions_applied=t.completions_applied, completions_unmatched=t.completions_unmatched,
            commitments_skipped=t.skipped, commitments_below_floor=t.below_floor,
            commitments_refreshed=t.refreshed, commitments_framed=t.framed, commitments_dismissed=t.dismissed,
            commitments_capped=t.capped)


def chunks(text: SessionText, chunk_chars: int = CHUNK_CHARS) -> tuple[list[str], bool]:
    """The conversation as ``role: text`` paragraphs packed into chunks of at most ``chunk_chars`` (a longer turn is
    cut into pieces), at most :data:`READ_CHARS` characters of them in all (the first ``READ_CHARS // chunk_chars``
    chunks, rounded up: :data:`MAX_CHUNKS` at :data:`CHUNK_CHARS`); and whether any was left out. Unredacted."""
    out: list[str] = []
    current = ""
    for turn in text.turns:
        piece = f"{turn.role}: {turn.text.strip()}"
        while piece:
            room = chunk_chars - len(current) - (2 if current else 0)
            if len(piece) <= room:
                current = f"{current}\n\n{piece}" if current else piece
                piece = ""
            elif current:
                out.append(current)
                current = ""
            else:
                out.append(piece[:chunk_chars])
                piece = piece[chunk_chars:]
    if current:
        out.append(current)
    most = -(-READ_CHARS // chunk_chars)
    return out[:most], len(out) > most or text.truncated


def split_to_fit(part: str, fits: Callable[[str], bool]) -> list[str]:
    """``part`` as it is when ``fits`` accepts it, else halved at the paragraph break (``\\n\\n``) nearest its
    middle (its middle character when it has none) and each half split the same way: every character is sent, in
    order, in as many requests as the cap needs. A single character that does not fit is returned as it is (the
    call refuses it, counted ``overCap``)."""
    if len(part) <= 1 or fits(part):
        return [part]
    middle = len(part) // 2
    before, after = part.rfind("\n\n", 0, middle), part.find("\n\n", middle)
    breaks = [b for b in (before, after) if b > 0]
    at = min(breaks, key=lambda b: abs(b - middle)) if breaks else middle
    head, tail = part[:at], part[at:].lstrip("\n") if breaks else part[at:]
    if not head or not tail:
        head, tail = part[:middle], part[middle:]
    return [*split_to_fit(head, fits), *split_to_fit(tail, fits)]


def title_of(claim: str) -> str:
    """The claim's first sentence, whitespace collapsed, cut to :data:`TITLE_CHARS`."""
    first = _SENTENCE_END.split(" ".join(claim.split()), maxsplit=1)[0]
    return clip(first, TITLE_CHARS)


def _extract(env: PhaseEnv, model: PhaseModel, text: SessionText, night: _Night) -> bool:
    """Ask about each chunk of one session and verify the answers; whether every chunk was answered.

    Chunks are sized to ``memhtml.llmmaxprompt`` (docs/models.md §11): first by :data:`CHARS_PER_TOKEN_FLOOR`
    characters per token of the room the request leaves, then each redacted chunk is halved until its request fits
    (:func:`split_to_fit`); the parts are numbered after the split."""
    system = load_prompt(env.repo, "trace-consolidation", prompt_values())
    instruction = load_prompt(env.repo, "trace-consolidation.task", prompt_values())

    def request(chunk: str, preamble: str) -> ModelRequest[TraceExtraction]:
        framed = key_members([Member(text.session_id, chunk)], label="transcript", member_chars=max(1, len(chunk)))
        return ModelRequest(TraceExtraction, system, framed.prompt(instruction, preamble=preamble))

    widest = "Part 999 of 999 of one session transcript:"  # no real preamble has more tokens (a digit is one token)

    def fits(chunk: str) -> bool:
        return model.tokens(request(chunk, widest)) <= model.max_prompt

    room = model.max_prompt - model.tokens(request(" ", widest))
    parts, cut = chunks(text, min(CHUNK_CHARS, room * CHARS_PER_TOKEN_FLOOR) if room > 0 else CHUNK_CHARS)
    night.truncated += int(cut)
    pieces: list[str] = []
    for part in parts:
        redaction = redact(part)
        night.redactions += redaction.count
        chunk = clean_text(redaction.text)
        pieces += split_to_fit(chunk, fits) if room > 0 else [chunk]  # no room: sent whole, refused overCap
    for index, piece in enumerate(pieces, start=1):
        preamble = f"Part {index} of {len(pieces)} of one session transcript:"
        answer = model.call(request(piece, preamble))
        if answer is None:
            return False
        night.answers += 1
        for candidate in answer.candidates:
            night.candidates += 1
            result = verify_candidate(candidate, text)
            if isinstance(result, str):
                night.refused += 1
                model.reject(result, {"session": text.session_id, "kind": candidate.kind,
                                      "claim": redact(candidate.claim).text})
            else:
                night.verified.append(result)
        for item in answer.commitments:
            _commitment(model, text, item, night)
    return True


def _commitment(model: PhaseModel, text: SessionText, item: TraceCommitment, night: _Night) -> None:
    """Verify one commitment of a session and keep it, once per statement and session (docs/phases.md §1.12).

    A statement the session already made (``norm``: case and whitespace aside, the detected task's own key) is the
    same commitment: a restatement is dropped, unless it shows the commitment *done* while the kept one is open,
    and its quote verifies: then the kept one becomes resolved. So a commitment made and closed in one session, in
    either order, in one chunk or across two, never opens a task (it only closes one an earlier night opened)."""
    said = (text.session_id, norm(item.statement))
    kept = night.stated.get(said)
    if kept is not None and kept >= 0 and (not item.resolved or night.commitments[kept].resolved):
        return
    found = verify_commitment(item, text)
    if isinstance(found, str):
        night.tally.skipped += int(kept is None)
        model.reject("commitment-" + found, {"session": text.session_id, "statement": redact(item.statement).text})
        night.stated.setdefault(said, -1)
        return
    if kept is not None and kept >= 0:
        night.commitments[kept] = replace(night.commitments[kept], resolved=True, quote=found.quote,
                                          confidence=max(found.confidence, night.commitments[kept].confidence))
        return
    night.stated[said] = len(night.commitments)
    night.commitments.append(found)


def _synthesize(env: PhaseEnv, model: PhaseModel, night: _Night) -> list[Candidate] | None:
    """The synthesis over the verified candidates (none with fewer than two): one call, or as many as
    ``memhtml.llmmaxprompt`` needs (candidates split in order, docs/models.md §11; a part of one candidate is kept
    as it is, with no call); ``None`` when a call failed (nothing is written then)."""
    if len(night.verified) < 2:
        return list(night.verified)
    system = load_prompt(env.repo, "trace-consolidation-synthesis", prompt_values())
    instruction = load_prompt(env.repo, "trace-consolidation-synthesis.task", prompt_values())

    def render(batch: KeyedBatch) -> ModelRequest[TraceSynthesis]:
        return ModelRequest(TraceSynthesis, system, rekey(batch, "c").prompt(instruction,
                                                                            preamble="Candidate memories:"))

    members = [Member(str(i), f"[{c.kind}] {c.claim}\n{c.gist}") for i, c in enumerate(night.verified)]
    out: list[Candidate] = []
    for batch, request in model.fit([[m] for m in members], render, label="candidate", member_chars=SYNTHESIS_CHARS):
        if len(batch.members) < 2:
            out += [night.verified[int(m.ref)] for m in batch.members]
            continue
        skipped = model.budget_skipped
        answer = model.call(request)
        if answer is None:
            night.synthesis_budget = model.budget_skipped > skipped
            return None
        out += _synthesized(model, night, rekey(batch, "c"), answer)
    return out


def _synthesized(model: PhaseModel, night: _Night, keyed: KeyedBatch, answer: TraceSynthesis) -> list[Candidate]:
    """The memories of one synthesis answer that pass the rails (each counted and logged)."""
    out: list[Candidate] = []
    cited: set[str] = set()
    for memory in answer.memories:
        found, unknown = keyed.resolve(memory.candidate_keys)
        for key in unknown:
            model.reject("unknown-key", {"candidateKey": str(key), "claim": redact(memory.claim).text})
        taken = [m for m in found if m.ref in cited]
        for member in taken:  # a candidate grounds one memory: a second memory on the same evidence is not grounded
            model.reject("duplicate-source", {"candidate": member.ref, "claim": redact(memory.claim).text})
        found = [m for m in found if m.ref not in cited]
        problem = candidate_problem(memory)
        if problem is not None or not found:
            night.refused += 1
            model.reject(problem or "ungrounded", {"claim": redact(memory.claim).text})
            continue
        cited.update(m.ref for m in found)
        night.merged += len(found) - 1
        out.append(merged(memory, [night.verified[int(m.ref)] for m in found]))
    return out


CAUSE_CHARS = 160
"""Characters of the first failed call's error appended to an ``unavailable`` detail (ours: a detail is one line)."""


def _with_cause(detail: str, model: PhaseModel) -> str:
    """``detail`` followed by the first failed call's error class and message, so the user sees why (the prefix
    stays the seeds' detail; the message names the endpoint, never memory text)."""
    if model.first_failure is None:
        return detail
    return f"{detail} ({clip(' '.join(model.first_failure.split()), CAUSE_CHARS)})"


def _frames(env: PhaseEnv) -> dict[str, str]:
    """frame key → path of the live memories that have one."""
    out: dict[str, str] = {}
    for row in active_corpus(env.db):
        key = frame_key_of(row.gist)
        if key is not None:
            out.setdefault(key, row.path)
    return out


def render_distilled(candidate: Candidate, title: str, *, now: str) -> str:
    """The memory file of one distilled candidate: its kind, author ``agent:sleep``, tag ``trace-consolidation``,
    its entities, the claim as the mark and the gist as the body. No quote, no session text beyond the claim.

    Raises:
        InvalidMemory: the render gate refused it (a control character, a secret).
    """
    return render_memory(MemoryDraft(
        title=title, memory_type=candidate.kind, claim=" ".join(candidate.claim.split()),
        body=(candidate.gist,), author=SLEEP_AUTHOR, entities=candidate.entities, tags=(TAG,),
    ), now=now)


def _write(env: PhaseEnv, model: PhaseModel, memories: Sequence[Candidate], night: _Night,
           steps: PhaseSteps) -> None:
    frames = _frames(env)
    taken: set[str] = set()
    for candidate in memories:
        title = title_of(candidate.claim)
        if slugify(title) == "untitled":
            night.skipped += 1
            model.reject("untitled", {"claim": redact(candidate.claim).text})
            continue
        folder = placement_for(candidate.kind, tags=(TAG,))
        path = free_memory_path(env, folder, title, taken)
        try:
            text = render_distilled(candidate, title, now=env.at)
        except InvalidMemory as exc:
            night.skipped += 1
            model.reject("render-refused", {"title": redact(title).text, "error": exc.message})
            continue
        if path is None:
            night.skipped += 1
            model.reject("no-free-path", {"title": redact(title).text})
            continue
        steps.begin({**night.counts().wire(), **usage_counts(model)})
        try:
            write_new_memory(env, path, text)
        except PathRefused as exc:
            night.skipped += 1
            model.reject("path-refused", {"path": path, "error": exc.message})
            continue
        taken.add(path)
        night.written += 1
        key = frame_key_of(" ".join(candidate.claim.split()))
        clash = frames.get(key) if key is not None else None
        if key is not None and clash is None:
            frames[key] = path
        night.conflicts += int(clash is not None)
        lines = [f"evidence {e.session_id}: {body_quote(e.quote)}" for e in candidate.evidence[:EVIDENCE_LINES]]
        if clash is not None:
            lines.append(f"frame conflict with {clash}: {clip(redact(candidate.gist).text, 200)}")
        steps.staged(f"distill{' (frame conflict)' if clash is not None else ''} {title}", "\n".join(lines))


def run(env: PhaseEnv) -> PhaseOutcome:
    """Select, read, extract, synthesise, write one commit per memory, settle commitments, mark (module docstring).

    Raises:
        StorageError: the index cannot be read. GitError / OSError: a write or a commit failed.
    """
    model = PhaseModel.for_phase(env, PHASE)
    night = _Night()
    settled = TraceTables(env.db).settled_sessions(before_ms=quiet_before_millis(env.at), min_bytes=TRACE_MIN_BYTES,
                                                   limit=TRACE_SESSIONS_CAP)
    batch = settled[:TRACE_SESSIONS_PER_RUN]
    night.sessions, night.batch = len(settled), len(batch)
    if env.services.model is None or env.dry_run:
        counts = TraceConsolidationCounts(sessions=night.sessions, batch=night.batch)
        return PhaseOutcome(counts, detail=NO_CONSOLIDATOR if env.services.model is None else DRY_RUN)
    if not batch:
        return PhaseOutcome(night.counts(), detail=NO_SESSIONS, model=model.usage())
    tables = TraceTables(env.db)
    for session in batch:
        paths = tables.session_files(session.session_id) or ([session.file.path] if session.file else [])
        text = read_session_text(session.session_id, paths)
        if text is None:
            night.unreachable += 1
            continue
        if _extract(env, model, text, night):
            night.analyzed.append(session.session_id)
    if night.answers == 0:
        reached = any(name != ModelUnavailable.__name__ for name in model.failures)
        night.analyzed.clear()
        detail = RUN_FAILED if reached else BUDGET_SPENT if model.calls == 0 and model.budget_skipped else UNAVAILABLE
        return PhaseOutcome(night.counts(), detail=_with_cause(detail, model), model=model.usage())
    memories = _synthesize(env, model, night)
    if memories is None:
        night.analyzed.clear()
        detail = BUDGET_SYNTHESIS if night.synthesis_budget else _with_cause(RUN_FAILED, model)
        return PhaseOutcome(night.counts(), detail=detail, model=model.usage())
    steps = PhaseSteps(env.repo, run_id=env.run_id, phase=PHASE)
    _write(env, model, memories, night, steps)
    if night.commitments:
        steps.begin({**night.counts().wire(), **usage_counts(model)})
        settle_commitments(env, night.commitments, night.tally)
        if night.tally.wrote:
            t = night.tally
            steps.staged(f"detect {t.tasks + t.refreshed} commitments, close {t.completions_applied} completed",
                         "\n".join(t.lines))
    env.services.ledger.extend(SessionConsolidated(sid) for sid in night.analyzed)
    stage_ledger(env)  # with the phase's last commit: a kill before the report phase keeps the marks
    return PhaseOutcome(night.counts(), subject=steps.subject or f"distill {night.written} memories",
                        body=steps.body, model=model.usage())


register(PhaseSpec(PHASE, run, TraceConsolidationCounts, model=True))
