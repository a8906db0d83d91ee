"""The recall pack: a budgeted, tiered disclosure of what memory holds about a query (docs/retrieval.md §4.8 "Recall").

Candidates are the search pipeline's first :data:`RECALL_CANDIDATES` (same scope, arms, fusion and MMR). They are
folded in rank order: a candidate is *disclosed* (tier 2: its ``disclosure_text`` = claim, summaries, facets,
citations) when that text fits the remaining budget of its section and none of its entity names already has
:data:`PER_ENTITY_DISCLOSURES` disclosures; otherwise it becomes an *index line* (tier 1: path, title, claim, type)
in ``lateral`` and the fold continues. Tier 3 (the full body) is only ever served by an explicit ``read``. Arcs
reserve ``min(ARC_BUDGET, budget, their total text)`` characters out of the total; the others get the rest, so a
pack never exceeds the budget. Read-only, like search.
"""

from __future__ import annotations

from dataclasses import dataclass

from git_memhtml.domain.entities import MARKUP_ENTITY_TYPES, name_key
from git_memhtml.embed.base import Embedder
from git_memhtml.errors import UsageError
from git_memhtml.index.db import IndexDB
from git_memhtml.index.defaults import DEFAULT_BUDGET
from git_memhtml.index.retrieval import ArchivedMatch, ArmWeights, Scope, search

RECALL_CANDIDATES = 30
"""Candidates fused for a pack (docs/retrieval.md §4.8 "Recall": fuse 30)."""
ARC_BUDGET = 9000
"""Characters reserved at most for arcs (docs/retrieval.md §4.8 "arcs budget 9000")."""
PER_ENTITY_DISCLOSURES = 2
"""At most two disclosures per entity name (docs/retrieval.md §4)."""
UNCAPPED_ENTITY_TYPES = MARKUP_ENTITY_TYPES
"""Entity types derived from article markup (docs/index.md §3.5), not what a memory is about: they do not cap
disclosures."""


@dataclass(frozen=True)
class Disclosure:
    """A disclosed memory: ``text`` is its disclosure text (``chars`` = ``len(text)`` counted against the budget);
    ``tier`` 2 when the text holds more than the claim, else 1."""

    path: str
    title: str
    memory_type: str
    tier: int
    text: str
    chars: int
    entities: tuple[str, ...]
    superseded_by: str | None


@dataclass(frozen=True)
class IndexLine:
    """A memory named but not disclosed; ``reason`` is ``budget`` or ``entity-cap``."""

    path: str
    title: str
    gist: str
    memory_type: str
    reason: str


@dataclass(frozen=True)
class RecallPack:
    """Sections ``arcs``/``memories``/``lateral`` in rank order; ``spent_chars`` ≤ ``budget_chars``;
    ``truncated`` when a candidate became an index line for lack of budget; ``archived_matches``/``archived``
    as in :class:`~git_memhtml.index.retrieval.SearchResult` (set only when there is no candidate)."""

    arcs: tuple[Disclosure, ...]
    memories: tuple[Disclosure, ...]
    lateral: tuple[IndexLine, ...]
    spent_chars: int
    budget_chars: int
    truncated: bool
    degraded: bool
    arms: tuple[str, ...]
    archived_matches: int | None = None
    archived: tuple[ArchivedMatch, ...] = ()


def _entity_names(entities: tuple[str, ...]) -> set[str]:
    names = set()
    for entity in entities:
        kind, _, name = entity.partition(":")
        if kind not in UNCAPPED_ENTITY_TYPES and name.strip():
            names.add(name_key(name))
    return names


def recall(
    db: IndexDB,
    query: str,
    *,
    scope: Scope | None = None,
    budget: int = DEFAULT_BUDGET,
    embedder: Embedder | None = None,
    weights: ArmWeights | None = None,
    now: str,
    mmr_lambda: float | None = None,
) -> RecallPack:
    """Build the recall pack of ``query`` within ``budget`` characters (docs/retrieval.md §4.8 "Recall / disclosure").

    Raises:
        UsageError: ``budget`` < 1. EmbedModelMismatch, StorageError: as :func:`search`.
    """
    if budget < 1:
        raise UsageError(f"budget must be at least 1 character, got {budget}", hint="pass --budget 16000")
    found = search(db, query, scope=scope, limit=RECALL_CANDIDATES, embedder=embedder, weights=weights, now=now,
                   mmr_lambda=mmr_lambda)
    if not found.hits:
        return RecallPack((), (), (), 0, budget, False, found.degraded, found.arms, found.archived_matches,
                          found.archived)
    paths = [h.path for h in found.hits]
    names = {f"p{i}": p for i, p in enumerate(paths)}
    texts = {str(p): str(t) for p, t in db.query(
        f"SELECT path, disclosure_text FROM files WHERE path IN ({', '.join(':' + n for n in names)})", names)}
    arc_text = sum(len(texts.get(h.path, "") or h.gist) for h in found.hits if h.memory_type == "arc")
    arc_left = min(ARC_BUDGET, budget, arc_text)  # reserved for arcs; what no arc can use stays with the others
    spent = 0
    counts: dict[str, int] = {}
    arcs: list[Disclosure] = []
    memories: list[Disclosure] = []
    lateral: list[IndexLine] = []
    truncated = False
    for hit in found.hits:
        text = texts.get(hit.path, "") or hit.gist
        is_arc = hit.memory_type == "arc"
        room = arc_left if is_arc else budget - spent - arc_left
        entity_names = _entity_names(hit.entities)
        if any(counts.get(n, 0) >= PER_ENTITY_DISCLOSURES for n in entity_names):
            lateral.append(IndexLine(hit.path, hit.title, hit.gist, hit.memory_type, "entity-cap"))
            continue
        if len(text) > room:
            truncated = True
            lateral.append(IndexLine(hit.path, hit.title, hit.gist, hit.memory_type, "budget"))
            continue
        for n in entity_names:
            counts[n] = counts.get(n, 0) + 1
        item = Disclosure(hit.path, hit.title, hit.memory_type, 2 if text.strip() != hit.gist.strip() else 1, text,
                          len(text), hit.entities, hit.superseded_by)
        if is_arc:
            arc_left -= len(text)
            arcs.append(item)
        else:
            memories.append(item)
        spent += len(text)
    return RecallPack(tuple(arcs), tuple(memories), tuple(lateral), spent, budget, truncated, found.degraded,
                      found.arms)
