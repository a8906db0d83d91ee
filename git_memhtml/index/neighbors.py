"""Graph neighbours of one memory over memory-class edges, both directions, depth ≤ 2 (docs/retrieval.md §4.9 "Other
reads").

Authored and sleep-derived edges both count, except deep sleep's derived ``laterally_related`` band edges, which are
for grouping only (docs/deep-sleep.md); person, provenance and task edges do not (docs/format.md §1.3: only memory
edges enter graph reads). Read-only: a neighbour walk is not an access.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from git_memhtml.errors import PathNotFound, UsageError
from git_memhtml.index.db import IndexDB
from git_memhtml.index.defaults import GROUPING_ONLY_REL, MAX_DEPTH, MEMORY_RELS


@dataclass(frozen=True)
class Edge:
    """One memory-class edge: ``src --rel--> dst``; ``derived`` for sleep-mined edges; ``strength`` 1.0 authored,
    the cosine for mined ones."""

    src: str
    rel: str
    dst: str
    derived: bool
    strength: float


@dataclass(frozen=True)
class Node:
    """A memory reached at ``hop`` (1 or 2) through ``rel``, from ``via``; ``direction`` ``out`` when ``via``
    links to it, ``in`` when it links to ``via``. ``title``/``memory_type`` are ``None`` for a dangling target
    (no indexed file at that path)."""

    path: str
    hop: int
    rel: str
    direction: str
    via: str
    title: str | None
    memory_type: str | None
    archived: bool


@dataclass(frozen=True)
class Neighborhood:
    """The walk from ``path``: nodes in discovery order (hop, then rel, then path), and every edge traversed."""

    path: str
    depth: int
    rels: tuple[str, ...]
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]


def neighbors(db: IndexDB, path: str, *, depth: int = 1, rels: Sequence[str] = ()) -> Neighborhood:
    """Walk memory-class edges from ``path`` in both directions, breadth first, up to ``depth`` hops.

    Args:
        path: an indexed memory path (repository-relative).
        depth: 1 or 2.
        rels: rels to follow (underscore or hyphen form); empty → every memory rel.

    Raises:
        UsageError: depth outside 1..2, or a rel that is not a memory rel (the hint lists them).
        PathNotFound: ``path`` is not in the index.
    """
    if not 1 <= depth <= MAX_DEPTH:
        raise UsageError(f"--depth {depth} is out of range", hint=f"use a depth from 1 to {MAX_DEPTH}")
    chosen = tuple(dict.fromkeys(r.replace("-", "_") for r in rels)) or MEMORY_RELS
    bad = [r for r in chosen if r not in MEMORY_RELS]
    if bad:
        raise UsageError(f"--rel {bad[0]!r} is not a memory rel", hint="one of " + ", ".join(MEMORY_RELS))
    if db.query_one("SELECT 1 FROM files WHERE path = ?", (path,)) is None:
        raise PathNotFound(f"{path}: no such memory in the index", hint="git memhtml list --include-archived",
                           path=path)
    holders = ", ".join(f":r{i}" for i in range(len(chosen)))
    rel_params = {f"r{i}": r for i, r in enumerate(chosen)}
    params = {**rel_params, "grouping": GROUPING_ONLY_REL}
    sql = (
        "SELECT src_path, rel, dst_path, derived, strength FROM edges WHERE edge_class = 'memory' "
        f"AND rel IN ({holders}) AND NOT (derived = 1 AND rel = :grouping) "
        "AND (src_path = :p OR dst_path = :p) ORDER BY rel, src_path, dst_path"
    )
    seen = {path}
    frontier = [path]
    found: list[tuple[str, int, str, str, str]] = []
    edges: dict[tuple[str, str, str], Edge] = {}
    for hop in range(1, depth + 1):
        following: list[str] = []
        for here in frontier:
            for src, rel, dst, derived, strength in db.query(sql, {**params, "p": here}):
                edges.setdefault((src, rel, dst), Edge(src, rel, dst, bool(derived), float(strength)))
                other, direction = (dst, "out") if src == here else (src, "in")
                if other in seen:
                    continue
                seen.add(other)
                following.append(other)
                found.append((other, hop, rel, direction, here))
        frontier = following
    info: dict[str, tuple[str, str, int]] = {}
    if found:
        names = {f"n{i}": p for i, (p, *_rest) in enumerate(found)}
        rows = db.query(f"SELECT path, title, memory_type, archived FROM files WHERE path IN "
                        f"({', '.join(':' + n for n in names)})", names)
        info = {str(r[0]): (str(r[1]), str(r[2]), int(r[3])) for r in rows}
    nodes = tuple(
        Node(p, hop, rel, direction, via, info[p][0] if p in info else None, info[p][1] if p in info else None,
             bool(info[p][2]) if p in info else p.startswith("archive/"))
        for p, hop, rel, direction, via in sorted(found, key=lambda n: (n[1], n[2], n[0]))
    )
    return Neighborhood(path, depth, chosen, nodes, tuple(sorted(edges.values(), key=lambda e: (e.rel, e.src, e.dst))))
