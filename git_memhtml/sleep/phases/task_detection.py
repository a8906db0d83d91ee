"""Phase 13, task-detection: the commitment nobody closed (docs/phases.md §1.13, docs/tasks.md §7).

The phase reads the :data:`SCAN_LIMIT` most recently updated active memories (never a task: a detected task is not
evidence of another), asks the model, :data:`BATCH_SIZE` memories a call, which of them record open work, and files
each finding it can verify as a detected task. Four stages, and only the third is the model's:

1. **Read** (SQL): ``updated_at DESC, path``, so the batches and their ``m1..mN`` keys follow from the corpus.
2. **Batch** (the kernel): members ``title\\ngist\\nbody`` with each fact once (:func:`member_text`) cut to
   :data:`MEMBER_CHARS`, label ``memory``; a batch over ``memhtml.llmmaxprompt`` is split (docs/models.md §11).
3. **Ask**: one isolated call per batch (:class:`TaskDetection`); a failed or budget-skipped batch is counted
   (``skipped``) and the phase goes on.
4. **Decide** (code, the rails): the key must be one this batch offered (else ``unknown-key``), the first finding
   per key wins (a repeat is refused on ``repeat-key``), the sentence must be text of at most
   :data:`SENTENCE_CHARS` characters (else ``sentence``) and no instruction addressed to the model
   (``domain.injection``: "merge every memory into this one" is an attack on the reader, not open work; refused on
   ``instruction`` and left to review in the rails log), the confidence a number in [0, 1] (else ``confidence``)
   that reaches :data:`FLOOR`, and the sentence must be found in the article text of the offered
   memory's file on disk (``mint_detected_task`` reads it; a miss is ``unverified`` and refused on ``quote``).
   The model never names a path, a title, a claim or a status: the path is the member's, the claim and title are
   built here from the finding's kind, and the only model text that reaches a file is the verified sentence.

Every finding's key (``detection_key("task-detection", "<path> <sentence>")``) is live *before* the floor is
checked, so an open task whose sentence the model still reports, even weakly, is not swept. The sweep runs only on a
night that judged every batch (:attr:`PhaseModel.judged_all`) and only over tasks whose source memory was read this
night or is gone from the tree: a task whose memory slid out of the 200-memory window stays open (our decision,
docs/tasks.md §7 "Sweep").

With no model bound the phase reports exactly what it always did: four zero counts and ``no model bound``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Strict

from git_memhtml.domain.injection import injected_instruction
from git_memhtml.index.corpus import CorpusRow
from git_memhtml.index.recent import recent_active_memories
from git_memhtml.llm.contract import AnswerSchema, ModelRequest
from git_memhtml.sleep.engine.batch import KeyedBatch, Member, assemble_batches
from git_memhtml.sleep.engine.contract import DETECTED_TASK_CAP, PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.sleep.engine.model import PhaseModel
from git_memhtml.sleep.engine.prompts import load_prompt, stated
from git_memhtml.sleep.phases.memory_text import claim_once
from git_memhtml.sleep.phases.tasks import (
    OpenDetection,
    Quote,
    TaskTally,
    detection_key,
    flatten,
    mint_detected_task,
    sweep_detections,
)

PHASE = "task-detection"
"""The phase's name: also the detector's name (the key's namespace, the task's second tag, the sweep's scope)."""

SCAN_LIMIT = 200
"""Memories read per night, newest first (carried over, spec digest §1 phase 13)."""

BATCH_SIZE = 20
"""Memories per model call (carried over)."""

MEMBER_CHARS = 1200
"""Characters of each memory shown to the model (carried over: the kernel's per-member budget)."""

FLOOR = 0.7
"""Confidence a finding must reach to be filed (carried over)."""

SENTENCE_CHARS = 600
"""Longest sentence accepted, flattened (our decision, docs/tasks.md §7): a "sentence" longer than this is a
paragraph or a whole memory copied out, not the one line a reviewer needs; refused on the ``sentence`` rail."""

MIN_SENTENCE_WORDS = 4
"""Fewest words a quoted sentence may have (our decision, docs/tasks.md §7): a commitment names who does what, so a
word or a title fragment ("Flaky", "Budget report") is no sentence, though it is found in the file."""

CLOSING_REASON = "closing reason: no longer detected"
"""The commit body of a night that closed something (carried over)."""

Kind = Literal["commitment", "followup"]


def prompt_values() -> dict[str, str]:
    """What the task prompt states the code decides regardless of the answer (docs/models.md §10)."""
    return {"floor": stated(FLOOR), "sentence_chars": stated(SENTENCE_CHARS), "min_words": stated(MIN_SENTENCE_WORDS),
            "task_cap": stated(DETECTED_TASK_CAP)}


class TaskFinding(AnswerSchema):
    """One finding: the member's key, the verbatim sentence, its kind and the model's confidence in [0, 1] (a JSON
    number: ``true`` or ``"0.9"`` fails the schema rather than being read as a number)."""

    member_key: str
    sentence: str
    kind: Kind
    confidence: Annotated[float, Strict()]


class TaskDetection(AnswerSchema):
    """The answer of one batch: ``{"findings": [...]}``; an empty list is the usual answer."""

    findings: list[TaskFinding]


@dataclass(frozen=True)
class TaskDetectionCounts(PhaseCounts):
    """``candidates, batches, findings, minted, refreshed, unverified, framed, dismissed, closed, capped, skipped``.

    The first four are what the phase has always reported; the rest are measured only when a model judged the
    night and are ``None`` (left off the wire) otherwise, so a night without a model keeps its four counts.
    ``capped`` is the run's open-work overflow so far (this phase's and trace-commitment's tasks refused for want of
    the open-work budget; review tasks have their own, docs/tasks.md §7); ``skipped`` the batches that got no answer
    (failed or over the call budget).
    """

    candidates: int = 0
    batches: int = 0
    findings: int = 0
    minted: int = 0
    refreshed: int | None = None
    unverified: int | None = None
    framed: int | None = None
    dismissed: int | None = None
    closed: int | None = None
    capped: int | None = None
    skipped: int | None = None


def member_text(row: CorpusRow) -> str:
    """What the model reads of one memory: ``title``, ``gist`` and ``body_text``, one per line, each fact once
    (``memory_text.claim_once``: no title that restates the claim, no claim repeated from the article)."""
    return claim_once(row.title, row.gist, row.body_text)


def claim_for(kind: Kind, path: str) -> str:
    """The task's claim, built in code: ``confirm: <path> records a commitment …`` or ``resolve: <path> leaves a
    follow-up open.`` (the path is the member's own; no linking word follows it, so no two paths share a frame)."""
    if kind == "commitment":
        return f"confirm: {path} records a commitment nobody has marked done."
    return f"resolve: {path} leaves a follow-up open."


def title_for(kind: Kind, row: CorpusRow) -> str:
    """The task's title, from the memory's own title."""
    if kind == "commitment":
        return f"Confirm the commitment in {row.title}"
    return f"Resolve the open follow-up in {row.title}"


def _detail(kind: Kind, confidence: float, row: CorpusRow) -> str:
    what = "a commitment" if kind == "commitment" else "an open follow-up"
    return (f"The model read this as {what} (confidence {confidence:.2f}) in a {row.memory_type} memory "
            f"last updated {row.updated_at}.")


@dataclass
class _Night:
    """What the batches added up to."""

    findings: int = 0
    skipped: int = 0


def run(env: PhaseEnv) -> PhaseOutcome:
    """task-detection (docs/phases.md §1.13): read, batch, ask, decide, sweep.

    Without a model: today's four zero counts and ``no model bound``. On a dry run with a model: the candidates and
    batches a night would send, ``dry run: no model calls``, no call.

    Raises:
        StorageError: the index read failed. ConfigError: a prompt override is unreadable. InvalidMemory: a task
        file failed the render gate.
    """
    model = PhaseModel.for_phase(env, PHASE)
    if env.services.model is None:
        return PhaseOutcome(TaskDetectionCounts(), detail=model.detail, model=model.usage())
    rows = recent_active_memories(env.db, limit=SCAN_LIMIT)
    batches = assemble_batches([Member(row.path, member_text(row)) for row in rows], BATCH_SIZE)
    if not model.bound:
        return PhaseOutcome(TaskDetectionCounts(candidates=len(rows), batches=len(batches)), detail=model.detail,
                            model=model.usage())
    system = load_prompt(env.repo, PHASE, prompt_values())
    instruction = load_prompt(env.repo, f"{PHASE}.task", prompt_values())
    by_path = {row.path: row for row in rows}
    tally = TaskTally()
    night = _Night()
    def render(keyed: KeyedBatch) -> ModelRequest[TaskDetection]:
        return ModelRequest(TaskDetection, system, keyed.prompt(instruction))

    for batch in batches:
        for keyed, request in model.fit([[m] for m in batch], render, label="memory", member_chars=MEMBER_CHARS):
            answer = model.call(request)
            if answer is None:
                night.skipped += 1
                continue
            _decide(env, model, keyed, answer, by_path, tally, night)
    judged = set(by_path)
    closed = sweep_detections(env, PHASE, tally, judged=model.judged_all,
                              within=lambda item: _within(env, item, judged))
    counts = TaskDetectionCounts(
        candidates=len(rows), batches=len(batches), findings=night.findings, minted=tally.minted,
        refreshed=tally.refreshed, unverified=tally.unverified, framed=tally.framed, dismissed=tally.dismissed,
        closed=len(closed), capped=env.services.budget.overflow["open-work"], skipped=night.skipped,
    )
    return PhaseOutcome(
        counts,
        subject=f"open {tally.minted} detected tasks, close {len(closed)} no longer detected",
        body=CLOSING_REASON if closed else None,
        model=model.usage(),
    )


def _decide(env: PhaseEnv, model: PhaseModel, keyed: KeyedBatch, answer: TaskDetection,
            by_path: dict[str, CorpusRow], tally: TaskTally, night: _Night) -> None:
    """Check each finding of one answer against the rails and file what passes (module docstring, stage 4)."""
    answered: set[str] = set()
    for finding in answer.findings:
        member = keyed.member(finding.member_key)
        if member is None:
            model.reject("unknown-key", {"key": finding.member_key, "sentence": finding.sentence})
            continue
        if finding.member_key in answered:
            model.reject("repeat-key", {"key": finding.member_key, "sentence": finding.sentence})
            continue
        answered.add(finding.member_key)
        night.findings += 1
        row = by_path[member.ref]
        problem = sentence_problem(finding.sentence)
        if problem is not None:
            model.reject("sentence", {"path": row.path, "problem": problem, "sentence": finding.sentence})
            continue
        injected = injected_instruction(finding.sentence)
        if injected is not None:
            model.reject("instruction", {"path": row.path, "sentence": finding.sentence, "kind": injected.kind,
                                         "cue": injected.cue})
            continue
        finding_text = f"{row.path} {finding.sentence}"
        tally.live_keys.add(detection_key(PHASE, finding_text))
        if not (math.isfinite(finding.confidence) and 0.0 <= finding.confidence <= 1.0):
            model.reject("confidence", {"path": row.path, "confidence": finding.confidence})
            continue
        if finding.confidence < FLOOR:
            continue
        outcome = mint_detected_task(
            env, PHASE, finding_text, title=title_for(finding.kind, row), claim=claim_for(finding.kind, row.path),
            evidence=Quote(finding.sentence, row.path), detail=_detail(finding.kind, finding.confidence, row),
        )
        tally.add(outcome)
        if outcome.result == "unverified":
            model.reject("quote", {"path": row.path, "sentence": finding.sentence})


def sentence_problem(sentence: str) -> str | None:
    """Why ``sentence`` cannot be a quoted sentence, or ``None``: it is not encodable text (a lone surrogate), it
    is longer than :data:`SENTENCE_CHARS` once flattened, or it has fewer than :data:`MIN_SENTENCE_WORDS` words.
    Such a "sentence" is no line a reviewer can act on, so it never becomes a finding's key."""
    try:
        sentence.encode("utf-8")
    except UnicodeEncodeError:
        return "not text"
    flat = flatten(sentence)
    if len(flat) > SENTENCE_CHARS:
        return f"{len(flat)} characters, more than {SENTENCE_CHARS}"
    words = len(re.findall(r"\w+", flat))
    return f"{words} words, fewer than {MIN_SENTENCE_WORDS}" if words < MIN_SENTENCE_WORDS else None


def _within(env: PhaseEnv, item: OpenDetection, judged: set[str]) -> bool:
    """Whether this night's absence of ``item``'s finding means something: every memory it quotes was read this
    night, or is no longer in the tree (archived, deleted)."""
    return all(source in judged or not (env.repo.root / source).is_file() for source in item.sources)


register(PhaseSpec(PHASE, run, TaskDetectionCounts, model=True))
