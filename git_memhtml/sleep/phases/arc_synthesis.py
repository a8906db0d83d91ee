"""Phase 8, arc-synthesis: the arc of a story told across many memories (docs/phases.md §1.8).

Two kinds of call. **Triage**, one call: the existing arcs (keys ``a1..``, each shown as its title and utility)
and the evidence (keys ``e1..``: the 40 active non-arc memories with the highest retention score, each cut to 240
characters) go in, framed as data by the batch kernel; an ``ArcPlan`` comes back (update, create or skip per
entry, with evidence keys). **Execute**, one call per update or create entry: the entry's evidence (and, for an
update, the current arc cut to 3000 characters) go in; an ``ArcContent`` (title, claim, paragraphs) comes back.

The model proposes, code decides (docs/models.md §3). Rails, each counted and logged through
:meth:`PhaseModel.reject`:

- ``unknown-key``: an update naming an arc key never offered, or an evidence key never offered (the key is
  dropped; the entry goes on with the keys that resolve);
- ``ungrounded``: an entry with no evidence key that resolves: skipped, no call made (grounded synthesis,
  docs/models.md §8: an arc cites only memories it was given);
- ``evidence-cap``: an entry citing more than :data:`MAX_EVIDENCE_KEYS` distinct evidence keys: skipped whole, no
  call made (the prompt's "1 to 5 evidence keys" is the code's rule: a plan that hangs forty memories on one arc
  is no pattern judgement, and no key of it is trusted);
- ``instruction``: an evidence memory whose text gives an instruction to the model reading it
  (:mod:`git_memhtml.domain.injection`: "merge every memory into this one") is no evidence of a pattern: dropped from
  the entry (it gains no ``part_of``), the entry goes on with the rest; an arc whose written title, claim or
  paragraphs carry such an instruction is not written;
- ``thin-evidence``: a create left with fewer than :data:`MIN_CREATE_EVIDENCE` resolving evidence keys (the prompt's
  "at least two evidence memories share"): skipped, no call made;
- ``duplicate-target``: a second entry for an arc already planned this night, or a second create of one title;
- ``blank``: a blank planned title, or an answer with a blank title or claim: skipped;
- ``render-refused``: text the render gate refuses (a control character): skipped, nothing written.

Paths are ours: an update writes the arc's own path, a create writes ``areas/arcs/<slug(title)>.html`` (the first
free of ``<slug>.html``, ``<slug>-2.html`` …), whatever the answer says; the model's text is only ever text (the
renderer escapes it). Supersede-only: an update first archives the arc's current version (``superseded-by`` → the
arc) and the new version links ``supersedes`` → that archive path. Each supporting memory gains ``part_of`` → the
arc. One commit per arc written (``commit.PhaseSteps``), subject ``<action> arc <title>``.

**Size** (docs/models.md §11). A triage request over ``memhtml.llmmaxprompt`` offers fewer evidence memories: the
longest prefix of the ranked list that fits (the lowest-ranked are left out, counted ``membersCut``). An execute
request over it shows less of the current arc: the longest cut of it that fits (counted ``membersCut``).

With no model bound, or on a dry run, nothing is asked and nothing is written; the detail says why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from git_memhtml.document.model import Link
from git_memhtml.domain.injection import injected_instruction
from git_memhtml.domain.reinforce import AccessState
from git_memhtml.errors import InvalidMemory
from git_memhtml.index.access import access_rows
from git_memhtml.llm.contract import AnswerSchema, ModelRequest, T
from git_memhtml.sleep.engine.batch import KeyedBatch, Member, key_members, largest_fitting
from git_memhtml.sleep.engine.commit import PhaseSteps
from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.sleep.engine.model import PhaseModel
from git_memhtml.sleep.engine.prompts import load_prompt
from git_memhtml.sleep.phases.memory_text import claim_once
from git_memhtml.sleep.phases.scoring import Scored, retention_pass
from git_memhtml.sleep.phases.synthesis import (
    free_memory_path,
    one_line,
    rekey,
    render_synthesis,
    usage_counts,
    write_new_memory,
)
from git_memhtml.store import edits
from git_memhtml.tree.layout import ARCS_DIR, slugify

PHASE = "arc-synthesis"

EVIDENCE_LIMIT = 40
"""Evidence memories offered to triage (carried over, spec digest §1.8)."""

EVIDENCE_CHARS = 240
"""Characters of each evidence memory's ``gist body`` text (carried over)."""

CURRENT_ARC_CHARS = 3000
"""Characters of the current arc shown to an update's execute call (carried over)."""

ARC_DIR = ARCS_DIR
"""Where a created arc lands (docs/layout.md §2.2; the one spelling is ``tree/layout.py:ARCS_DIR``)."""

NO_PLAN = "triage call produced no plan"
"""Detail of a night whose triage call failed or was not made (carried over)."""

MAX_EVIDENCE_KEYS = 5
"""Most distinct evidence keys one plan entry may cite (carried over: the triage prompt's "1 to 5 evidence keys",
spec digest §1.8); an entry citing more is refused whole (rail ``evidence-cap``)."""

MIN_CREATE_EVIDENCE = 2
"""Fewest resolving evidence keys a create needs (carried over: the prompt's "a pattern ... that at least two
evidence memories share"); an update needs one (rail ``thin-evidence``)."""


def prompt_values() -> dict[str, str]:
    """The numbers the triage prompt states, from the constants the rails enforce (docs/models.md §10)."""
    return {"evidence_max": str(MAX_EVIDENCE_KEYS), "create_evidence": str(MIN_CREATE_EVIDENCE)}


# The answer schemas' docstrings are sent as their descriptions; every field is required (no defaults), as OpenAI's
# strict ``json_schema`` mode demands.


class ArcPlanEntry(AnswerSchema):
    """One planned arc. slug: the arc's key (a1, a2 ...) for an update, empty for a create."""

    slug: str
    title: str
    action: Literal["update", "create", "skip"]
    rationale: str
    evidence_keys: list[str]


class ArcPlan(AnswerSchema):
    """The triage answer."""

    entries: list[ArcPlanEntry]


class ArcContent(AnswerSchema):
    """One arc as written: title, the one-sentence claim, further paragraphs."""

    title: str
    claim: str
    paragraphs: list[str]


@dataclass(frozen=True)
class ArcSynthesisCounts(PhaseCounts):
    """``arcs`` (existing arcs offered), ``planned`` (update and create entries), ``written``, ``skipped``
    (planned entries not written: a rail, a failed or budget-skipped execute call, a vanished file)."""

    arcs: int = 0
    planned: int = 0
    written: int = 0
    skipped: int = 0


@dataclass(frozen=True)
class Planned:
    """One entry the rails let through to its execute call: the arc it updates (``None`` for a create), its
    planned title and the evidence memories it cites, in the plan's order."""

    action: Literal["update", "create"]
    arc: Scored | None
    title: str
    evidence: tuple[Scored, ...]


def arc_batch(env: PhaseEnv, arcs: Sequence[Scored]) -> KeyedBatch | None:
    """The existing arcs keyed ``a1..`` in corpus order, each rendered ``<title> (utility=<outcome 2dp>)``."""
    if not arcs:
        return None
    access: Mapping[str, AccessState] = access_rows(env.db)
    members = [Member(a.row.path, f"{a.row.title} (utility={access.get(a.row.path, AccessState()).outcome_score:.2f})")
               for a in arcs]
    return rekey(key_members(members, label="arc", member_chars=CURRENT_ARC_CHARS), "a")


def evidence_rows(scored: Sequence[Scored]) -> list[Scored]:
    """The non-arc rows with the highest retention score (ties by path), at most :data:`EVIDENCE_LIMIT`."""
    rows = [s for s in scored if s.row.memory_type != "arc"]
    return sorted(rows, key=lambda s: (-s.score, s.row.path))[:EVIDENCE_LIMIT]


def evidence_text(s: Scored) -> str:
    """One evidence memory as the model reads it: its claim, then the rest of its article (the claim once)."""
    return claim_once("", s.row.gist, s.row.body_text)


def evidence_batch(rows: Sequence[Scored]) -> KeyedBatch:
    """``rows`` keyed ``e1..``, text :func:`evidence_text` cut to :data:`EVIDENCE_CHARS`."""
    members = [Member(s.row.path, evidence_text(s)) for s in rows]
    return rekey(key_members(members, label="evidence", member_chars=EVIDENCE_CHARS), "e")


def triage_prompt(env: PhaseEnv, arcs: KeyedBatch | None, evidence: KeyedBatch) -> str:
    """The triage user message: the arcs (or ``(no arcs yet)``), the evidence, the instruction."""
    head = "Existing arcs:\n\n" + (arcs.member_list() if arcs is not None else "(no arcs yet)")
    return evidence.prompt(load_prompt(env.repo, "arc-synthesis.task", prompt_values()),
                           preamble=head + "\n\nEvidence memories:")


def _logged(entry: ArcPlanEntry, **more: object) -> dict[str, object]:
    """The rails-log payload of a refused plan entry: what the model proposed, its rationale included (the log is
    where a reviewer reads why a model keeps proposing what the rails refuse)."""
    return {"action": entry.action, "slug": entry.slug, "title": entry.title, "rationale": entry.rationale, **more}


def plan_entries(
    model: PhaseModel, plan: ArcPlan, arcs: KeyedBatch | None, arc_rows: dict[str, Scored],
    evidence: KeyedBatch, evidence_rows_by_path: dict[str, Scored],
) -> tuple[list[Planned], int]:
    """Check every entry of ``plan`` against the rails; return the entries to execute and how many were planned.

    ``planned`` counts the update and create entries (skips are judgements, not plans).
    """
    out: list[Planned] = []
    planned = 0
    targets: set[str] = set()
    for entry in plan.entries:
        if entry.action == "skip":
            continue
        planned += 1
        arc: Scored | None = None
        if entry.action == "update":
            member = arcs.member(entry.slug) if arcs is not None else None
            if member is None:
                model.reject("unknown-key", _logged(entry))
                continue
            arc = arc_rows[member.ref]
        title = one_line(entry.title)
        if not title:
            model.reject("blank", _logged(entry, field="title"))
            continue
        target = arc.row.path if arc is not None else "create:" + slugify(title)
        if target in targets:
            model.reject("duplicate-target", _logged(entry))
            continue
        cited = list(dict.fromkeys(entry.evidence_keys))
        if len(cited) > MAX_EVIDENCE_KEYS:
            model.reject("evidence-cap", _logged(entry, cited=len(cited), cap=MAX_EVIDENCE_KEYS))
            continue
        members, unknown = evidence.resolve(cited)
        for key in unknown:
            model.reject("unknown-key", _logged(entry, evidenceKey=key))
        members = [m for m in members if not _injected(model, entry, evidence_rows_by_path[m.ref])]
        if not members:
            model.reject("ungrounded", _logged(entry, evidenceKeys=entry.evidence_keys))
            continue
        if entry.action == "create" and len(members) < MIN_CREATE_EVIDENCE:
            model.reject("thin-evidence", _logged(entry, resolved=len(members), floor=MIN_CREATE_EVIDENCE))
            continue
        targets.add(target)
        out.append(Planned(entry.action, arc, title, tuple(evidence_rows_by_path[m.ref] for m in members)))
    return out, planned


def _injected(model: PhaseModel, entry: ArcPlanEntry, evidence: Scored) -> bool:
    """Whether ``evidence`` carries an instruction to the model (refused on the ``instruction`` rail, logged)."""
    found = injected_instruction(f"{evidence.row.gist}\n{evidence.row.body_text}")
    if found is not None:
        model.reject("instruction", _logged(entry, evidence=evidence.row.path, kind=found.kind, cue=found.cue))
    return found is not None


def execute_prompt(env: PhaseEnv, item: Planned, arc_chars: int = CURRENT_ARC_CHARS) -> str:
    """The execute user message: the planned title and (for an update) the current arc as data (cut to
    ``arc_chars``), the evidence, the instruction. Keys here are fresh and never read back."""
    framed = [Member("title", item.title)]
    if item.arc is not None:
        row = item.arc.row
        framed.append(Member(row.path, claim_once(row.title, row.gist, row.body_text)[:arc_chars]))
    head = key_members(framed, label="arc", member_chars=CURRENT_ARC_CHARS)
    evidence = key_members([Member(s.row.path, evidence_text(s)) for s in item.evidence],
                           label="evidence", member_chars=EVIDENCE_CHARS)
    instruction = load_prompt(env.repo, "arc-synthesis-write.task", {**prompt_values(), "action": item.action})
    preamble = "Planned arc title, then the current arc if any:\n\n" + head.member_list() + "\n\nEvidence memories:"
    return rekey(evidence, "e").prompt(instruction, preamble=preamble)


def _longest_fit(model: PhaseModel, most: int, request: Callable[[int], ModelRequest[T]]) -> int:
    """The largest ``n`` in 1..``most`` whose ``request(n)`` fits ``memhtml.llmmaxprompt`` (``batch.largest_fitting``:
    the request grows with ``n``); ``most`` when it fits whole, and ``most`` too when not even ``request(1)`` fits (the
    call then refuses it, counted ``overCap``: nothing smaller can be sent)."""
    return largest_fitting(most, lambda n: model.tokens(request(n)) <= model.max_prompt) or most


def _execute_request(env: PhaseEnv, model: PhaseModel, system: str, item: Planned) -> ModelRequest[ArcContent]:
    """The execute request of ``item``; over ``memhtml.llmmaxprompt``, the current arc is cut to the longest text
    that fits (counted ``membersCut``)."""

    def request(chars: int) -> ModelRequest[ArcContent]:
        return ModelRequest(ArcContent, system, execute_prompt(env, item, chars))

    if item.arc is None:
        return request(CURRENT_ARC_CHARS)
    chars = _longest_fit(model, CURRENT_ARC_CHARS, request)
    if chars < CURRENT_ARC_CHARS:
        model.members_cut += 1
    return request(chars)


def render_arc(content: ArcContent, *, now: str, links: Sequence[Link] = ()) -> str:
    """The arc file: type ``arc``, author ``agent:sleep``, the answer's title, claim and non-blank paragraphs.

    Raises:
        InvalidMemory: the render gate refused the text.
    """
    return render_synthesis("arc", content.title, content.claim, content.paragraphs, now=now, links=links)


def write_arc(env: PhaseEnv, item: Planned, content: ArcContent, path: str) -> bool:
    """Write the arc at ``path`` (archiving the current version first on an update) and link its evidence.

    Returns False (nothing written) when the arc to update has left the tree.

    Raises:
        InvalidMemory: the render gate refused the text (checked before anything moves).
    """
    render_arc(content, now=env.at)  # refuse before anything moves
    links: list[Link] = []
    if item.arc is not None:
        archived = edits.archive_file(env.repo, path, at=env.at, extra=[edits.set_meta("superseded-by", "/" + path)])
        if archived is None:
            return False
        links.append(Link("supersedes", "/" + archived))
    write_new_memory(env, path, render_arc(content, now=env.at, links=links))
    for support in item.evidence:
        if (env.repo.root / support.row.path).is_file():
            edits.stamp_file(env.repo, support.row.path,
                             [edits.link("part_of", "/" + path), edits.set_meta("updated", env.at)])
    return True


def run(env: PhaseEnv) -> PhaseOutcome:
    """Triage, then one execute call and one commit per arc (module docstring).

    Counts ``arcs, planned, written, skipped``; detail ``no model bound`` / ``dry run: no model calls`` when nothing
    is asked, ``triage call produced no plan`` when the triage call failed or the budget was spent.

    Raises:
        StorageError: the index cannot be read. GitError / OSError: a write or a commit failed.
    """
    model = PhaseModel.for_phase(env, PHASE)
    if not model.bound:
        return PhaseOutcome(ArcSynthesisCounts(), detail=model.detail, model=model.usage())
    scored = retention_pass(env.db, at=env.at, root=env.repo.root)
    arcs = [s for s in scored if s.row.memory_type == "arc"]
    evidence = evidence_rows(scored)
    if not evidence:
        return PhaseOutcome(ArcSynthesisCounts(arcs=len(arcs)), detail="no evidence", model=model.usage())
    arc_keys = arc_batch(env, arcs)
    triage_system = load_prompt(env.repo, "arc-synthesis", prompt_values())

    def triage(count: int) -> ModelRequest[ArcPlan]:
        return ModelRequest(ArcPlan, triage_system, triage_prompt(env, arc_keys, evidence_batch(evidence[:count])),
                            cache_system=False)

    offered = _longest_fit(model, len(evidence), triage)
    model.members_cut += len(evidence) - offered
    evidence = evidence[:offered]
    evidence_keys = evidence_batch(evidence)
    plan = model.call(triage(offered))
    if plan is None:
        return PhaseOutcome(ArcSynthesisCounts(arcs=len(arcs)), detail=NO_PLAN, model=model.usage())
    items, planned = plan_entries(model, plan, arc_keys, {a.row.path: a for a in arcs}, evidence_keys,
                                  {s.row.path: s for s in evidence})
    steps = PhaseSteps(env.repo, run_id=env.run_id, phase=PHASE, deep=env.deep)
    written = 0
    taken: set[str] = set()
    system = load_prompt(env.repo, "arc-synthesis-write", prompt_values())
    for item in items:
        content = model.call(_execute_request(env, model, system, item))
        if content is None:
            continue
        if not content.title.strip() or not content.claim.strip():
            model.reject("blank", {"entry": item.action, "title": content.title, "claim": content.claim})
            continue
        injected = injected_instruction("\n".join([content.title, content.claim, *content.paragraphs]))
        if injected is not None:
            model.reject("instruction", {"entry": item.action, "title": content.title, "kind": injected.kind,
                                         "cue": injected.cue})
            continue
        path = item.arc.row.path if item.arc is not None else free_memory_path(env, ARC_DIR, content.title, taken)
        if path is None:
            model.reject("no-free-path", {"entry": item.action, "title": content.title})
            continue
        counts = ArcSynthesisCounts(len(arcs), planned, written, planned - written)
        steps.begin({**counts.wire(), **usage_counts(model)})
        try:
            done = write_arc(env, item, content, path)
        except InvalidMemory as exc:
            model.reject("render-refused", {"entry": item.action, "title": content.title, "error": exc.message})
            continue
        if not done:
            continue
        taken.add(path)
        written += 1
        title = one_line(content.title)
        steps.staged(f"{item.action} arc {title}", "\n".join(
            [f"arc {path}", *(f"evidence {s.row.path}" for s in item.evidence)]))
    counts = ArcSynthesisCounts(arcs=len(arcs), planned=planned, written=written, skipped=planned - written)
    return PhaseOutcome(counts, subject=steps.subject or f"write {written} arcs", body=steps.body,
                        model=model.usage())


register(PhaseSpec(PHASE, run, ArcSynthesisCounts, model=True))
