"""Retrieval verbs: search, recall, neighbors, reinforce (docs/retrieval.md §4).

``search``, ``recall`` and ``neighbors`` only read; ``reinforce`` (and ``read``) are the only access bumps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from git_memhtml.errors import PathNotFound, UsageError
from git_memhtml.service.door import naming
from git_memhtml.service.memories import check_entity

if TYPE_CHECKING:
    from git_memhtml.index.archived import ArchivedMatch
    from git_memhtml.index.db import IndexDB
    from git_memhtml.index.neighbors import Neighborhood
    from git_memhtml.index.recall import Disclosure, IndexLine, RecallPack
    from git_memhtml.index.resident import ResidentVectors
    from git_memhtml.index.retrieval import Hit, Scope, SearchResult
    from git_memhtml.service.door import Door


def build_scope(memory_types: Sequence[str] = (), workspace: str | None = None, tags: Sequence[str] = (),
                entity: str | None = None, include_archived: bool = False, as_of: str | None = None, *,
                names: tuple[str, str, str, str] = ("--workspace", "--tag", "--entity", "--as-of")) -> Scope:
    """The one :class:`~git_memhtml.index.retrieval.Scope` of the scope arguments; ``as_of`` is canonicalised.
    ``names`` are the door's spellings of workspace, tag, entity and as-of, for the messages.

    Raises:
        UsageError: an empty workspace or tag, an entity that is not ``type:name``, an as-of that is no instant.
    """
    from git_memhtml.index.asof import parse_as_of
    from git_memhtml.index.retrieval import Scope

    ws_name, tag_name, entity_name, as_of_name = names
    check_entity(entity, entity_name)
    if workspace is not None and not workspace.strip():
        raise naming(UsageError(f"{ws_name} is empty", hint=f"name a workspace, e.g. {ws_name} checkout-v2"), ws_name)
    if any(not t.strip() for t in tags):
        raise naming(UsageError(f"{tag_name} is empty", hint=f"name a tag, e.g. {tag_name} ops"), tag_name)
    try:
        instant = parse_as_of(as_of) if as_of is not None else None
    except UsageError as exc:
        raise naming(exc, as_of_name) from None
    return Scope(memory_types=tuple(memory_types) or None, workspace=workspace, tags=tuple(tags), entity=entity,
                 include_archived=include_archived, as_of=instant)


def require_query(command: str, query: str, *, argument: str = "QUERY", example: str | None = None) -> str:
    """Return ``query`` unchanged; an empty or whitespace-only query is a usage error, not a search for nothing
    (every arm would rank the whole store by recency and salience alone).

    Raises:
        UsageError: naming ``argument``, with an example.
    """
    if not query.strip():
        hint = example or f'give words to look for, e.g. git memhtml {command} "checkout timeout"'
        raise naming(UsageError(f"{command}: the {argument} argument is empty", hint=hint), argument)
    return query


def mmr_lambda(door: Door) -> float | None:
    """``memhtml.mmrlambda``, or ``None`` when it is 1 (no MMR pass)."""
    value = door.settings().settings.mmr_lambda
    return None if value >= 1.0 else value


def hit_json(hit: Hit) -> dict[str, Any]:
    """A hit in the envelope's camelCase; ``supersededBy`` is always present (null when nothing supersedes)."""
    return {"path": hit.path, "title": hit.title, "gist": hit.gist, "memoryType": hit.memory_type,
            "score": hit.score, "confidence": hit.confidence, "updatedAt": hit.updated_at, "snippet": hit.snippet,
            "entities": list(hit.entities), "supersededBy": hit.superseded_by}


def _archived_json(items: tuple[ArchivedMatch, ...]) -> list[dict[str, Any]]:
    return [{"path": a.path, "title": a.title, "supersededBy": a.superseded_by} for a in items]


@dataclass(frozen=True)
class Found:
    """A search's result: ``json()`` is ``search --json``'s data."""

    result: SearchResult

    def json(self) -> dict[str, Any]:
        """``{hits, degraded, arms, scopeEmpty, archivedMatches, archived}``."""
        r = self.result
        return {"hits": [hit_json(h) for h in r.hits], "degraded": r.degraded, "arms": list(r.arms),
                "scopeEmpty": r.scope_empty, "archivedMatches": r.archived_matches,
                "archived": _archived_json(r.archived)}


def search(door: Door, db: IndexDB, query: str, *, scope: Scope, limit: int, now: str,
           resident: ResidentVectors | None = None) -> Found:
    """Hybrid search (RRF over four arms, then MMR; docs/retrieval.md §4); never an access. ``resident``: the
    index's vectors held in memory by a long-lived caller (the MCP server), checked current by the search.

    Raises:
        EmbedModelMismatch, IndexStale, StorageError: as ``index/retrieval.py:search``.
    """
    from git_memhtml.index.retrieval import search as run_search

    return Found(run_search(db, query, scope=scope, limit=limit, embedder=door.embedder(), weights=door.weights(),
                            now=now, mmr_lambda=mmr_lambda(door), resident=resident))


def _disclosure_json(d: Disclosure) -> dict[str, Any]:
    return {"path": d.path, "title": d.title, "memoryType": d.memory_type, "tier": d.tier, "text": d.text,
            "chars": d.chars, "entities": list(d.entities), "supersededBy": d.superseded_by}


def _line_json(line: IndexLine) -> dict[str, Any]:
    return {"path": line.path, "title": line.title, "gist": line.gist, "memoryType": line.memory_type, "tier": 1,
            "reason": line.reason}


@dataclass(frozen=True)
class Recalled:
    """A recall pack: ``json()`` is ``recall --json``'s data."""

    pack: RecallPack

    def json(self) -> dict[str, Any]:
        """``{sections: {arcs, memories, lateral}, spentChars, budgetChars, truncated, degraded, arms,
        archivedMatches, archived}``."""
        p = self.pack
        return {"sections": {"arcs": [_disclosure_json(d) for d in p.arcs],
                             "memories": [_disclosure_json(d) for d in p.memories],
                             "lateral": [_line_json(line) for line in p.lateral]},
                "spentChars": p.spent_chars, "budgetChars": p.budget_chars, "truncated": p.truncated,
                "degraded": p.degraded, "arms": list(p.arms), "archivedMatches": p.archived_matches,
                "archived": _archived_json(p.archived)}


def recall(door: Door, db: IndexDB, query: str, *, scope: Scope, budget: int, now: str) -> Recalled:
    """The budgeted recall pack of ``query`` (docs/retrieval.md §4.8); never an access.

    Raises:
        EmbedModelMismatch, StorageError: as ``index/recall.py:recall``.
    """
    from git_memhtml.index.recall import recall as run_recall

    return Recalled(run_recall(db, query, scope=scope, budget=budget, embedder=door.embedder(),
                               weights=door.weights(), now=now, mmr_lambda=mmr_lambda(door)))


@dataclass(frozen=True)
class Hood:
    """A neighbourhood: ``json()`` is ``neighbors --json``'s data."""

    hood: Neighborhood

    def json(self) -> dict[str, Any]:
        """``{path, depth, rels, nodes: [{path, hop, rel, direction, via, title, memoryType, archived}], edges}``."""
        h = self.hood
        nodes = [{"path": n.path, "hop": n.hop, "rel": n.rel, "direction": n.direction, "via": n.via,
                  "title": n.title, "memoryType": n.memory_type, "archived": n.archived} for n in h.nodes]
        return {"path": h.path, "depth": h.depth, "rels": list(h.rels), "nodes": nodes,
                "edges": [asdict(e) for e in h.edges]}


def neighbors(db: IndexDB, path: str, *, depth: int, rels: Sequence[str]) -> Hood:
    """Memories linked to ``path`` by memory-class edges, both directions, ``depth`` hops (1 or 2)."""
    from git_memhtml.index.neighbors import neighbors as walk

    return Hood(walk(db, path, depth=depth, rels=rels))


def reinforce(db: IndexDB, paths: Sequence[str], *, signal: str, now: str, argument: str = "PATH") -> dict[str, Any]:
    """Bump the access rows of ``paths`` (resolved, deduplicated here) with ``signal``; a path bumped in the last
    900 s is cooled down. Returns ``reinforce --json``'s data ``{signal, bumped, cooledDown}``. Every path is checked
    before any bump.

    Raises:
        PathNotFound: a path is not in the index (naming ``argument``).
    """
    from git_memhtml.domain.reinforce import SIGNAL_VALUES
    from git_memhtml.index.access import reinforce as bump
    from git_memhtml.index.memories import file_exists

    if signal not in SIGNAL_VALUES:
        raise naming(UsageError(f"signal {signal!r} is not one of {', '.join(SIGNAL_VALUES)}",
                                hint="use positive, negative or neutral"), "signal")
    rels = list(dict.fromkeys(paths))
    for rel in rels:
        if not file_exists(db, rel):
            raise naming(PathNotFound(f"{rel}: no such memory in the index", hint="git memhtml list --include-archived",
                                      path=rel), argument)
    bumped = bump(db, rels, signal=signal, now=now)
    return {"signal": signal, "bumped": list(bumped), "cooledDown": [p for p in rels if p not in bumped]}
