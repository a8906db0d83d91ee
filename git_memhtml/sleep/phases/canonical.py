"""What a compress canonical is and carries (docs/phases.md §1.10, §0.7; docs/veto.md §3, §4): the rules the phase
applies to a batch and to the answer, kept apart from the phase's flow in ``compress``.

- :func:`split_by_subject` cuts a community so that no batch offers two subjects; :func:`refused_pairs` names the
  absorbed pairs no canonical may hold together (two subjects, one fact stated two ways);
- :func:`carried` is the word share a canonical must hold of a member's claim (the ``not-carried`` rail);
- :class:`CanonicalHead` / :func:`canonical_head` / :func:`render_head`: the head a canonical takes from the members
  it absorbs, and the rendered file.

Pure, except :func:`member_documents` (reads the members' files).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.model import Link, MemoryDocument
from git_memhtml.document.parse import parse_memory
from git_memhtml.document.template import render_memory
from git_memhtml.domain.entities import name_tokens
from git_memhtml.domain.merge import (
    VETO_SUBJECT,
    content_words,
    contradiction_reasons,
    stem,
    subject_divergent,
    tokenize,
)
from git_memhtml.errors import InvalidMemory
from git_memhtml.sleep.engine.batch import Member
from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.sleep.phases.scoring import Scored
from git_memhtml.sleep.phases.subjects import NO_SUBJECT
from git_memhtml.sleep.phases.synthesis import SLEEP_AUTHOR, one_line
from git_memhtml.store.union import HeadUnion, head_union
from git_memhtml.tree.paths import read_tree_file


def refused_pairs(members: Sequence[Scored], subjects: Mapping[str, frozenset[str]]) -> list[dict[str, object]]:
    """Every pair of ``members`` no canonical may hold together, with why: two subjects
    (``domain.merge.subject_divergent``, docs/veto.md §3), or one fact stated two ways
    (``domain.merge.contradiction_reasons``: a claim and its negation, two values of one number, two clashing times,
    docs/veto.md §4).
    Members that merely state different facts are never refused here."""
    out: list[dict[str, object]] = []
    for a, b in combinations(members, 2):
        reasons = list(contradiction_reasons(a.row.gist, b.row.gist))
        if subject_divergent(subjects.get(a.row.path, NO_SUBJECT), subjects.get(b.row.path, NO_SUBJECT)):
            reasons.append(VETO_SUBJECT)
        if reasons:
            out.append({"a": a.row.path, "b": b.row.path, "reasons": reasons})
    return out


def names_a_subject(text: str, identities: Collection[str]) -> bool:
    """``text`` names one of ``identities`` (``<type>:<letters>``, ``sleep/phases/subjects.py``): a run of at most four
    of its words (:func:`~git_memhtml.domain.entities.name_tokens`, case-folded) joins to the identity's letters
    (``checkout-api`` → ``checkoutapi``; ``Priya Raman`` → ``priyaraman``; "Priya" alone does not name it)."""
    letters = {identity.partition(":")[2] for identity in identities}
    tokens = name_tokens(text.casefold())
    for i in range(len(tokens)):
        joined = ""
        for token in tokens[i:i + 4]:
            joined += token
            if joined in letters:
                return True
    return False


def split_by_subject(members: Sequence[Member], subjects: Mapping[str, frozenset[str]]) -> list[Member]:
    """``members`` (consecutive runs of one group) with each group cut into subject-compatible groups, so that no
    batch offers two memories about different subjects (docs/phases.md §1.10).

    In member order, each member joins the first sub-group none of whose members it diverges from
    (``subject_divergent``), else opens a new one. A memory with no subject joins the first sub-group that has no
    subject either or one of whose subjects its text names (:func:`names_a_subject`: "checkout-api retries three
    times" joins the checkout-api facts), else opens its own: the canonical carries every member's entities, so an
    untagged "The user reads times in UTC" batched with "Priya wants incident timelines in UTC" became a memory about
    Priya (issue 27, a gullible night). Sub-groups are numbered anew in order and listed one after the other, members
    in their original order. Pure.
    """
    out: list[Member] = []
    number = 0
    start = 0
    while start < len(members):
        end = start
        while end < len(members) and members[end].group == members[start].group:
            end += 1
        parts: list[list[Member]] = []
        for member in members[start:end]:
            mine = subjects.get(member.ref, NO_SUBJECT)

            def fits(part: list[Member], mine: frozenset[str] = mine, member: Member = member) -> bool:
                theirs = [subjects.get(other.ref, NO_SUBJECT) for other in part]
                if any(subject_divergent(mine, other) for other in theirs):
                    return False
                named = frozenset().union(*theirs)
                return bool(mine) or not named or names_a_subject(member.text, named)

            home = next((part for part in parts if fits(part)), None)
            if home is None:
                parts.append([member])
            else:
                home.append(member)
        for part in parts:
            out.extend(Member(m.ref, m.text, number) for m in part)
            number += 1
        start = end
    return out


CARRY_SHARE = 0.6
"""Share of a member's claim words the canonical must hold for the member to count as carried (our decision,
docs/models.md §8: grounded synthesis; a canonical that drops a member's fact must not archive that member)."""


def carried(claim: str, canonical: str) -> bool:
    """Whether ``canonical`` (title, claim and paragraphs of the new memory) holds the member ``claim``'s words.

    At least :data:`CARRY_SHARE` of the claim's content words (``domain.merge.content_words``: three letters or
    more, no digit, function words and negation markers aside, a final ``s`` ignored) must be in the canonical. A
    claim with no such word must appear in the canonical whole (case-folded). Numbers, qualifiers and polarity are
    :func:`carry_gaps`' to read, not this share's.
    """
    have = {stem(t) for t in tokenize(canonical)}
    content = content_words(claim)
    if not content:
        return " ".join(claim.split()).casefold() in " ".join(canonical.split()).casefold()
    return len(content & have) >= CARRY_SHARE * len(content)


GENERIC_TYPE = "semantic"
"""The canonical's type when its members do not share one (carried over: every canonical was ``semantic``)."""


@dataclass(frozen=True)
class CanonicalHead:
    """What a canonical carries from the members it absorbs (docs/phases.md §0.7): their head union, their type when
    they share one (else :data:`GENERIC_TYPE`), their highest importance and lowest confidence (``None``: no member
    states one)."""

    union: HeadUnion = field(default_factory=HeadUnion)
    memory_type: str = GENERIC_TYPE
    importance: int | None = None
    confidence: float | None = None


def canonical_head(docs: Sequence[MemoryDocument], *, inside: Collection[str]) -> CanonicalHead:
    """The :class:`CanonicalHead` of the absorbed members ``docs``; links into ``inside`` (the members, the canonical)
    are left out."""
    types = {doc.memory_type for doc in docs}
    importances = [doc.importance for doc in docs if doc.importance is not None]
    confidences = [doc.confidence for doc in docs if doc.confidence is not None]
    return CanonicalHead(
        union=head_union(docs, inside=inside),
        memory_type=types.pop() if len(types) == 1 else GENERIC_TYPE,
        importance=max(importances) if importances else None,
        confidence=min(confidences) if confidences else None,
    )


def member_documents(env: PhaseEnv, members: Sequence[Scored]) -> list[MemoryDocument] | None:
    """Each member's parsed file, or ``None`` when one is gone or no longer parses (the batch is then skipped)."""
    docs: list[MemoryDocument] = []
    for member in members:
        try:
            docs.append(parse_memory(read_tree_file(env.repo.root, member.row.path), path=member.row.path))
        except (InvalidMemory, OSError):
            return None
    return docs


def render_head(title: str, claim: str, paragraphs: Sequence[str], *, now: str, links: Sequence[Link] = (),
                head: CanonicalHead | None = None) -> str:
    """A canonical memory: author ``agent:sleep``, ``title`` and ``claim`` on one line, the non-blank ``paragraphs``,
    ``head``'s type, entities, tags, importance and confidence (:class:`CanonicalHead`; the defaults: ``semantic``,
    none), its links then ``links``; stamped ``now``.

    Raises:
        InvalidMemory: the render gate refused the text.
    """
    head = head if head is not None else CanonicalHead()
    return render_memory(MemoryDraft(
        title=one_line(title),
        memory_type=head.memory_type,
        claim=one_line(claim),
        body=tuple(p.strip() for p in paragraphs if p.strip()),
        author=SLEEP_AUTHOR,
        entities=head.union.entities,
        tags=head.union.tags,
        links=(*head.union.links, *links),
        importance=head.importance,
        confidence=head.confidence,
    ), now=now)
