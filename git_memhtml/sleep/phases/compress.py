"""Phase 10, compress: fold a compress-band community into one canonical memory (docs/phases.md §1.10).

**Candidates.** The retention pass (``sleep.scoring``, recomputed here after retention-triage) scores the active
corpus; a candidate is a memory in the ``compress`` band (0.3 < score ≤ 0.7) that has a community (3 or more
members, docs/graph.md §5.3), is not an arc or a task, and is not an *episodic record* (below). Candidates are
grouped by community (labels sorted, members by path), at most 2000, and sliced into batches of 8 (a trailing
slice under 2 is dropped).

**Episodic records are never archived.** Every ``episodic`` memory records something that happened at a time (its
``created`` stamp at least, usually a ``<time>`` too), so each one is dated: folding it into a timeless canonical
would lose the when. Such a memory is never offered, whatever the index says: its type is read from the file (the
tree is authoritative, docs/phases.md §0.1). Nor is a person file (``tree.people.person_file_of``: what the file
says about itself, not the folder it sits in): it is the anchor of a person's ``about_person`` links, not a fact to
fold. A fact filed under ``resources/people/`` (the original's placement rule put every semantic memory naming a
person there) is a candidate like any other.

**One call per batch** (``CompressSynthesis``: title, claim, paragraphs, absorbed keys). The model proposes, code
decides (docs/models.md §3); the rails, counted and logged through :meth:`PhaseModel.reject`:

- ``unknown-key``: an absorbed key never offered is dropped;
- a batch with fewer than 2 absorbed members that resolve is skipped (the model's ``[]`` declines; no rail);
- ``blank``: a blank title or claim: the batch is skipped;
- ``veto`` (pairs): two absorbed members about different subjects (the merge veto's subject predicate,
  docs/veto.md §3), or stating one fact two ways (a claim and its negation, two values of one number, two times
  that clash: ``domain.merge.contradiction_reasons``, docs/veto.md §4) skip the whole batch: a fold never crosses
  subjects, and no canonical can carry a contradiction as one memory. Members that merely state different facts are
  never refused. Batches are cut by subject so that the first cannot happen to an honest answer
  (:func:`split_by_subject`);
- ``no-free-path``: no free canonical path; ``render-refused``: text the render gate refuses;
  ``instruction``: a canonical whose text gives an instruction to the model reading it
  (:mod:`git_memhtml.domain.injection`, docs/veto.md §5). Skipped;
- ``not-carried``: a member whose claim words the canonical does not hold (:func:`carried`) is not absorbed: it
  stays as it is;
- ``veto`` (carry): the canonical decides, not the members' differences (docs/veto.md §4). Members of a batch state
  different facts by design, so their differences refuse nothing; each absorbed member is compared with the
  canonical (``domain.merge.carry_gaps``): a number, a variant qualifier or a time of its claim that the canonical
  drops, a claim the canonical states with the other polarity, or a promise it states as done (or a completion as a
  promise), skips the **whole batch**, since the canonical misstates a
  fact it was written to carry.

It absorbs only the members it names; every other member stays as it is.

**Writes** (supersede-only, docs/models.md §8). The canonical's folder is the absorbed members' shared folder, or
``areas/inbox`` when they differ or share ``resources/people`` (a canonical is a fact, and that folder holds person
files only, docs/layout.md §2.2); its path is ``<folder>/<slug(title)>.html``, the first free one that is none of
the members' own paths (``excludeSelfSupersede``). The canonical carries what its members carry
(``store.union.head_union``, docs/phases.md §0.7): every entity, tag and head link of every absorbed member, the
members' one type when they share it (else ``semantic``), their highest importance and lowest confidence. It is
rendered (and refused) before anything moves; then each absorbed member is archived with ``superseded-by`` → the
canonical, the canonical is written (author ``agent:sleep``) with ``supersedes`` → each archive path, and each fold
is recorded in the run journal (``folded``: keep = the canonical, docs/ledger.md §2). One commit per folded batch
(``commit.PhaseSteps``), subject ``fold <k> memories into <title>``.

The rules over a batch and a canonical (the subject cut, the refused pairs, the word share, the canonical's head) are
in ``canonical``; this module asks, judges and writes.

A failed or budget-skipped call writes nothing for its batch and counts it ``skipped``; the other batches go on.
With no model bound, or on a dry run, nothing is asked and nothing is written; the detail says why.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from git_memhtml.document import editors
from git_memhtml.document.model import Link
from git_memhtml.domain.injection import injected_instruction
from git_memhtml.domain.merge import MergeText, carry_gaps
from git_memhtml.errors import InvalidMemory
from git_memhtml.index.indexer import update
from git_memhtml.llm.contract import AnswerSchema, ModelRequest
from git_memhtml.sleep.engine.batch import KeyedBatch, Member, assemble_batches
from git_memhtml.sleep.engine.commit import PhaseSteps
from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.sleep.engine.journal import Folded, record_journal
from git_memhtml.sleep.engine.model import PhaseModel
from git_memhtml.sleep.engine.prompts import load_prompt, stated
from git_memhtml.sleep.phases import relationship_mining
from git_memhtml.sleep.phases.canonical import (
    CanonicalHead,
    canonical_head,
    carried,
    member_documents,
    refused_pairs,
    render_head,
    split_by_subject,
)
from git_memhtml.sleep.phases.deep_grouping import Grouping, entity_claimants, group_candidates, widened_communities
from git_memhtml.sleep.phases.memory_text import claim_once
from git_memhtml.sleep.phases.scoring import Scored, memory_edges, retention_pass
from git_memhtml.sleep.phases.subjects import memory_subjects
from git_memhtml.sleep.phases.synthesis import (
    free_memory_path,
    one_line,
    usage_counts,
    write_new_memory,
)
from git_memhtml.store import edits
from git_memhtml.tree.layout import INBOX_DIR, PEOPLE_DIR
from git_memhtml.tree.people import person_file_of

PHASE = "compress"

BATCH_MEMBERS = 8
"""Members per call (carried over, spec digest §1.10)."""

MIN_BATCH = 2
"""A batch needs two members to fold anything (carried over)."""

MAX_CANDIDATES = 2000
"""Candidates read per night (carried over)."""

MEMBER_CHARS = 1200
"""Characters of each member's ``title\\ngist\\nbody`` text (carried over)."""

INBOX = INBOX_DIR
"""The canonical's folder when the absorbed members live in different folders (carried over; the one spelling is
``tree/layout.py:INBOX_DIR``)."""

EXCLUDED_TYPES: frozenset[str] = frozenset({"arc", "task"})
"""Types compress never reads (docs/phases.md §1.10)."""

PROTECTED_TYPE = "episodic"
"""The type compress never archives: every episodic memory is a dated record (module docstring)."""


class CompressSynthesis(AnswerSchema):
    """The canonical memory, and the keys of the members whose every fact it carries forward."""

    # sent as the schema's description; every field required, as OpenAI's strict ``json_schema`` mode demands

    title: str
    claim: str
    paragraphs: list[str]
    absorbed_keys: list[str]


@dataclass(frozen=True)
class CompressCounts(PhaseCounts):
    """``candidates, communities, batches`` (assembled), ``canonicals`` (written), ``archived`` (members folded),
    ``skipped`` (batches that folded nothing: a failed or budget-skipped call, a decline, a rail).

    Under ``--deep`` (``None``, so left off the wire, otherwise): ``candidates``, ``communities``, ``entity_groups``
    and ``hubs_skipped`` are those of the first pass (what the night could reach), ``batches``, ``canonicals``,
    ``archived`` and ``skipped`` are summed over the passes, ``passes`` is the number of passes run, and
    ``pass<n>_groups`` / ``pass<n>_batches`` / ``pass<n>_canonicals`` are each pass's own (docs/deep-sleep.md).
    """

    candidates: int = 0
    communities: int = 0
    batches: int = 0
    canonicals: int = 0
    archived: int = 0
    skipped: int = 0
    entity_groups: int | None = None
    hubs_skipped: int | None = None
    passes: int | None = None
    pass1_groups: int | None = None
    pass1_batches: int | None = None
    pass1_canonicals: int | None = None
    pass2_groups: int | None = None
    pass2_batches: int | None = None
    pass2_canonicals: int | None = None
    pass3_groups: int | None = None
    pass3_batches: int | None = None
    pass3_canonicals: int | None = None


def prompt_values() -> dict[str, str]:
    """What the compress prompt states the code decides regardless of the answer (docs/models.md §10)."""
    return {"batch_members": stated(BATCH_MEMBERS), "min_batch": stated(MIN_BATCH)}


MAX_PASSES = 3
"""Compress passes under ``--deep``, at most (carried over: seeds §16 "up to three passes")."""


def is_episodic_on_disk(env: PhaseEnv, path: str) -> bool:
    """Whether the file at ``path`` says ``memhtml-type`` ``episodic`` (a missing file is not a candidate either)."""
    target = env.repo.root / path
    if not target.is_file():
        return True
    return editors.get_meta(target.read_text(encoding="utf-8", errors="replace"), "type") == PROTECTED_TYPE


def is_person_file_on_disk(env: PhaseEnv, path: str, title: str) -> bool:
    """Whether the file at ``path`` is a person file (``tree.people.person_file_of`` of its head metas and
    ``title``); a missing file is not a candidate either."""
    target = env.repo.root / path
    if not target.is_file():
        return True
    return person_file_of(path, title, target.read_text(encoding="utf-8", errors="replace")) is not None


def eligible(env: PhaseEnv, scored: Sequence[Scored]) -> list[Scored]:
    """Compress-band rows that are neither arc, task nor episodic (index and file) nor a person file (the anchor
    ``about_person`` links point at, docs/layout.md §2.5: folding it would archive the person; told by what the file
    is, not by its folder), by path; whether they have a community is not asked here."""
    rows = [s for s in scored if s.band == "compress"
            and s.row.memory_type not in EXCLUDED_TYPES and s.row.memory_type != PROTECTED_TYPE]
    rows.sort(key=lambda s: s.row.path)
    return [s for s in rows
            if not is_episodic_on_disk(env, s.row.path) and not is_person_file_on_disk(env, s.row.path, s.row.title)]


def candidates(env: PhaseEnv, scored: Sequence[Scored]) -> list[Scored]:
    """:func:`eligible` rows with a community, grouped by community (labels sorted, then paths), the first
    :data:`MAX_CANDIDATES`."""
    rows = [s for s in eligible(env, scored) if s.community is not None]
    rows.sort(key=lambda s: (s.community or "", s.row.path))
    return rows[:MAX_CANDIDATES]


def member_text(s: Scored) -> str:
    """``title\\ngist\\nbody`` (carried over), each fact once (``memory_text.claim_once``)."""
    return claim_once(s.row.title, s.row.gist, s.row.body_text)


def canonical_folder(paths: Sequence[str]) -> str:
    """The members' shared folder, or :data:`INBOX` when they differ or share ``resources/people`` (person files
    only, docs/layout.md §2.2)."""
    folders = {posixpath.dirname(p) for p in paths}
    return folders.pop() if len(folders) == 1 and PEOPLE_DIR not in folders else INBOX


def render_canonical(answer: CompressSynthesis, *, now: str, links: Sequence[Link] = (),
                     head: CanonicalHead | None = None) -> str:
    """The canonical memory of ``answer`` (``canonical.render_head``): author ``agent:sleep``, the answer's
    title, claim and paragraphs, ``head``'s type, entities, tags, importance and confidence, its links then ``links``.

    Raises:
        InvalidMemory: the render gate refused the text.
    """
    return render_head(answer.title, answer.claim, answer.paragraphs, now=now, links=links, head=head)


@dataclass
class _Night:
    """The running tallies of one night."""

    canonicals: int = 0
    archived: int = 0
    skipped: int = 0


def _fold(env: PhaseEnv, answer: CompressSynthesis, absorbed: Sequence[Scored], path: str,
          head: CanonicalHead) -> list[Folded]:
    """Archive ``absorbed`` into the canonical at ``path``, then write it carrying ``head``; return the folds made
    (may be empty)."""
    folds: list[Folded] = []
    for member in absorbed:
        archived = edits.archive_file(env.repo, member.row.path, at=env.at,
                                      extra=[edits.set_meta("superseded-by", "/" + path)])
        if archived is not None:
            folds.append(Folded(path, member.row.path, archived))
    if not folds:
        return folds
    links = [Link("supersedes", "/" + f.archived) for f in folds]
    write_new_memory(env, path, render_canonical(answer, now=env.at, links=links, head=head))
    record_journal(env, folds)
    return folds


def canonical_text(answer: CompressSynthesis) -> str:
    """The canonical as the carry checks read it: title, claim and each paragraph, one per line."""
    return "\n".join([answer.title, answer.claim, *answer.paragraphs])


def _carried(model: PhaseModel, answer: CompressSynthesis, absorbed: Sequence[Scored]) -> list[Scored] | None:
    """The absorbed members the canonical carries, or ``None`` when the canonical misstates one (docs/veto.md §4).

    A member whose claim words the canonical does not hold is refused on the ``not-carried`` rail and stays where it
    is. A member whose words it holds but whose number, qualifier, time, polarity or promise it drops or turns
    (``carry_gaps``) refuses the whole batch on the ``veto`` rail: the canonical states that member's fact otherwise
    than the member does.
    """
    text = canonical_text(answer)
    kept = [s for s in absorbed if carried(s.row.gist, text)]
    for s in absorbed:
        if s not in kept:
            model.reject("not-carried", {"title": answer.title, "member": s.row.path, "claim": s.row.gist})
    misstated = [{"member": s.row.path, "reasons": list(gaps)} for s in kept
                 if (gaps := carry_gaps(MergeText(s.row.gist), MergeText(answer.claim, text)))]
    if misstated:
        model.reject("veto", {"title": answer.title, "members": misstated})
        return None
    return kept


def _judge(model: PhaseModel, batch: KeyedBatch, answer: CompressSynthesis, by_path: dict[str, Scored],
           subjects: Mapping[str, frozenset[str]]) -> list[Scored] | None:
    """The absorbed members the rails let through, or ``None`` when the batch is skipped."""
    members, unknown = batch.resolve(answer.absorbed_keys)
    for key in unknown:
        model.reject("unknown-key", {"absorbedKey": key, "title": answer.title})
    if len(members) < MIN_BATCH:
        return None
    if not answer.title.strip() or not answer.claim.strip():
        model.reject("blank", {"title": answer.title, "claim": answer.claim})
        return None
    absorbed = [by_path[m.ref] for m in members]
    pairs = refused_pairs(absorbed, subjects)
    if pairs:
        model.reject("veto", {"title": answer.title, "pairs": pairs})
        return None
    return absorbed


@dataclass
class _Folding:
    """What every batch of the night shares: the model, the commits, the prompts, the paths already taken, the
    memories' subjects."""

    env: PhaseEnv
    model: PhaseModel
    steps: PhaseSteps
    system: str
    instruction: str
    night: _Night
    taken: set[str]
    subjects: Mapping[str, frozenset[str]]


def _fold_batches(f: _Folding, batches: Sequence[Sequence[Member]], by_path: dict[str, Scored],
                  counts: Callable[[], CompressCounts]) -> int:
    """Ask, judge and fold each batch in order (module docstring); return the canonicals written."""
    env, model, night = f.env, f.model, f.night
    written = 0

    def render(keyed: KeyedBatch) -> ModelRequest[CompressSynthesis]:
        return ModelRequest(CompressSynthesis, f.system, keyed.prompt(f.instruction))

    for batch_members in batches:
        # one group: a compress batch is judged whole, its texts cut to fit the prompt cap (docs/models.md §11)
        ((batch, request),) = model.fit([batch_members], render, label="member", member_chars=MEMBER_CHARS)
        answer = model.call(request)
        absorbed = _judge(model, batch, answer, by_path, f.subjects) if answer is not None else None
        if answer is None or absorbed is None:
            night.skipped += 1
            continue
        own = {m.ref for m in batch_members}
        path = free_memory_path(env, canonical_folder([s.row.path for s in absorbed]), answer.title, f.taken | own)
        if path is None:
            model.reject("no-free-path", {"title": answer.title})
            night.skipped += 1
            continue
        injected = injected_instruction("\n".join([answer.title, answer.claim, *answer.paragraphs]))
        if injected is not None:
            model.reject("instruction", {"title": answer.title, "kind": injected.kind, "cue": injected.cue})
            night.skipped += 1
            continue
        docs = member_documents(env, absorbed)
        if docs is None:
            night.skipped += 1
            continue
        inside = {path, *(s.row.path for s in absorbed)}
        try:
            render_canonical(answer, now=env.at, head=canonical_head(docs, inside=inside))  # refuse before any move
        except InvalidMemory as exc:
            model.reject("render-refused", {"title": answer.title, "error": exc.message})
            night.skipped += 1
            continue
        kept = _carried(model, answer, absorbed)
        if kept is None or len(kept) < MIN_BATCH:
            night.skipped += 1
            continue
        doc_of = {s.row.path: d for s, d in zip(absorbed, docs, strict=True)}
        absorbed = kept  # a member left out stays live: links into it are carried
        head = canonical_head([doc_of[s.row.path] for s in absorbed], inside={path, *(s.row.path for s in absorbed)})
        f.steps.begin({**counts().wire(), **usage_counts(model)})
        folds = _fold(env, answer, absorbed, path, head)
        if not folds:
            night.skipped += 1
            continue
        f.taken.add(path)
        night.canonicals += 1
        night.archived += len(folds)
        written += 1
        f.steps.staged(f"fold {len(folds)} memories into {one_line(answer.title)}",
                       "\n".join([f"canonical {path}", *(f"{x.drop} -> {x.archived}" for x in folds)]))
    return written


def _folding(env: PhaseEnv, model: PhaseModel) -> _Folding:
    steps = PhaseSteps(env.repo, run_id=env.run_id, phase=PHASE, deep=env.deep)
    return _Folding(env, model, steps, load_prompt(env.repo, "compress", prompt_values()),
                    load_prompt(env.repo, "compress.task", prompt_values()),
                    _Night(), set(), {})


def run(env: PhaseEnv) -> PhaseOutcome:
    """Fold compress-band communities into canonical memories, one call and one commit per batch (module docstring);
    under ``--deep`` the grouping is widened and the phase runs until quiet (:func:`run_deep`).

    Counts ``candidates, communities, batches, canonicals, archived, skipped``; detail ``no model bound`` /
    ``dry run: no model calls`` when nothing is asked.

    Raises:
        StorageError: the index cannot be read. GitError / OSError: a write or a commit failed. RunRefused: a
            journal line would not read back (docs/ledger.md §2).
    """
    model = PhaseModel.for_phase(env, PHASE)
    if env.deep:
        return run_deep(env, model)
    if not model.bound:
        return PhaseOutcome(CompressCounts(), detail=model.detail, model=model.usage())
    rows = candidates(env, retention_pass(env.db, at=env.at, root=env.repo.root))
    labels = sorted({s.community or "" for s in rows})
    group = {label: i for i, label in enumerate(labels)}
    by_path = {s.row.path: s for s in rows}
    f = _folding(env, model)
    f.subjects = memory_subjects(env)
    members = split_by_subject([Member(s.row.path, member_text(s), group[s.community or ""]) for s in rows],
                               f.subjects)
    batches = assemble_batches(members, BATCH_MEMBERS, MIN_BATCH)

    def counts() -> CompressCounts:
        n = f.night
        return CompressCounts(len(rows), len(labels), len(batches), n.canonicals, n.archived, n.skipped)

    _fold_batches(f, batches, by_path, counts)
    return PhaseOutcome(counts(), subject=f.steps.subject or f"fold {f.night.archived} memories",
                        body=f.steps.body, model=model.usage())


@dataclass(frozen=True)
class _Pass:
    """One deep pass as counted: its candidates, grouping and batches, and the canonicals it wrote."""

    candidates: int
    grouping: Grouping
    batches: int
    canonicals: int = 0


def deep_pass(env: PhaseEnv, subjects: Mapping[str, frozenset[str]]) -> tuple[list[Scored], Grouping,
                                                                              list[list[Member]]]:
    """Mine, score and group the corpus as the index holds it now (docs/deep-sleep.md): the mining scan of
    relationship-mining (``relates_to`` and the band) runs again; on a real run its rows replace the stored derived
    edges (the re-mine of a pass), on a dry run they stand in for them in memory and nothing is written. Returns the
    candidates, their grouping and the batches (each group cut by ``subjects`` (:func:`split_by_subject`) and sliced
    into batches of 8, a trailing slice under 2 dropped).

    Raises:
        StorageError: the index cannot be read or written.
    """
    mined = relationship_mining.mine(env, deep=True)
    if mined is not None and not env.dry_run:
        relationship_mining.store(env, mined)
    related = mined.related if mined is not None and env.dry_run else None
    scored = retention_pass(env.db, at=env.at, root=env.repo.root, related=related)
    paths = [s.row.path for s in scored]
    communities = widened_communities(paths, memory_edges(env.db, set(paths), related),
                                      mined.band if mined is not None else [])
    rows = eligible(env, scored)
    grouping = group_candidates(rows, communities, entity_claimants(env.db), limit=MAX_CANDIDATES)
    members = [Member(s.row.path, member_text(s), i) for i, g in enumerate(grouping.groups) for s in g.members]
    return rows, grouping, assemble_batches(split_by_subject(members, subjects), BATCH_MEMBERS, MIN_BATCH)


def run_deep(env: PhaseEnv, model: PhaseModel) -> PhaseOutcome:
    """Compress under ``--deep``: up to :data:`MAX_PASSES` passes, each mining, scoring and grouping again
    (:func:`deep_pass`) and folding its batches; a pass that writes no canonical is the last. Between passes the
    index is brought up to the work tree (the folds of the pass staged, its last commit left pending for the
    runner, as every phase's last unit). With no model bound, or on a dry run, the first pass is grouped and counted
    and nothing is asked or written.

    Raises:
        StorageError: the index cannot be read or written. GitError / OSError: a write or a commit failed.
    """
    f = _folding(env, model)
    passes: list[_Pass] = []

    def counts() -> CompressCounts:
        first = passes[0] if passes else _Pass(0, Grouping((), 0), 0)
        per: dict[str, int | None] = {}
        for n in range(1, MAX_PASSES + 1):
            done = passes[n - 1] if n <= len(passes) else None
            per[f"pass{n}_groups"] = len(done.grouping.groups) if done else None
            per[f"pass{n}_batches"] = done.batches if done else None
            per[f"pass{n}_canonicals"] = done.canonicals if done else None
        if passes:  # the pass under way: what it wrote so far (a step commit's counts are those as they stand)
            per[f"pass{len(passes)}_canonicals"] = f.night.canonicals - sum(p.canonicals for p in passes[:-1])
        return CompressCounts(
            candidates=first.candidates, communities=first.grouping.communities,
            batches=sum(p.batches for p in passes), canonicals=f.night.canonicals, archived=f.night.archived,
            skipped=f.night.skipped, entity_groups=first.grouping.entity_groups,
            hubs_skipped=first.grouping.hubs_skipped, passes=len(passes), **per)

    for n in range(1, MAX_PASSES + 1):
        if n > 1:
            update(env.repo, env.db, env.embedder, now=env.at)
        f.subjects = memory_subjects(env)
        rows, grouping, batches = deep_pass(env, f.subjects)
        passes.append(_Pass(len(rows), grouping, len(batches)))
        if not model.bound:
            break
        by_path = {s.row.path: s for g in grouping.groups for s in g.members}
        written = _fold_batches(f, batches, by_path, counts)
        passes[-1] = _Pass(len(rows), grouping, len(batches), written)
        if written == 0:
            break
    detail = None if model.bound else model.detail
    return PhaseOutcome(counts(), subject=f.steps.subject or f"fold {f.night.archived} memories",
                        body=f.steps.body, detail=detail, model=model.usage())


register(PhaseSpec(PHASE, run, CompressCounts, model=True, prerequisites=("preflight", "dedup-merge")))
