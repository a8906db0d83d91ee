"""What a fold keeps: the union of its members' heads (docs/phases.md §0.7).

A dedup keeper absorbs the memory folded into it, a compress canonical stands for every member it absorbs; either
way the memory that stays must be findable by everything its members were found by. :func:`head_union` reads the
members' parsed heads and returns, without duplicates and in first-seen order:

- **entities**: every value a member is indexed by (``document.model.indexed_entity_values``: ``memhtml-entity``
  values, and the ``concept:`` / ``lang:`` values its article markup gives, which a keeper's untouched article or a
  canonical's new one does not), one per matching key (``domain.entities.entity_key``);
- **tags**: every ``memhtml-tag``, one per case-folded value;
- **links**: every head link (memory, person, provenance and task classes, so ``from_session`` sources and
  ``supersedes`` chains too), one per ``(rel, target)``, except a link into the fold itself (a member, the keeper or
  the canonical: a file never links itself, and a member's path is an archive path after the fold).

:func:`keeper_edits` turns the part a keeper lacks into head edits, so the keeper's article bytes and content hash
never move. Pure, except that it needs parsed documents.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from git_memhtml.document.model import Link, MemoryDocument, indexed_entity_values
from git_memhtml.domain.decay import format_confidence
from git_memhtml.domain.entities import entity_key
from git_memhtml.store.edits import Edit, add_meta, link, set_meta


def link_target(href: str) -> str:
    """The repository path a head link points at: query and fragment dropped, leading ``/`` stripped."""
    return href.split("#", 1)[0].split("?", 1)[0].lstrip("/")


@dataclass(frozen=True)
class HeadUnion:
    """The heads of a fold's members, merged (module docstring)."""

    entities: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()


def head_union(docs: Sequence[MemoryDocument], *, inside: Collection[str] = ()) -> HeadUnion:
    """The union of ``docs``' entities, tags and links (module docstring); a link whose target is in ``inside``
    (paths without a leading ``/``: the fold's members, its keeper or canonical) is left out."""
    entities: dict[str, str] = {}
    tags: dict[str, str] = {}
    links: dict[tuple[str, str], Link] = {}
    for doc in docs:
        for value in indexed_entity_values(doc):
            entities.setdefault(entity_key(value), value.strip())
        for tag in doc.tags:
            if tag.strip():
                tags.setdefault(tag.strip().casefold(), tag.strip())
        for found in doc.links:
            target = link_target(found.href)
            if target and target not in inside:
                links.setdefault((found.rel, target), found)
    return HeadUnion(tuple(entities.values()), tuple(tags.values()), tuple(links.values()))


def keeper_edits(keeper: MemoryDocument, members: Sequence[MemoryDocument], *, inside: Collection[str]) -> list[Edit]:
    """Head edits that give ``keeper`` what ``members`` carry and it lacks: ``add`` an entity meta per entity key it
    is not yet indexed by (a ``concept:`` the keeper's own ``<dfn>`` gives is not written twice), a tag per tag it
    lacks (case-folded), a ``link`` per ``(rel, target)`` it lacks; links into ``inside`` are never added. And the
    lowest confidence of all (a keeper without one reads 1.0): a fold states one fact, as sure as its least sure
    member said it, never surer (issue 27: a gullible night folded a 0.60 memory into one with none, so the fact read
    1.0; a compress canonical already takes the lowest, docs/phases.md §0.7)."""
    union = head_union(members, inside=inside)
    have_entities = {entity_key(v) for v in indexed_entity_values(keeper)}
    have_tags = {t.strip().casefold() for t in keeper.tags}
    have_links = {(found.rel, link_target(found.href)) for found in keeper.links}
    out: list[Edit] = []
    out += [add_meta("entity", v) for v in union.entities if entity_key(v) not in have_entities]
    out += [add_meta("tag", t) for t in union.tags if t.casefold() not in have_tags]
    out += [link(found.rel, found.href) for found in union.links
            if (found.rel, link_target(found.href)) not in have_links]
    lowest = min((m.confidence for m in members if m.confidence is not None), default=None)
    if lowest is not None and lowest < (1.0 if keeper.confidence is None else keeper.confidence):
        out.append(set_meta("confidence", format_confidence(lowest)))
    return out
