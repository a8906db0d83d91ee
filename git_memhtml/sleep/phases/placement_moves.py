"""placement-triage's moves (stage 5 of :mod:`git_memhtml.sleep.phases.placement_triage`): ``git mv`` each planned
file into its folder and rewrite every inbound reference to it, staged once (docs/phases.md §1.14).

A helper module: it registers no phase.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass

from git_memhtml.artifacts.listings import scan_tree
from git_memhtml.document import editors
from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.store import edits


def _target_of(href: str, moved: Mapping[str, str]) -> str | None:
    """The new href for ``href`` when it names a moved path (query and fragment kept), else ``None``."""
    cut = len(href)
    for mark in ("?", "#"):
        at = href.find(mark)
        if at != -1:
            cut = min(cut, at)
    path, suffix = href[:cut], href[cut:]
    new = moved.get(path.lstrip("/"))
    if new is None or not path.startswith("/"):
        return None
    return "/" + new + suffix


def rewrite_inbound(env: PhaseEnv, moved: Mapping[str, str]) -> tuple[int, list[str], list[str]]:
    """Rewrite every head link and ``superseded-by`` meta in the tree that names a moved path (``old → new``).

    Returns:
        ``(references rewritten, body lines, paths changed)``; nothing is staged here.
    """
    rewritten = 0
    lines: list[str] = []
    changed: list[str] = []
    for path, file in scan_tree(env.repo.root).items():
        html = file.data.decode("utf-8", errors="replace")
        todo: list[edits.Edit] = []
        for link in editors.get_links(html):
            new = _target_of(link.href, moved)
            if new is not None:
                todo += [edits.unlink(link.rel, link.href), edits.link(link.rel, new)]
                lines.append(f"rewrite {path} {link.rel} {link.href} -> {new}")
        supersede = editors.get_meta(html, "superseded-by")
        new_meta = _target_of(supersede, moved) if supersede else None
        if new_meta is not None:
            todo.append(edits.set_meta("superseded-by", new_meta))
            lines.append(f"rewrite {path} superseded-by {supersede} -> {new_meta}")
        if todo and edits.stamp_file(env.repo, path, todo, stage=False):
            rewritten += len([t for t in todo if t.kind != "unlink"])
            changed.append(path)
    return rewritten, lines, changed


@dataclass(frozen=True)
class Refiled:
    """What :func:`refile` did: ``moved`` (old path → new path, the moves that happened), ``lines`` (one ``move``
    body line each), ``rewritten`` (inbound references rewritten) and ``rewrites`` (their body lines)."""

    moved: dict[str, str]
    lines: list[str]
    rewritten: int
    rewrites: list[str]


def refile(env: PhaseEnv, moves: Mapping[str, str]) -> Refiled:
    """Move each ``source path → target folder`` of ``moves`` (``git mv``, file name and bytes kept; a move that
    does nothing is left out), rewrite the inbound references to what moved, and stage it all once.

    Raises:
        GitError / OSError / PathRefused: a move or an edit failed (the runner undoes the phase).
    """
    moved: dict[str, str] = {}
    staged: list[str] = []
    lines: list[str] = []
    for path, folder in moves.items():
        target = f"{folder}/{posixpath.basename(path)}"
        if edits.move_file(env.repo, path, target, stage=False):
            moved[path] = target
            staged += [path, target]
            lines.append(f"move {path} -> {target}")
    rewritten, rewrites, changed = rewrite_inbound(env, moved) if moved else (0, [], [])
    if staged or changed:
        env.repo.stage([*staged, *changed])  # once: each stage call rewrites the whole git index
    return Refiled(moved, lines, rewritten, rewrites)
