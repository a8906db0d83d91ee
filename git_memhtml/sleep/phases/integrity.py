"""Phase 15, integrity: repair dangling authored links, then regenerate the generated artifacts (docs/phases.md §1
phase 14; docs/layout.md §2.7, docs/phases.md §1.15; docs/layout.md §2.7).

A dangling link is an authored (``derived = 0``) head link whose target memory is gone. Two kinds are told apart:

- the target was archived: ``archive/<Y>/<target>`` exists for a year Y from the run year back ten years (newest
  first, so the latest archiving of a twice-archived path wins). The link still says something true, so one
  stamp unlinks the old href, links the memory that superseded the archived one (its ``superseded-by``: a fold's
  keeper or a compress canonical, when it is active and not the source itself; issue 27: a careful night's links
  led to archived files), else the archive path, and sets ``updated``. The path is derived with the archive
  algebra, never searched for by similarity.
- the target is simply gone: the link asserts a relationship to nothing, so it is removed, with a warning line
  in the commit body.

Only links whose target is a memory path are judged (a href outside the PARA buckets can never have a files row,
so calling it dangling would drop provenance the repair cannot restore). Edges come from the index for files whose
bytes match the indexed blob, and from the head of every file the index does not describe yet (an earlier phase
moved or stamped it): the tree wins. Then every directory's ``index.html`` and the root ``sitemap.xml`` are
regenerated, written only when their bytes differ.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from git_memhtml.artifacts.listings import TreeFile, publish_rows, render_artifacts, scan_tree, write_artifacts
from git_memhtml.document.editors import get_links, get_metas
from git_memhtml.document.model import Link
from git_memhtml.index.edges import authored_edges
from git_memhtml.index.memories import indexed_blobs
from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.store.edits import Edit, link, set_meta, stamp_file, unlink
from git_memhtml.tree.layout import archive_path_for, is_valid_memory_path

ARCHIVE_LOOKBACK_YEARS = 10
"""Years tried before the run year when chasing an archived target, newest first (docs/phases.md §1.15)."""


@dataclass(frozen=True)
class Dangling:
    """One dangling head link of ``src``: its rel, the href as written, its target path and the repair target
    (``None`` = drop)."""

    src: str
    rel: str
    href: str
    target: str
    archived_to: str | None


@dataclass(frozen=True)
class IntegrityCounts(PhaseCounts):
    """``dangling`` links found, ``rewritten`` to an archive path, ``dropped``; ``artifacts`` rendered,
    ``regenerated`` written."""

    dangling: int
    rewritten: int
    dropped: int
    artifacts: int
    regenerated: int


def link_target(href: str) -> str:
    """The repo path a head href names: query and fragment cut, leading ``/`` stripped."""
    return href.split("#", 1)[0].split("?", 1)[0].lstrip("/")


def archived_location(target: str, year: int, exists: Mapping[str, object]) -> str | None:
    """``archive/<Y>/<target>`` for the newest Y in ``year … year-10`` present in ``exists``, else ``None``."""
    for y in range(year, year - ARCHIVE_LOOKBACK_YEARS - 1, -1):
        candidate = archive_path_for(target, y)
        if candidate in exists:
            return candidate
    return None


def _links_by_source(env: PhaseEnv, tree: Mapping[str, TreeFile]) -> dict[str, list[Link]]:
    """Authored links per existing source: index edges for unchanged files, head links for the rest."""
    indexed = indexed_blobs(env.db)
    from_index: dict[str, list[str]] = {}
    for edge in authored_edges(env.db):
        from_index.setdefault(edge.src, []).append(f"{edge.rel}\0{edge.dst}")
    out: dict[str, list[Link]] = {}
    for path in sorted(tree):
        file = tree[path]
        links = get_links(file.data.decode("utf-8", errors="replace"))
        if indexed.get(path) == file.blob_sha:
            wanted = set(from_index.get(path, []))
            links = [lk for lk in links if f"{lk.rel}\0{link_target(lk.href)}" in wanted]
        if links:
            out[path] = links
    return out


def superseding(archived: str, tree: Mapping[str, TreeFile]) -> str | None:
    """The active memory that stands for the archived file ``archived``: the target of its ``superseded-by`` meta
    when that file is in ``tree`` and not itself archived (a fold's keeper, a compress canonical), else ``None``."""
    file = tree.get(archived)
    if file is None:
        return None
    for value in get_metas(file.data.decode("utf-8", errors="replace"), "superseded-by"):
        keeper = link_target(value)
        if keeper in tree and not keeper.startswith("archive/"):
            return keeper
    return None


def find_dangling(env: PhaseEnv, tree: Mapping[str, TreeFile]) -> list[Dangling]:
    """Every dangling authored link in ``tree``, ordered by source, rel, href. Its repair target is the memory that
    superseded the archived target (:func:`superseding`: a link to a folded memory now reaches the memory that
    states its fact, issue 27), else the archive path, else none (drop). A source never links to itself: the keeper's
    own link to what it absorbed goes to the archive path."""
    year = int(env.at[:4])
    found: list[Dangling] = []
    for src, links in _links_by_source(env, tree).items():
        for lk in sorted(set(links), key=lambda x: (x.rel, x.href)):
            target = link_target(lk.href)
            if not is_valid_memory_path(target) or target in tree or target == src:
                continue
            archived = archived_location(target, year, tree)
            keeper = superseding(archived, tree) if archived is not None else None
            found.append(Dangling(src, lk.rel, lk.href, target,
                                  keeper if keeper is not None and keeper != src else archived))
    return found


def _repair(env: PhaseEnv, items: list[Dangling]) -> tuple[int, int, list[str]]:
    rewritten = dropped = 0
    lines: list[str] = []
    by_src: dict[str, list[Dangling]] = {}
    for item in items:
        by_src.setdefault(item.src, []).append(item)
    for src, group in by_src.items():
        edits: list[Edit] = []
        for item in group:
            edits.append(unlink(item.rel, item.href))
            if item.archived_to is not None:
                edits.append(link(item.rel, "/" + item.archived_to))
                rewritten += 1
                lines.append(f"rewrite {src} {item.rel} {item.href} -> /{item.archived_to}")
            else:
                dropped += 1
                lines.append(f"warning: drop {src} {item.rel} {item.href} (target is gone)")
        if any(item.archived_to is not None for item in group):
            edits.append(set_meta("updated", env.at))
        if not env.dry_run:
            stamp_file(env.repo, src, edits)
    return rewritten, dropped, lines


def run(env: PhaseEnv) -> PhaseOutcome:
    """Repair, then regenerate; counts ``dangling, rewritten, dropped, artifacts, regenerated``.

    Raises:
        StorageError: the index cannot be read. OSError/GitError: the tree cannot be written.
    """
    refused: list[tuple[str, str]] = []
    tree = scan_tree(env.repo.root, refused=refused)
    dangling = find_dangling(env, tree)
    rewritten, dropped, lines = _repair(env, dangling)
    if dangling and not env.dry_run:
        tree = scan_tree(env.repo.root)  # the repair changed heads (and ``updated`` stamps) the listings show
    result = write_artifacts(env.repo, render_artifacts(publish_rows(env.db, tree)), dry_run=env.dry_run)
    lines += [f"warning: {path}: {reason}" for path, reason in (*refused, *result.refused)]
    counts = IntegrityCounts(
        dangling=len(dangling),
        rewritten=rewritten,
        dropped=dropped,
        artifacts=result.artifacts,
        regenerated=result.regenerated,
    )
    lines += [f"regenerate {path}" for path in result.paths]
    return PhaseOutcome(
        counts,
        subject=f"repair {len(dangling)} dangling links, regenerate {result.regenerated} artifacts",
        body="\n".join(lines) if lines else None,
    )


register(PhaseSpec("integrity", run, IntegrityCounts, sweep=True))
