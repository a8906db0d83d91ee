"""Head stamps and archive moves on a work tree (docs/phases.md §0 "Edits", docs/format.md §1.10, docs/layout.md §2.4).

Every edit is a byte splice of one head line, so the article bytes and the content hash never move. A file is
written and staged only when its bytes change.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from git_memhtml.document import editors
from git_memhtml.errors import PathRefused
from git_memhtml.gitrepo import GitRepo
from git_memhtml.tree.layout import MAX_ORDINAL, archive_path_for
from git_memhtml.tree.paths import read_tree_file, symlink_problem, write_tree_file

EditKind = Literal["set", "add", "remove", "link", "unlink"]

MONOTONIC_STAMPS = frozenset({"updated", "archived"})
"""Stamps that never go back in time: a sleep run stamps midnight of its date (docs/sleep.md §2.9), which can precede a
memory written later that day; the stamp then keeps the file's own ``created``/``updated`` (ISO strings compare
in time order)."""


@dataclass(frozen=True)
class Edit:
    """One head edit: ``set``/``add``/``remove`` a meta (short name) or ``link``/``unlink`` a rel → href."""

    kind: EditKind
    name: str
    value: str | None = None


def set_meta(name: str, value: str) -> Edit:
    """Edit that sets scalar meta ``name``."""
    return Edit("set", name, value)


def add_meta(name: str, value: str) -> Edit:
    """Edit that adds a repeatable meta value (idempotent)."""
    return Edit("add", name, value)


def remove_meta(name: str, value: str | None = None) -> Edit:
    """Edit that removes meta ``name`` (one value, or every line when ``value`` is ``None``)."""
    return Edit("remove", name, value)


def link(rel: str, href: str) -> Edit:
    """Edit that adds head link ``rel`` → ``href`` (idempotent)."""
    return Edit("link", rel, href)


def unlink(rel: str, href: str) -> Edit:
    """Edit that removes head link ``rel`` → ``href``."""
    return Edit("unlink", rel, href)


def apply_edits(html: str, edits: Sequence[Edit]) -> str:
    """Return ``html`` with ``edits`` spliced into its head, in order."""
    for edit in edits:
        if edit.kind == "set":
            assert edit.value is not None
            value = edit.value
            if edit.name in MONOTONIC_STAMPS:
                value = max(value, *(editors.get_meta(html, n) or "" for n in ("created", "updated")))
            html = editors.set_meta(html, edit.name, value)
        elif edit.kind == "add":
            assert edit.value is not None
            html = editors.add_meta(html, edit.name, edit.value)
        elif edit.kind == "remove":
            html = editors.remove_meta(html, edit.name, edit.value)
        elif edit.kind == "link":
            assert edit.value is not None
            html = editors.add_link(html, edit.name, edit.value)
        else:
            assert edit.value is not None
            html = editors.remove_link(html, edit.name, edit.value)
    return html


def stamp_file(repo: GitRepo, path: str, edits: Sequence[Edit], *, stage: bool = True) -> bool:
    """Splice ``edits`` into ``path``'s head on disk; stage and return ``True`` only when the bytes changed.

    A missing file returns ``False`` (the tree is authoritative; a later phase may see a path an earlier one moved).
    ``stage=False`` leaves staging to the caller: every ``GitRepo.stage`` call rewrites the whole git index, so a
    phase stamping thousands of files collects the changed paths and stages them once.

    Raises:
        PathRefused: ``path`` is a symlink or goes through one (never followed).
    """
    target = repo.root / path
    _refuse_link(repo, path)
    if not target.is_file():
        return False
    before = read_tree_file(repo.root, path)
    after = apply_edits(before.decode("utf-8"), edits).encode("utf-8")
    if after == before:
        return False
    write_tree_file(repo.root, path, after)  # replaces the name: a hard link is never written through
    if stage:
        repo.stage([path])
    return True


def _refuse_link(repo: GitRepo, path: str) -> None:
    """Raise :class:`PathRefused` when ``path`` (or a folder on the way) is a symlink: an edit or a move never
    writes through one, even for a path that bypassed the resolver (a sleep phase, a library caller)."""
    problem = symlink_problem(repo.root, path)
    if problem is not None:
        raise PathRefused(f"{path}: {problem}", hint="replace the link by the file or folder itself", path=path)


def free_archive_path(repo: GitRepo, path: str, year: int | str) -> str | None:
    """Return ``archive/<YYYY>/<path>``, or the first free ``-2``…``-1000`` before the extension, or ``None``."""
    target = archive_path_for(path, year)
    if not os.path.lexists(repo.root / target):
        return target
    stem, dot, ext = target.rpartition(".")
    for ordinal in range(2, MAX_ORDINAL + 1):
        candidate = f"{stem}-{ordinal}{dot}{ext}"
        if not os.path.lexists(repo.root / candidate):
            return candidate
    return None


def archive_file(repo: GitRepo, path: str, *, at: str, extra: Sequence[Edit] = (), stage: bool = True) -> str | None:
    """Move ``path`` to the archive mirror (``git mv``) and stamp status, updated and archived.

    Args:
        at: the instant stamped as ``updated`` and ``archived``; its year picks ``archive/<YYYY>/``.
        extra: further edits applied in the same stamp (e.g. ``superseded-by``).
        stage: ``False`` leaves both sides unstaged: a phase archiving many files stages ``[path, target]`` of
            all of them in one ``GitRepo.stage`` call (each call reads and writes the whole git index, so one per
            file made an eviction sweep quadratic in the corpus).

    Returns:
        The archive path, or ``None`` when the source is gone or no free archive path exists.

    Raises:
        PathRefused: the source or the archive path is a symlink or goes through one.
    """
    _refuse_link(repo, path)
    if not (repo.root / path).is_file():
        return None
    target = free_archive_path(repo, path, at[:4])
    if target is None:
        return None
    _refuse_link(repo, target)
    repo.move(path, target, stage=stage)
    stamp_file(
        repo,
        target,
        [set_meta("status", "archived"), set_meta("updated", at), set_meta("archived", at), *extra],
        stage=stage,
    )
    return target


def move_file(repo: GitRepo, path: str, target: str, *, stage: bool = True) -> bool:
    """``git mv path target`` inside the work tree, bytes unchanged (placement-triage's re-filing,
    docs/phases.md §1.14); folders on the way are created.

    Returns:
        ``True`` when moved; ``False`` when ``path`` is not a file any more or ``target`` is taken (a file, a folder
        or a dangling link already has that name): nothing is overwritten.

    Raises:
        PathRefused: ``path`` or ``target`` is a symlink or goes through one (never followed).
    """
    _refuse_link(repo, path)
    _refuse_link(repo, target)
    if not (repo.root / path).is_file() or os.path.lexists(repo.root / target):
        return False
    repo.move(path, target, stage=stage)
    return True
