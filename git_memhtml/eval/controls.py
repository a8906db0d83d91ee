"""Probe controls: the merge veto read backwards (docs/gate.md §8.2; docs/gate.md §8 "discrimination gate").

A control is a high-similarity WRONG twin of a target memory: the same body and element kit, the claim rewritten by
one of three transforms that mirror the three merge-veto predicates of ``git_memhtml.domain.merge``. A control
counts only when ITS OWN family's predicate fires against the target's whole text; tripping another family's
predicate (or the disjunction) is not enough, because a control the veto cannot see tests nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from git_memhtml.domain.merge import negation_divergent, numeric_token_divergent, variant_qualifier_divergent
from git_memhtml.eval.vocab import CONTROL_QUALIFIERS, NEGATION_ANCHORS, STOPWORDS, TOPICS, Topic

NEGATION = "negation"
NUMERIC = "numeric"
VARIANT = "variant"
FAMILIES: tuple[str, ...] = (NEGATION, NUMERIC, VARIANT)
"""The three control families, in the order controls are built and reported (docs/gate.md §8.2)."""

TITLE_MARKERS: dict[str, str] = {
    NEGATION: "Refuted reading",
    NUMERIC: "Restated quantity",
    VARIANT: "Qualified variant",
}
"""Control title = ``<marker> — <target title>`` (docs/gate.md §8.2)."""

QUERY_TOKENS = 12
"""A probe query keeps the first 12 non-stop-word claim tokens (docs/gate.md §8.2)."""

_NUMBER = re.compile(r"\d+(?:\.\d+)*")
_QUERY_TOKEN = re.compile(r"[^\W_]+")
"""``[\\p{L}\\p{N}]+``: runs of Unicode letters and digits (``\\w`` minus the underscore)."""

Predicate = Callable[[str, str], bool]
PREDICATES: dict[str, Predicate] = {
    NEGATION: negation_divergent,
    NUMERIC: numeric_token_divergent,
    VARIANT: variant_qualifier_divergent,
}
"""Each family's own merge-veto predicate (docs/veto.md §3, docs/gate.md §8.2)."""


def negation_transform(claim: str) -> str:
    """Insert ``not `` after the first negation anchor found (anchors tried in ``NEGATION_ANCHORS`` order); with
    no anchor, prefix ``It is not true that `` and lowercase the old first letter (docs/gate.md §8.2)."""
    for anchor in NEGATION_ANCHORS:
        at = claim.find(anchor)
        if at >= 0:
            cut = at + len(anchor)
            return claim[:cut] + "not " + claim[cut:]
    return "It is not true that " + claim[:1].lower() + claim[1:]


def _format_number(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)


def numeric_transform(claim: str) -> str | None:
    """Rewrite the first ``\\d+(?:\\.\\d+)*`` of ``claim``: an integer below 100 gets +10, any other number is
    doubled (docs/gate.md §8.2). Returns ``None`` when the claim has no number, or when the first one is a dotted
    version with more than one dot (not a number, so there is nothing to restate)."""
    match = _NUMBER.search(claim)
    if match is None:
        return None
    token = match.group(0)
    if token.count(".") > 1:
        return None
    if "." not in token and int(token) < 100:
        replacement = str(int(token) + 10)
    else:
        replacement = _format_number(float(token) * 2)
    return claim[: match.start()] + replacement + claim[match.end() :]


def topic_of_path(path: str, topics: Sequence[Topic] = TOPICS) -> Topic | None:
    """Return the topic whose workspace string is a directory segment of ``path`` (first in topic order), or
    ``None`` (docs/gate.md §8.2)."""
    folders = path.split("/")[:-1]
    for topic in topics:
        if topic.workspace in folders:
            return topic
    return None


def qualifier_for(path: str) -> str:
    """``CONTROL_QUALIFIERS[Σ code points of path mod 5]`` (docs/gate.md §8.2)."""
    return CONTROL_QUALIFIERS[sum(ord(ch) for ch in path) % len(CONTROL_QUALIFIERS)]


def variant_transform(claim: str, *, path: str, topics: Sequence[Topic] = TOPICS) -> str:
    """Insert `` <q>`` after the first occurrence of the path topic's anchor, or, when the claim lacks it (or the
    path names no topic), append ``, on the <q> variant only.`` in place of one trailing period (docs/gate.md §8.2).
    ``q`` = :func:`qualifier_for` of the target path."""
    qualifier = qualifier_for(path)
    topic = topic_of_path(path, topics)
    if topic is not None:
        at = claim.find(topic.anchor)
        if at >= 0:
            cut = at + len(topic.anchor)
            return claim[:cut] + " " + qualifier + claim[cut:]
    stem = claim[:-1] if claim.endswith(".") else claim
    return f"{stem}, on the {qualifier} variant only."


def whole_text(claim: str, paragraphs: Sequence[str]) -> str:
    """The text a veto predicate reads in eval: the claim plus the body paragraphs, joined by spaces
    (docs/veto.md §3)."""
    return " ".join([claim, *paragraphs])


@dataclass(frozen=True)
class ControlClaim:
    """A validated control claim: ``family`` ∈ :data:`FAMILIES`, ``claim`` the rewritten claim."""

    family: str
    claim: str


def transform(family: str, claim: str, *, path: str) -> str | None:
    """Apply family ``family``'s transform to ``claim`` (``path`` is the target's); ``None`` = no candidate.

    Raises:
        ValueError: ``family`` is not one of :data:`FAMILIES`.
    """
    if family == NEGATION:
        return negation_transform(claim)
    if family == NUMERIC:
        return numeric_transform(claim)
    if family == VARIANT:
        return variant_transform(claim, path=path)
    raise ValueError(f"unknown control family {family!r}")


def is_valid_control(family: str, *, target_text: str, control_text: str) -> bool:
    """Whether a control's whole text diverges from the target's whole text under ITS OWN family's predicate
    (docs/gate.md §8.2); the other families' predicates are deliberately not consulted."""
    return PREDICATES[family](target_text, control_text)


def build_controls(claim: str, paragraphs: Sequence[str], *, path: str) -> tuple[ControlClaim, ...]:
    """Return the valid controls of one target, in :data:`FAMILIES` order.

    Args:
        claim: the target's claim.
        paragraphs: the target's body paragraphs (shared verbatim by every control).
        path: the target's repository path (picks the topic and the variant qualifier).

    A family whose transform yields nothing, or whose candidate fails its own predicate, is skipped.
    """
    target_text = whole_text(claim, paragraphs)
    out: list[ControlClaim] = []
    for family in FAMILIES:
        candidate = transform(family, claim, path=path)
        if candidate is None or candidate == claim:
            continue
        if is_valid_control(family, target_text=target_text, control_text=whole_text(candidate, paragraphs)):
            out.append(ControlClaim(family, candidate))
    return tuple(out)


def probe_query(claim: str) -> str:
    """The probe query: lowercased claim tokens ``[\\p{L}\\p{N}]+``, stop words removed, the first 12 kept,
    joined by single spaces (docs/gate.md §8.2)."""
    tokens = [t for t in _QUERY_TOKEN.findall(claim.lower()) if t not in STOPWORDS]
    return " ".join(tokens[:QUERY_TOKENS])
