"""Retrieval commands: search, recall, neighbors, reinforce (docs/retrieval.md §4).

``search``, ``recall`` and ``neighbors`` only read; ``reinforce`` (and ``read``) are the only access bumps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from git_memhtml.cli.app import utc_now
from git_memhtml.cli.common import app_of, json_option, respond
from git_memhtml.cut import clip
from git_memhtml.document.model import MEMORY_TYPES
from git_memhtml.domain.reinforce import SIGNAL_VALUES
from git_memhtml.index.asof import AS_OF_FORMAT
from git_memhtml.index.defaults import DEFAULT_BUDGET, MAX_DEPTH, MEMORY_RELS
from git_memhtml.output import kv, table

if TYPE_CHECKING:
    from git_memhtml.index.archived import ArchivedMatch
    from git_memhtml.index.retrieval import Scope

F = TypeVar("F", bound=Callable[..., Any])

_SCOPE_OPTIONS = [
    click.option("--type", "memory_types", multiple=True, type=click.Choice(MEMORY_TYPES),
                 help="Memory type (repeatable, any-of; default: every type but task)."),
    click.option("--workspace", help="Only memories of this project workspace."),
    click.option("--tag", "tags", multiple=True, help="Tag (repeatable, any-of)."),
    click.option("--entity", help="One entity type:name."),
    click.option("--include-archived", is_flag=True, help="Also return archived memories."),
    click.option("--as-of", help=f"Point-in-time: memories valid at this instant ({AS_OF_FORMAT}); replaces the "
                                 "archived filter with the validity window."),
]


def scope_options(fn: F) -> F:
    """Attach the scope flags (docs/retrieval.md §4.1) to a command."""
    for option in reversed(_SCOPE_OPTIONS):
        fn = option(fn)
    return fn


def build_scope(memory_types: tuple[str, ...], workspace: str | None, tags: tuple[str, ...], entity: str | None,
                include_archived: bool, as_of: str | None) -> Scope:
    """The one :class:`Scope` of the flags (``service/retrieval.py:build_scope``; UsageError naming the flag)."""
    from git_memhtml.service.retrieval import build_scope as scope_of

    return scope_of(memory_types, workspace, tags, entity, include_archived, as_of)


def _empty_text(count: int | None, archived: tuple[ArchivedMatch, ...]) -> str:
    if not count:
        return "no matches"
    lines = [f"no matches; {count} archived memor{'y' if count == 1 else 'ies'} match (--include-archived shows "
             "them):"]
    lines += [f"  {a.path}" + (f" → superseded by {a.superseded_by}" if a.superseded_by else "") for a in archived]
    return "\n".join(lines)


@click.command("search")
@click.argument("query")
@scope_options
@click.option("--limit", type=click.IntRange(1, 500), default=10, show_default=True)
@json_option
@click.pass_context
def search_cmd(ctx: click.Context, query: str, memory_types: tuple[str, ...], workspace: str | None,
               tags: tuple[str, ...], entity: str | None, include_archived: bool, as_of: str | None, limit: int,
               as_json: bool) -> int:
    """Hybrid search: fts, vector, recency and salience arms fused by RRF (k=60), then MMR. Never an access."""
    from git_memhtml.service.retrieval import require_query, search

    app = app_of(ctx)
    require_query("search", query)
    scope = build_scope(memory_types, workspace, tags, entity, include_archived, as_of)
    with app.index() as db:
        found = search(app, db, query, scope=scope, limit=limit, now=utc_now())
    result, data = found.result, found.json()
    if result.degraded:
        app.warn_vector_arm_unavailable("results come from the lexical arms only")
    respond(as_json, "memory.hits", data, lambda: table(
        ["#", "score", "type", "path", "claim"],
        [[i + 1, f"{h.score:.4f}", h.memory_type, h.path, clip(h.gist, 80)] for i, h in enumerate(result.hits)],
    ) if result.hits else _empty_text(result.archived_matches, result.archived))
    return 0


@click.command("recall")
@click.argument("query")
@scope_options
@click.option("--budget", type=click.IntRange(1, 1_000_000), default=DEFAULT_BUDGET, show_default=True,
              help="Characters the disclosed texts may use (arcs reserve up to 9000 of them).")
@json_option
@click.pass_context
def recall_cmd(ctx: click.Context, query: str, memory_types: tuple[str, ...], workspace: str | None,
               tags: tuple[str, ...], entity: str | None, include_archived: bool, as_of: str | None, budget: int,
               as_json: bool) -> int:
    """A budgeted recall pack: arcs and memories disclosed in rank order, the rest as index lines. Never an access."""
    from git_memhtml.service.retrieval import recall, require_query

    app = app_of(ctx)
    require_query("recall", query)
    scope = build_scope(memory_types, workspace, tags, entity, include_archived, as_of)
    with app.index() as db:
        recalled = recall(app, db, query, scope=scope, budget=budget, now=utc_now())
    pack, data = recalled.pack, recalled.json()
    if pack.degraded:
        app.warn_vector_arm_unavailable("the pack comes from the lexical arms only")

    def human() -> str:
        if not (pack.arcs or pack.memories or pack.lateral):
            return _empty_text(pack.archived_matches, pack.archived)
        out: list[str] = []
        for label, items in (("arcs", pack.arcs), ("memories", pack.memories)):
            if items:
                out.append(f"## {label}")
                out += [f"### {d.title}  ({d.path})\n{d.text}" for d in items]
        if pack.lateral:
            out.append("## also")
            out += [f"- {line.path}: {clip(line.gist, 100)}" for line in pack.lateral]
        out.append(f"({pack.spent_chars} of {pack.budget_chars} characters{'; truncated' if pack.truncated else ''})")
        return "\n".join(out)

    respond(as_json, "recall.pack", data, human)
    return 0


@click.command("neighbors")
@click.argument("path")
@click.option("--depth", type=click.IntRange(1, MAX_DEPTH), default=1, show_default=True)
@click.option("--rel", "rels", multiple=True, type=click.Choice(MEMORY_RELS), help="Follow only this rel (repeatable).")
@json_option
@click.pass_context
def neighbors_cmd(ctx: click.Context, path: str, depth: int, rels: tuple[str, ...], as_json: bool) -> int:
    """Memories linked to PATH by memory-class edges (authored and mined), both directions, depth ≤ 2."""
    from git_memhtml.service.retrieval import neighbors

    app = app_of(ctx)
    rel = app.memory_path(path, "neighbors")
    with app.index() as db:
        found = neighbors(db, rel, depth=depth, rels=rels)
    hood, data = found.hood, found.json()
    respond(as_json, "memory.neighbors", data, lambda: table(
        ["hop", "rel", "dir", "path", "title"],
        [[n.hop, n.rel, n.direction, n.path, clip(n.title or "(not indexed)", 60)] for n in hood.nodes],
    ) if hood.nodes else "no neighbours")
    return 0


@click.command("reinforce")
@click.argument("paths", nargs=-1, required=True)
@click.option("--signal", type=click.Choice(list(SIGNAL_VALUES)), default="positive",
              show_default=True, help="How the memory served: moves its outcome score (neutral counts access only).")
@json_option
@click.pass_context
def reinforce_cmd(ctx: click.Context, paths: tuple[str, ...], signal: str, as_json: bool) -> int:
    """Record that PATH… served (an access bump with a signal); a path bumped in the last 900 s is cooled down."""
    from git_memhtml.service.retrieval import reinforce

    app = app_of(ctx)
    rels = list(dict.fromkeys(app.memory_path(p, "reinforce") for p in paths))  # every path before any bump
    with app.index() as db:
        data = reinforce(db, rels, signal=signal, now=utc_now())
    bumped, cooled = data["bumped"], data["cooledDown"]
    respond(as_json, "memory.reinforced", data, lambda: kv({"signal": signal, "bumped": ", ".join(bumped) or "-",
                                                            "cooled down": ", ".join(cooled) or "-"}))
    return 0


