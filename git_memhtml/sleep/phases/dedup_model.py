"""dedup-merge, model path: components of near neighbours, a model partition, group pairs (docs/phases.md §1.2
"Model path", docs/models.md §6).

The caller mines at the recall floor (0.86) and unions the frame-key seeds; this module cuts the components
(:func:`cut_components`), packs them into batches, asks the model which members of each component state one fact
(``MergePartition``), and turns each admissible group into ``(keeper, member)`` proposals. It decides nothing: the
proposals go through the same ``merge_candidates`` (veto, role guard, cap) as the no-model pairs.

Rails (each refusal counted and logged through :meth:`PhaseModel.reject`):

- ``unknown-key``: a key the batch never offered (``m99``, a path, a name);
- ``singleton-group``: a group with fewer than two resolved members;
- ``cross-component``: a group whose members come from more than one component (dropped whole).

Prompts carry keys and member text only: never a path, a cosine or an earlier verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

from pydantic import Field

from git_memhtml.domain.injection import injected_instruction
from git_memhtml.domain.merge import MAX_MERGE_PAIRS, NEAR_DUPLICATE_THRESHOLD, MergeProposal, connected_components
from git_memhtml.index.corpus import CorpusRow
from git_memhtml.llm.contract import AnswerSchema, ModelRequest
from git_memhtml.sleep.engine.batch import KeyedBatch, Member, pack_groups
from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.sleep.engine.model import PhaseModel
from git_memhtml.sleep.engine.prompts import load_prompt, stated
from git_memhtml.sleep.phases.memory_text import claim_once

DEDUP_COMPONENT_FLOOR = 0.86
"""Mining floor when a model is bound, and the similarity of a group pair that was never mined (carried over:
``DEDUP_COMPONENT_FLOOR``, docs/phases.md §1.2)."""

DEDUP_PAIR_LIMIT = 800
"""Pairs mined when a model is bound (carried over; 400 with no model)."""

DEDUP_MAX_COMPONENT = 8
"""Members kept per component, the first by path (carried over)."""

DEDUP_MAX_COMPONENTS = 300
"""Components offered per night (carried over)."""

DEDUP_BATCH_MEMBERS = 40
"""Members per call (carried over)."""

DEDUP_MEMBER_CHARS = 1200
"""Characters of one member's text sent, and its cost when packing (carried over)."""

DEDUP_BATCH_CHARS = 48000
"""Characters of member text per call (carried over)."""

LABEL = "member"
"""Block label of a dedup member (docs/models.md §2)."""

RAIL_UNKNOWN_KEY = "unknown-key"
RAIL_SINGLETON = "singleton-group"
RAIL_CROSS_COMPONENT = "cross-component"


def keeper_key(row: CorpusRow, offset: int) -> tuple[bool, int]:
    """Sort key of a fold's keeper, smallest first: a clean memory before one that carries an instruction addressed
    to the model, then the lower corpus offset (the older file, docs/veto.md §3)."""
    return injected_instruction(f"{row.gist}\n{row.body_text}") is not None, offset


def prompt_values() -> dict[str, str]:
    """What the dedup prompt states the code decides regardless of the answer, from the constants that decide it: the
    fold floor (every pair above it folds) and the night's cap (docs/models.md §10)."""
    return {"near_duplicate_threshold": stated(NEAR_DUPLICATE_THRESHOLD), "max_merge_pairs": stated(MAX_MERGE_PAIRS)}


class MergeGroup(AnswerSchema):
    """One group: the keys of members that state one fact."""

    member_keys: list[str] = Field(description="keys (m1, m2 ...) of members that state the same fact")


class MergePartition(AnswerSchema):
    """The answer of one dedup call: groups of keys; an empty list merges nothing."""

    groups: list[MergeGroup]


@dataclass(frozen=True)
class Partition:
    """What the model path proposes.

    Attributes:
        proposals: ``(keeper, member)`` pairs of the admitted groups, in answer order (keeper = lowest corpus offset,
            sim = the mined cosine or :data:`DEDUP_COMPONENT_FLOOR`).
        groups: groups admitted (``llmGroups``).
        skipped: members of batches that got no answer (failed call or budget skip): the ``skipped`` count.
        batches: batches asked for.
    """

    proposals: tuple[MergeProposal, ...]
    groups: int
    skipped: int
    batches: int


def cut_components(edges: Sequence[tuple[str, str]]) -> list[list[str]]:
    """Connected components of ``edges`` with two members or more, the first :data:`DEDUP_MAX_COMPONENTS`, each cut
    to its first :data:`DEDUP_MAX_COMPONENT` paths (members sorted, components ordered by their smallest path)."""
    components = [c for c in connected_components(edges) if len(c) >= 2][:DEDUP_MAX_COMPONENTS]
    return [c[:DEDUP_MAX_COMPONENT] for c in components]


def frame_edges(groups: Sequence[Sequence[str]], known: Mapping[str, int]) -> list[tuple[str, str]]:
    """Edges joining the paths of each frame-key group that are in ``known`` (a chain over the sorted paths: the
    same component as every pair of the group, in linear size)."""
    out: list[tuple[str, str]] = []
    for group in groups:
        present = sorted(p for p in group if p in known)
        out.extend(pairwise(present))
    return out


def member_text(row: CorpusRow) -> str:
    """The text a dedup member is shown as: its claim, a newline, the rest of its article text (the claim once:
    ``memory_text.claim_once``; docs/phases.md §1.2)."""
    return claim_once("", row.gist, row.body_text)


def _cost(member: Member) -> int:
    return min(len(member.text), DEDUP_MEMBER_CHARS)


def _preamble(batch: KeyedBatch) -> str:
    """One heading per component of the batch, numbered in batch order: ``component_1 holds m1, m2.``"""
    order: list[int] = []
    keys: dict[int, list[str]] = {}
    for key, member in zip(batch.keys, batch.members, strict=True):
        if member.group not in keys:
            order.append(member.group)
            keys[member.group] = []
        keys[member.group].append(key)
    return "\n".join(f"component_{i} holds {', '.join(keys[g])}." for i, g in enumerate(order, start=1))


def partition(
    env: PhaseEnv,
    model: PhaseModel,
    components: Sequence[Sequence[str]],
    rows: Mapping[str, CorpusRow],
    offset: Mapping[str, int],
    mined: Mapping[tuple[str, str], float],
    subjects: Mapping[str, frozenset[str]] | None = None,
) -> Partition:
    """Ask the model to partition ``components`` (paths in ``rows``) and return the group proposals.

    Args:
        rows: the corpus rows by path (the member text and the veto texts).
        offset: corpus offset by path (the keeper is the lowest).
        mined: cosine of each mined oriented pair ``(keep, drop)``.
        subjects: subject identities by path (a path absent names none), for the veto's subject predicate.

    One call per batch (:data:`DEDUP_BATCH_MEMBERS` members, :data:`DEDUP_BATCH_CHARS` characters, components
    kept whole), split further between components to fit ``memhtml.llmmaxprompt`` (:meth:`PhaseModel.fit`; a
    component too large alone has its texts cut). A batch with no answer proposes nothing and its members count
    as ``skipped``.

    Raises:
        ConfigError: a prompt override in the run's tree is unreadable.
    """
    groups = [
        [Member(path, member_text(rows[path]), index) for path in component if path in rows]
        for index, component in enumerate(components)
    ]
    batches = pack_groups([g for g in groups if len(g) >= 2], DEDUP_BATCH_MEMBERS, DEDUP_BATCH_CHARS, _cost)
    if not batches:
        return Partition((), 0, 0, 0)
    system = load_prompt(env.repo, "dedup-merge", prompt_values())
    instruction = load_prompt(env.repo, "dedup-merge.task", prompt_values())
    proposals: list[MergeProposal] = []
    admitted = skipped = sent = 0

    def render(batch: KeyedBatch) -> ModelRequest[MergePartition]:
        return ModelRequest(MergePartition, system=system, prompt=batch.prompt(instruction,
                            preamble=_preamble(batch)))

    for parts in batches:
        for batch, request in model.fit(parts, render, label=LABEL, member_chars=DEDUP_MEMBER_CHARS):
            sent += 1
            answer = model.call(request)
            if answer is None:
                skipped += len(batch.members)
                continue
            for group in answer.groups:
                pairs = _group_pairs(model, batch, group, rows, offset, mined, subjects or {})
                if pairs is not None:
                    admitted += 1
                    proposals.extend(pairs)
    return Partition(tuple(proposals), admitted, skipped, sent)


def _group_pairs(
    model: PhaseModel,
    batch: KeyedBatch,
    group: MergeGroup,
    rows: Mapping[str, CorpusRow],
    offset: Mapping[str, int],
    mined: Mapping[tuple[str, str], float],
    subjects: Mapping[str, frozenset[str]],
) -> list[MergeProposal] | None:
    """The proposals of one answered group, or ``None`` when a rail refuses it (counted and logged)."""
    members, unknown = batch.resolve(group.member_keys)
    for key in unknown:
        model.reject(RAIL_UNKNOWN_KEY, {"key": key, "group": list(group.member_keys)})
    if len(members) < 2:
        model.reject(RAIL_SINGLETON, {"group": list(group.member_keys)})
        return None
    if len({m.group for m in members}) > 1:
        model.reject(RAIL_CROSS_COMPONENT, {"group": [batch.key_of(m.ref) for m in members]})
        return None
    paths = sorted((m.ref for m in members), key=lambda p: (keeper_key(rows[p], offset[p]), p))
    keeper, rest = paths[0], paths[1:]
    keep = rows[keeper]
    out: list[MergeProposal] = []
    for path in rest:
        drop = rows[path]
        out.append(MergeProposal(
            keep=keeper, drop=path, sim=mined.get((keeper, path), DEDUP_COMPONENT_FLOOR),
            keep_text=keep.body_text, drop_text=drop.body_text, keep_claim=keep.gist, drop_claim=drop.gist,
            keep_subjects=subjects.get(keeper, frozenset()), drop_subjects=subjects.get(path, frozenset()),
        ))
    return out
