"""The work-tree overlay of an index pass (docs/index.md §3.7 steps 3 and 5): dirty files win over HEAD, the
paths they cover are recorded in ``worktree_paths``, and symlinks (in the work tree or committed) are reported and
never read."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Sequence

from git_memhtml.document.model import PARA_BUCKETS
from git_memhtml.errors import (
    PathRefused,
)
from git_memhtml.index.active import active_memory
from git_memhtml.index.db import IndexDB
from git_memhtml.index.project import is_indexable
from git_memhtml.index.source import DirtyPath, HeadBlobs, IndexedRepo, IndexPass, Parser, git_blob_sha
from git_memhtml.index.upsert import SQL_VARS, indexed_blob, project_bytes, upsert
from git_memhtml.index.write import delete_path
from git_memhtml.pathnames import is_utf8_name, shown_name
from git_memhtml.tree.paths import SYMLINK_REFUSED, read_tree_file, tree_file_problem

COMMITTED_LINK = f"is committed as a symlink: {SYMLINK_REFUSED}"
"""The error of a path whose tree entry is a symlink (mode 120000): its blob is a link target, never a memory."""


def overlay_paths(db: IndexDB) -> set[str]:
    """The ``worktree_paths`` overlay the last pass recorded."""
    return {str(r[0]) for r in db.query("SELECT path FROM worktree_paths")}


def apply_worktree(repo: IndexedRepo, db: IndexDB, run: IndexPass, head: HeadBlobs, now: str, parse: Parser,
                    entries: Sequence[DirtyPath], previous: Collection[str]) -> frozenset[str]:
    """Project the dirty indexable files ``entries`` (``repo.dirty()``; adds first, deletes last so moved chunks
    keep their vectors); restore from HEAD any path of ``previous`` (the overlay the last pass recorded) that is
    clean again. Returns the dirty indexable paths, the new ``worktree_paths`` overlay (rewritten only when it
    changed). Cost: O(dirty + previous) rows and files, whatever the size of the tree."""
    for entry in entries:  # a linked folder (or a link of another name) in a bucket: reported, never entered
        if not is_indexable(entry.path) and not entry.deleted and _in_bucket(entry.path) \
                and os.path.islink(repo.root / entry.path):
            refuse_link(db, run, entry.path, f"is a symlink: {SYMLINK_REFUSED}")
    dirty = [d for d in entries if is_indexable(d.path)]
    dirty_paths = {d.path for d in dirty}
    deletes: list[str] = []
    for entry in dirty:
        data = None if entry.deleted else disk_bytes(repo, db, run, entry.path)
        if data is None:
            deletes.append(entry.path)
            continue
        upsert(db, run, entry.path, data, git_blob_sha(data), now, parse)
    for path in deletes:
        if not is_utf8_name(path):  # never indexed
            continue
        with db.atomic():
            if delete_path(db, path):
                run.removed += 1
    dirty_paths = {p for p in dirty_paths if is_utf8_name(p)}
    clean_again = sorted(set(previous) - dirty_paths)
    head.fetch(clean_again)
    for path in clean_again:
        blob = head.get(path)
        if blob is None:
            with db.atomic():
                if delete_path(db, path):
                    run.removed += 1
        else:
            upsert(db, run, path, repo.read_blob(blob), blob, now, parse)
    if dirty_paths != set(previous):
        with db.atomic():
            db.execute("DELETE FROM worktree_paths")
            db.executemany("INSERT INTO worktree_paths(path) VALUES (?)", [(p,) for p in sorted(dirty_paths)])
    return frozenset(dirty_paths)


def disk_bytes(repo: IndexedRepo, db: IndexDB, run: IndexPass, path: str) -> bytes | None:
    """The work-tree bytes of ``path``, read without following a symlink anywhere on the way; ``None`` when no
    regular file is there. A symlink (or a folder symlink on the way, or a non-regular file) is never read: its
    rows are dropped and it is reported once in ``run.errors`` as ``(path, "is a symlink: refused, …")``."""
    problem = tree_file_problem(repo.root, path)
    if problem is None:
        try:
            return read_tree_file(repo.root, path)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except PathRefused as exc:  # replaced by a link between the check and the open
            problem = exc.message
    refuse_link(db, run, path, problem)
    return None


def refuse_link(db: IndexDB, run: IndexPass, path: str, problem: str) -> None:
    """Drop the rows of ``path`` and report ``(shown path, problem)`` once in ``run.errors`` (a symlink)."""
    if is_utf8_name(path):  # a name SQLite cannot hold was never indexed
        with db.atomic():
            if delete_path(db, path):
                run.removed += 1
    entry = (shown_name(path), problem)
    if entry not in run.errors:
        run.errors.append(entry)


def refuse_committed_links(db: IndexDB, run: IndexPass, head: HeadBlobs, paths: Iterable[str] | None) -> None:
    """Report (and drop the rows of) every indexable or bucket path HEAD commits as a symlink; ``paths`` limits
    the check to those paths (an incremental pass: one tree look-up each), ``None`` checks the whole tree (a
    rebuild)."""
    links = head.links() if paths is None else [p for p in sorted(set(paths)) if head.is_link(p)]
    for path in links:
        if is_indexable(path) or _in_bucket(path):
            refuse_link(db, run, path, COMMITTED_LINK)


def _in_bucket(path: str) -> bool:
    return path.split("/", 1)[0] in PARA_BUCKETS


def retry_refusals(repo: IndexedRepo, db: IndexDB, run: IndexPass, head: HeadBlobs, overlay: Collection[str], now: str,
                    parse: Parser, hashes: Collection[str] | None) -> None:
    """Re-try, smallest path first, every refused file whose content no smaller live path holds any more (the
    holder was deleted, archived, moved or edited in this pass). ``hashes`` limits the search to refusals of those
    content hashes (what the paths this pass touched held before it, and what it parsed: a holder can only go by
    being touched, see :func:`noting_hashes`); ``None`` searches every refusal (a rebuild), and an empty
    ``hashes`` costs nothing. A path of ``overlay`` (the dirty work-tree paths) is read from the work tree; any
    other is clean, so its bytes are HEAD's blob and the work tree is not read (docs/index.md §3.7 step 5): a pass
    over a tree with no work tree (index/snapshot.py) never touches one."""
    free = (f"NOT EXISTS (SELECT 1 FROM files f WHERE f.content_hash = r.content_hash AND {active_memory('f')} "
            "AND f.path < r.path)")
    if hashes is None:
        rows = db.query(f"SELECT r.path FROM index_refusals r WHERE {free} ORDER BY r.path")
    else:
        found: set[str] = set()
        wanted = sorted(set(hashes))
        for start in range(0, len(wanted), SQL_VARS):
            part = wanted[start : start + SQL_VARS]
            found.update(r[0] for r in db.query(
                f"SELECT r.path FROM index_refusals r WHERE r.content_hash IN ({', '.join('?' * len(part))}) "
                f"AND {free}", part))
        rows = [(path,) for path in sorted(found)]
    for (path,) in rows:
        if path in overlay:
            data = disk_bytes(repo, db, run, path)
        else:
            blob = head.get(path)
            data = None if blob is None else repo.read_blob(blob)
        if data is None:
            with db.atomic():
                db.execute("DELETE FROM index_refusals WHERE path = ?", (path,))
            continue
        project_bytes(db, run, path, data, git_blob_sha(data), now, parse, count="added")
    if rows:
        run.errors[:] = [(p, why) for p, why in run.errors if indexed_blob(db, p) is None]
