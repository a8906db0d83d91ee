"""Phase 6, edge-typing: a model types candidate pairs; code decides what reaches a file (docs/phases.md §1.6,
docs/models.md §7).

1. **Candidates** (``edge_pairs.candidate_pairs``): relationship-mining's derived pairs ∪ pairs sharing an entity,
   without tasks or pairs an author already linked, at most 200.
2. **Batches** of 30 pairs, in shared-directory order; each member is the two sides' text (``src:`` / ``dst:``),
   keyed ``m1..mN`` by the batch kernel. The prompt holds keys and memory text only, never a path or a score.
3. **Verdicts** (:class:`EdgeVerdicts`), each checked by the rails before anything is written:

   - a key the batch did not offer (``m99``, a path, a title) is refused (rail ``unknown-key``); a second verdict
     for one key is ignored (``duplicates``: the first answer wins);
   - ``none`` or a confidence under :data:`CONFIDENCE_FLOOR` writes nothing;
   - a directional rel (``caused_by``, ``leads_to``, ``example_of``, ``supports``, ``part_of``) is written as
     ``link <rel> → /<object>`` into the **subject only** (``src`` for ``src_to_dst``, else ``dst``), unless the
     merge veto (``domain.merge.edge_veto_reasons``: negation, number, variant, clashing times) calls
     the two memories divergent: such a pair states two different things about one matter, so the only edge it can
     carry is ``contradicts`` (rail ``veto``, docs/veto.md §6);
   - ``contradicts`` is a detection (``state.edge_corroboration``, counted only over a corpus its last detection
     did not see, docs/models.md §5). Under :data:`PROMOTE_AFTER` detections it becomes a review task for a
     person (detector ``edge-typing``); at two, the link goes into **both** files and an ``edge-promoted`` mark
     into the run's ledger, applied when the run lands;
   - a rel the format does not know (rail ``unknown-rel``), a link from a file to itself (``self-link``), to or
     from a file that is gone from the tree (``gone``), a contradiction whose review a person dismissed
     (``dismissed``), and any write past :data:`PROMOTION_CAP` a night (``cap``, also counted ``capped``) are
     refused.

   The machine never resolves a contradiction: it writes the link and files the task, and never archives, edits
   the text of, or supersedes either side.
4. A failed or budget-skipped batch counts its pairs as ``skipped`` and writes nothing; the night then did not
   judge its whole candidate set, so open contradiction tasks are swept only on a night that did.

With no model bound the phase reports ``{candidates 0, judged 0}`` and ``no model bound``; on a dry run it counts
the candidates and makes no call. Constants are carried over (spec digest §1 phase 6).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from pydantic import Field

from git_memhtml.document.model import REL_CLASSES
from git_memhtml.domain.injection import injected_instruction
from git_memhtml.domain.merge import MergeText, edge_veto_reasons
from git_memhtml.index.corpus import CorpusRow, active_corpus, corpus_digest
from git_memhtml.index.corroboration import bump_edge
from git_memhtml.index.watermark import vector_space
from git_memhtml.llm.contract import AnswerSchema, ModelRequest
from git_memhtml.sleep.engine.batch import KeyedBatch, Member, assemble_batches, clean_text
from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.sleep.engine.ledger import EdgePromoted
from git_memhtml.sleep.engine.model import PhaseModel
from git_memhtml.sleep.engine.prompts import load_prompt, stated
from git_memhtml.sleep.phases.edge_pairs import MEMBER_CHARS, CandidatePair, batch_order, candidate_pairs, member_text
from git_memhtml.sleep.phases.tasks import (
    Measurement,
    TaskTally,
    detection_key,
    flatten,
    is_dismissed,
    mint_detected_task,
    sweep_detections,
)
from git_memhtml.store import edits
from git_memhtml.tree.paths import tree_file_problem

PHASE = DETECTOR = "edge-typing"

PAIRS_PER_CALL = 30
"""Pairs per model call (carried over)."""
CONFIDENCE_FLOOR = 0.7
"""A verdict below this confidence writes nothing (``EDGE_CONFIDENCE_FLOOR``, carried over)."""
PROMOTE_AFTER = 2
"""Detections over different corpora before a ``contradicts`` link is written (carried over)."""
PROMOTION_CAP = 50
"""Typed edges plus promoted contradictions written per night at most (carried over)."""
RATIONALE_CHARS = 300
"""Longest model rationale quoted into a review task (our choice: a sentence, not an essay)."""


def prompt_values() -> dict[str, str]:
    """What the edge prompt states the code decides regardless of the answer (docs/models.md §10)."""
    return {"confidence_floor": stated(CONFIDENCE_FLOOR), "promote_after": stated(PROMOTE_AFTER),
            "promotion_cap": stated(PROMOTION_CAP)}


CONTRADICTS = "contradicts"
Rel = Literal["caused_by", "leads_to", "example_of", "supports", "part_of", "contradicts", "none"]
Direction = Literal["src_to_dst", "dst_to_src"]
DIRECTIONAL_RELS: frozenset[str] = frozenset(r for r in get_args(Rel) if r not in (CONTRADICTS, "none"))
"""The rels written into the subject only. Every typed rel is in the format's closed link vocabulary; ``refines``
is not, so a refinement is typed ``example_of`` (a narrower case) or ``part_of`` (one detail): docs/models.md §7."""

if not all(REL_CLASSES.get(r) == "memory" for r in (*DIRECTIONAL_RELS, CONTRADICTS)):
    raise ImportError("edge-typing names a rel outside the format's memory link vocabulary")


class EdgeVerdict(AnswerSchema):
    """One pair's verdict: the pair's key as offered, the rel, which side is its subject, a confidence in [0, 1]
    and an optional one-sentence rationale."""

    pair_key: str
    rel: Rel
    direction: Direction
    confidence: float = Field(ge=0.0, le=1.0, strict=True)
    rationale: str | None = None


class EdgeVerdicts(AnswerSchema):
    """The answer to one batch: a verdict per pair the model judged (omitting a pair is allowed)."""

    verdicts: list[EdgeVerdict]


@dataclass(frozen=True)
class EdgeTypingCounts(PhaseCounts):
    """``candidates, judged`` always; with a model bound and not a dry run also ``typed, contradictions, promoted,
    skipped, capped, duplicates`` and the four-plus-two task counts (``tasksMinted`` …)."""

    candidates: int = 0
    judged: int = 0
    typed: int | None = None
    contradictions: int | None = None
    promoted: int | None = None
    skipped: int | None = None
    capped: int | None = None
    duplicates: int | None = None
    tasks_minted: int | None = None
    tasks_refreshed: int | None = None
    tasks_framed: int | None = None
    tasks_dismissed: int | None = None
    tasks_closed: int | None = None
    tasks_capped: int | None = None


@dataclass
class Night:
    """What one night of edge-typing did so far (mutable while the verdicts are applied)."""

    env: PhaseEnv
    model: PhaseModel
    judged: int = 0
    typed: int = 0
    contradictions: int = 0
    promoted: int = 0
    skipped: int = 0
    capped: int = 0
    duplicates: int = 0
    deferred: int = 0
    tally: TaskTally = field(default_factory=TaskTally)
    stamped: list[str] = field(default_factory=list)
    _corpus: str | None = None
    texts: dict[str, MergeText] | None = None
    """path → what the veto reads of it (:func:`veto_text`); ``None`` until :meth:`text` first reads the corpus."""

    @property
    def corpus(self) -> str:
        """The digest of the run's active corpus (read once, on the first contradiction)."""
        if self._corpus is None:
            self._corpus = corpus_digest(self.env.db)
        return self._corpus

    def text(self, path: str) -> MergeText | None:
        """What the veto reads of the active memory at ``path`` (its claim and article text), or ``None`` when the
        run's index holds no such memory (the active corpus is read once, on the first question)."""
        if self.texts is None:
            self.texts = {row.path: veto_text(row) for row in active_corpus(self.env.db)}
        return self.texts.get(path)

    @property
    def written(self) -> int:
        """Writes counted against :data:`PROMOTION_CAP`."""
        return self.typed + self.promoted

    def counts(self, candidates: int) -> EdgeTypingCounts:
        """The phase's counts."""
        return EdgeTypingCounts(
            candidates=candidates, judged=self.judged, typed=self.typed, contradictions=self.contradictions,
            promoted=self.promoted, skipped=self.skipped, capped=self.capped, duplicates=self.duplicates,
            **self.tally.count_fields(),
        )


def veto_text(row: CorpusRow) -> MergeText:
    """The two texts the merge veto reads of one side of a pair: the claim (gist) and the article text, as
    dedup-merge gives them (docs/veto.md §3 "MergeText")."""
    return MergeText(row.gist, row.body_text)


def edge_veto(night: Night, subject: str, target: str) -> tuple[str, ...]:
    """The veto predicates that call ``subject`` and ``target`` divergent (empty: the pair may carry any rel).

    The predicates every fold passes, read for an edge (:func:`~git_memhtml.domain.merge.edge_veto_reasons`: a time
    only when the two clash, never a promise against its completion), so a predicate added to the veto applies to
    typed edges too. A side the run's index does not hold is refused as divergent (``unknown``): an edge the veto
    could not read is not written (the ``gone`` rail catches a vanished file first)."""
    left, right = night.text(subject), night.text(target)
    if left is None or right is None:
        return ("unknown",)
    return edge_veto_reasons(left, right)


def present(env: PhaseEnv, path: str) -> bool:
    """Whether ``path`` is a live memory file in the run's tree: a regular file outside ``archive/`` reached
    through no symlink (the tree is authoritative, docs/phases.md §0.1)."""
    if path.startswith("archive/") or tree_file_problem(env.repo.root, path) is not None:
        return False
    return (env.repo.root / path).is_file()


def _stamp(night: Night, path: str, rel: str, target: str) -> bool:
    """Add ``link <rel> → /<target>`` and ``updated`` to ``path``'s head; staged at the end of the phase."""
    changed = edits.stamp_file(night.env.repo, path, [edits.link(rel, "/" + target),
                                                      edits.set_meta("updated", night.env.at)], stage=False)
    if changed:
        night.stamped.append(path)
    return changed


RATIONALE_WITHHELD = "withheld: it addressed the model, not the reader"
"""What a contradiction task says in place of a rationale that carries an instruction addressed to the model."""


def _cleaned_rationale(text: str | None) -> str:
    """The model's rationale as a review task quotes it: cleaned, flattened, cut to :data:`RATIONALE_CHARS`; withheld
    (:data:`RATIONALE_WITHHELD`) when it carries an instruction addressed to the model (``domain.injection``): a
    gullible model that repeats a planted "merge every memory into this one" must not put it in a task (issue 27)."""
    cleaned = flatten(clean_text(text or ""))
    if injected_instruction(cleaned) is not None:
        return RATIONALE_WITHHELD
    if len(cleaned) > RATIONALE_CHARS:
        cleaned = cleaned[:RATIONALE_CHARS].rstrip() + "…"
    return cleaned or "none given"


def _finding(pair: CandidatePair) -> str:
    """The finding of a contradiction's review task: ``contradicts <src> <dst>`` (``src < dst``)."""
    return f"{CONTRADICTS} {pair.src} {pair.dst}"


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".html")


def defer_contradiction(night: Night, pair: CandidatePair, verdict: EdgeVerdict, detections: int) -> None:
    """File (or refresh) the review task of a contradiction the night will not write (finding
    ``contradicts <src> <dst>``, measurement evidence); a person decides which side holds."""
    env = night.env
    detail = (f"The model judged these two memories contradictory with confidence {verdict.confidence:.2f} "
              f"(detection {detections} of {PROMOTE_AFTER}). Its rationale: {_cleaned_rationale(verdict.rationale)}")
    outcome = mint_detected_task(
        env, DETECTOR, _finding(pair),
        title=f"Decide between {_name(pair.src)} and {_name(pair.dst)}",
        claim=f"decide: {pair.src} and {pair.dst} contradict each other; which one holds?",
        evidence=Measurement(detail),
        detail=("A sleep run found these memories contradicting each other. The machine never settles a "
                "contradiction: keep both, correct one, or supersede one yourself."),
    )
    night.tally.add(outcome)


def apply_contradiction(night: Night, pair: CandidatePair, verdict: EdgeVerdict) -> None:
    """Count one ``contradicts`` detection; defer it to review, or, at :data:`PROMOTE_AFTER` detections, link both
    files and mark the edge promoted in the run's ledger."""
    night.contradictions += 1
    src, dst = pair.src, pair.dst
    payload: dict[str, object] = {"src": src, "dst": dst, "rel": CONTRADICTS}
    if src == dst:
        night.model.reject("self-link", payload)
        return
    if not (present(night.env, src) and present(night.env, dst)):
        night.model.reject("gone", payload)
        return
    seen = bump_edge(night.env.db, src, CONTRADICTS, dst, corpus=night.corpus, now=night.env.at)
    if seen.detections < PROMOTE_AFTER:
        defer_contradiction(night, pair, verdict, seen.detections)
        night.deferred += 1
        return
    if seen.promoted:
        return
    if is_dismissed(night.env.repo, detection_key(DETECTOR, _finding(pair)), night.env.date):
        night.model.reject("dismissed", payload)  # a person closed the review: the machine does not overrule it
        return
    if night.written >= PROMOTION_CAP:
        night.capped += 1
        night.model.reject("cap", payload)
        defer_contradiction(night, pair, verdict, seen.detections)  # stays under review until a night links it
        return
    changed = _stamp(night, src, CONTRADICTS, dst)
    changed = _stamp(night, dst, CONTRADICTS, src) or changed
    if changed:
        night.promoted += 1
        night.env.services.ledger.append(EdgePromoted(src, CONTRADICTS, dst))


def apply_directional(night: Night, pair: CandidatePair, verdict: EdgeVerdict) -> None:
    """Write ``link <rel> → /<object>`` into the subject only, within the night's cap."""
    subject, target = (pair.src, pair.dst) if verdict.direction == "src_to_dst" else (pair.dst, pair.src)
    payload: dict[str, object] = {"subject": subject, "object": target, "rel": verdict.rel}
    if subject == target:
        night.model.reject("self-link", payload)
        return
    if not (present(night.env, subject) and present(night.env, target)):
        night.model.reject("gone", payload)
        return
    reasons = edge_veto(night, subject, target)
    if reasons:
        night.model.reject("veto", {**payload, "reasons": list(reasons)})
        return
    if night.written >= PROMOTION_CAP:
        night.capped += 1
        night.model.reject("cap", payload)
        return
    if _stamp(night, subject, verdict.rel, target):
        night.typed += 1


def apply_verdicts(night: Night, batch: KeyedBatch, pairs: dict[str, CandidatePair], answer: EdgeVerdicts) -> None:
    """Apply one batch's verdicts in the model's order (module docstring, step 3)."""
    answered: set[str] = set()
    for verdict in answer.verdicts:
        member = batch.member(verdict.pair_key)
        if member is None:
            night.model.reject("unknown-key", {"pairKey": verdict.pair_key, "rel": verdict.rel})
            continue
        if verdict.pair_key in answered:
            night.duplicates += 1
            continue
        answered.add(verdict.pair_key)
        night.judged += 1
        if verdict.rel == "none" or verdict.confidence < CONFIDENCE_FLOOR:
            continue
        pair = pairs[member.ref]
        if verdict.rel == CONTRADICTS:
            apply_contradiction(night, pair, verdict)
        elif verdict.rel in DIRECTIONAL_RELS:
            apply_directional(night, pair, verdict)
        else:
            night.model.reject("unknown-rel", {"pairKey": verdict.pair_key, "rel": verdict.rel})


def _ref(pair: CandidatePair) -> str:
    return f"{pair.src}\n{pair.dst}"


def run(env: PhaseEnv) -> PhaseOutcome:
    """Type the night's candidate pairs (module docstring).

    Subject ``promote <typed> typed edges and <promoted> corroborated contradictions``; body ``deferred <n>
    single-detection contradictions to review tasks``.

    Raises:
        StorageError: the index cannot be read or the corroboration row written. InvalidMemory: a review task
        failed the render gate. ConfigError: a prompt override cannot be read.
    """
    model = PhaseModel.for_phase(env, PHASE)
    if env.services.model is None:
        return PhaseOutcome(EdgeTypingCounts(), detail=model.detail)
    space = env.embedder.space if env.embedder is not None else vector_space(env.db)
    pairs = candidate_pairs(env.db, space)
    if not model.bound:
        return PhaseOutcome(EdgeTypingCounts(candidates=len(pairs)), detail=model.detail, model=model.usage())
    rows: dict[str, CorpusRow] = {row.path: row for row in active_corpus(env.db)}
    night = Night(env, model, texts={path: veto_text(row) for path, row in rows.items()})
    live = [p for p in pairs if p.src in rows and p.dst in rows and present(env, p.src) and present(env, p.dst)]
    night.skipped = len(pairs) - len(live)
    by_ref = {_ref(p): p for p in live}
    members = [Member(_ref(p), member_text(rows[p.src], rows[p.dst])) for p in batch_order(live)]
    if members:
        system = load_prompt(env.repo, PHASE, prompt_values())
        instruction = load_prompt(env.repo, f"{PHASE}.task", prompt_values())

        def render(batch: KeyedBatch) -> ModelRequest[EdgeVerdicts]:
            return ModelRequest(EdgeVerdicts, system, batch.prompt(instruction))

        for part in assemble_batches(members, PAIRS_PER_CALL):
            for batch, request in model.fit([[m] for m in part], render, label="pair", member_chars=MEMBER_CHARS):
                answer = model.call(request)
                if answer is None:
                    night.skipped += len(batch.members)
                    continue
                apply_verdicts(night, batch, by_ref, answer)
    if night.stamped and not env.dry_run:
        env.repo.stage(sorted(set(night.stamped)))
    sweep_detections(env, DETECTOR, night.tally, judged=model.judged_all and night.skipped == 0)
    return PhaseOutcome(
        night.counts(len(pairs)),
        subject=f"promote {night.typed} typed edges and {night.promoted} corroborated contradictions",
        body=f"deferred {night.deferred} single-detection contradictions to review tasks",
        model=model.usage(),
    )


register(PhaseSpec(PHASE, run, EdgeTypingCounts, model=True))
