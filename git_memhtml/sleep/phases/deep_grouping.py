"""Deep sleep's grouping for compress: widened communities, then entity-keyed groups (docs/deep-sleep.md,
docs/phases.md §1.10 "Under --deep").

Two mechanisms turn on under ``sleep run --deep``, both only for *grouping* (which compress candidates are offered
to the model together); neither changes a score, a band or a fold rule:

1. **Widened communities.** Label propagation (``domain.graph.label_propagation``) runs over the memory graph the
   retention pass uses (authored edges and mined ``relates_to``) plus the grouping-band pairs
   ``[0.72, 0.85)`` (``laterally_related``, relationship-mining §1.5). The retention score, PageRank and bridges
   are still computed without the band (``scoring.retention_pass``).
2. **Entity-keyed groups.** A candidate the widened graph still leaves without a community (under 3 members) joins
   a group of candidates that claim one entity (``file_entities.entity_key``, the exact matching key: NFC, case
   folded, whitespace collapsed, so ``host:web01`` and ``host:web1`` are two keys). An entity claimed by more than
   :data:`HUB_CLAIMANTS` active memories is a hub, a stop-word: it forms no group and is counted. Markup-derived
   entity types (``lang``, ``concept``: what the article's markup says, not what it is about) form no group either.
   Keys are taken by the number of ungrouped candidates claiming them (most first, ties by key); each candidate
   joins the first group that takes it, so no memory is offered twice in one pass; a group needs 2 members.

Pure over its inputs except :func:`entity_claimants` (one index read).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from git_memhtml.domain.graph import Edge, label_propagation
from git_memhtml.index.db import IndexDB
from git_memhtml.index.edge_candidates import entity_claims
from git_memhtml.index.recall import UNCAPPED_ENTITY_TYPES
from git_memhtml.sleep.phases.scoring import Scored

HUB_CLAIMANTS = 64
"""An entity with more than this many active claimants is a hub and forms no group (carried over: seeds §16
"Hub entities (more than 64 active claimants) are stop-words")."""

NON_SUBJECT_TYPES: frozenset[str] = frozenset(UNCAPPED_ENTITY_TYPES)
"""Entity types derived from article markup (``lang``, ``concept``; docs/index.md §3.5) that form no group: a shared
``lang:de`` says nothing about a shared subject (our decision, docs/deep-sleep.md)."""

MIN_GROUP = 2
"""Members an entity group needs (two memories can fold, carried over from compress's ``MIN_BATCH``)."""


@dataclass(frozen=True)
class Group:
    """One candidate group in offering order: ``kind`` ``community`` or ``entity``; ``label`` the community label
    (its smallest member path) or the entity key; ``members`` sorted by path."""

    kind: str
    label: str
    members: tuple[Scored, ...]


@dataclass(frozen=True)
class Grouping:
    """The groups of one pass (communities first, labels sorted; then entity groups in the order taken), and
    ``hubs_skipped``: hub entities claimed by at least one candidate left without a community."""

    groups: tuple[Group, ...]
    hubs_skipped: int

    @property
    def communities(self) -> int:
        """Widened communities holding a candidate."""
        return sum(1 for g in self.groups if g.kind == "community")

    @property
    def entity_groups(self) -> int:
        """Entity-keyed groups formed."""
        return sum(1 for g in self.groups if g.kind == "entity")


def widened_communities(paths: Iterable[str], edges: Sequence[tuple[str, str, str, int, float]],
                        band: Sequence[tuple[str, str, float]]) -> dict[str, str | None]:
    """Label propagation over ``edges`` (``scoring.memory_edges`` rows) plus the ``band`` pairs, weighted by
    strength (authored 1.0, mined their cosine); ``None`` for a node in a community under 3 members."""
    active = sorted(set(paths))
    present = set(active)
    graph: list[Edge] = [(src, dst, strength) for src, _rel, dst, _derived, strength in edges]
    graph += [(src, dst, sim) for src, dst, sim in band if src in present and dst in present]
    return label_propagation(active, graph)


def entity_claimants(db: IndexDB) -> dict[str, list[str]]:
    """``{entity key: [claimant paths]}`` over active non-task memories (``index.edge_candidates.entity_claims``),
    paths sorted.

    Raises:
        StorageError: the index cannot be read.
    """
    out: dict[str, list[str]] = {}
    for key, path in entity_claims(db):
        out.setdefault(key, []).append(path)
    return out


def _entity_type(key: str) -> str:
    return key.split(":", 1)[0]


def group_candidates(candidates: Sequence[Scored], communities: Mapping[str, str | None],
                     claimants: Mapping[str, Sequence[str]], *, limit: int) -> Grouping:
    """Group ``candidates`` (module docstring): widened communities, then entity keys for the rest.

    Args:
        candidates: the compress candidates of the pass, community or not (``compress.eligible``).
        communities: the widened label of every active path (:func:`widened_communities`).
        claimants: ``{entity key: active claimant paths}`` (:func:`entity_claimants`); the hub test counts every
            active claimant, candidate or not.
        limit: members offered at most over all groups (compress's ``MAX_CANDIDATES``); a group is cut at it.
    """
    by_label: dict[str, list[Scored]] = {}
    loose: dict[str, Scored] = {}
    for s in candidates:
        label = communities.get(s.row.path)
        if label is None:
            loose[s.row.path] = s
        else:
            by_label.setdefault(label, []).append(s)
    groups = [Group("community", label, tuple(sorted(by_label[label], key=lambda s: s.row.path)))
              for label in sorted(by_label)]
    hubs = 0
    wanted: list[tuple[int, str]] = []
    for key, paths in claimants.items():
        holders = [p for p in dict.fromkeys(paths) if p in loose]
        if not holders or _entity_type(key) in NON_SUBJECT_TYPES:
            continue
        if len(set(paths)) > HUB_CLAIMANTS:
            hubs += 1
            continue
        wanted.append((len(holders), key))
    taken: set[str] = set()
    for _, key in sorted(wanted, key=lambda item: (-item[0], item[1])):
        chosen = sorted({p for p in claimants[key] if p in loose and p not in taken})
        if len(chosen) < MIN_GROUP:
            continue
        taken.update(chosen)
        groups.append(Group("entity", key, tuple(loose[p] for p in chosen)))
    out: list[Group] = []
    room = max(0, limit)
    for group in groups:
        if room <= 0:
            break
        members = group.members[:room]
        room -= len(members)
        out.append(Group(group.kind, group.label, members))
    return Grouping(tuple(out), hubs)
