"""Named reads of the ``files`` table (docs/index.md §3.2) for the store, the CLI, the artifacts and the sleep phases.

Paths are repository-relative POSIX strings; instants ISO-8601 UTC strings. "Live" and "active" are the two
predicates of :mod:`git_memhtml.index.active`. Every function raises ``StorageError`` when SQLite fails.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from git_memhtml.index.active import ACTIVE_MEMORY, live_file
from git_memhtml.index.db import IndexDB
from git_memhtml.index.watermark import indexed_head


@dataclass(frozen=True)
class IndexedListing:
    """What the generated listings need of one indexed file, with the blob it was projected from."""

    path: str
    blob_sha: str
    title: str
    memory_type: str
    updated_at: str
    gist: str


@dataclass(frozen=True)
class ListedFile:
    """One row of the ``list`` page (docs/retrieval.md §4.9 "Other reads"); ``task_status`` is ``None`` for
    non-tasks."""

    path: str
    title: str
    gist: str
    memory_type: str
    updated_at: str
    archived: bool
    task_status: str | None


@dataclass(frozen=True)
class LiveReinforcement:
    """A live file (tasks included) with its ``state.access`` reinforcement count (0 without an access row)."""

    path: str
    memory_type: str
    reinforcement_count: int


@dataclass(frozen=True)
class HashHolders:
    """What one snapshot of the index says about some content hashes (the writer's dedupe, docs/store.md §5.1).

    ``holders``: ``{hash: sorted paths}`` of the active non-task rows with that hash, and of the files refused
    because a smaller path held it (``index_refusals``); hashes without one are left out. ``watermark``: the
    commit the clean rows were projected from (``None``: never stamped). ``overlay``: the paths whose rows came
    from the work tree instead (``worktree_paths``: edited, deleted, symlinked, untracked). Every committed file
    outside ``overlay`` that is unchanged since ``watermark`` is described by its row or its refusal, so the
    writer hashes only HEAD's changes since ``watermark`` and HEAD's bytes of ``overlay`` to know HEAD exactly.
    """

    holders: Mapping[str, tuple[str, ...]]
    watermark: str | None
    overlay: frozenset[str]


def hash_holders(db: IndexDB, content_hashes: Sequence[str]) -> HashHolders:
    """:class:`HashHolders` of ``content_hashes``, every part read in one snapshot (:meth:`IndexDB.read_snapshot`),
    so a concurrent index pass is seen whole or not at all. A few queries (500 hashes a statement)."""
    with db.read_snapshot():
        watermark = indexed_head(db)
        overlay = frozenset(str(path) for (path,) in db.query("SELECT path FROM worktree_paths"))
        found: dict[str, set[str]] = {d: set(ps) for d, ps in active_paths_with_hashes(db, content_hashes).items()}
        wanted = list(dict.fromkeys(content_hashes))
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            rows = db.query(f"SELECT content_hash, path FROM index_refusals WHERE content_hash IN "
                            f"({', '.join('?' for _ in part)})", tuple(part))
            for digest, path in rows:
                found.setdefault(str(digest), set()).add(str(path))
    return HashHolders({d: tuple(sorted(ps)) for d, ps in found.items()}, watermark, overlay)


def file_exists(db: IndexDB, path: str) -> bool:
    """Whether the index holds a ``files`` row at ``path`` (archived and tasks included)."""
    return db.query_one("SELECT 1 FROM files WHERE path = ?", (path,)) is not None


def indexed_blobs(db: IndexDB) -> dict[str, str]:
    """``{path: blob_sha}`` of every indexed file (archived and tasks included)."""
    return {str(path): str(blob) for path, blob in db.query("SELECT path, blob_sha FROM files")}


def listing_rows(db: IndexDB) -> list[IndexedListing]:
    """Every indexed file as :class:`IndexedListing` (storage order; callers sort)."""
    rows = db.query("SELECT path, blob_sha, title, memory_type, updated_at, gist FROM files")
    return [IndexedListing(*(str(v) for v in r)) for r in rows]


def live_reinforcements(db: IndexDB) -> list[LiveReinforcement]:
    """Every live file (tasks included) with its reinforcement count, by path."""
    rows = db.query(
        "SELECT f.path, f.memory_type, coalesce(a.reinforcement_count, 0) FROM files f "
        f"LEFT JOIN state.access a ON a.path = f.path WHERE {live_file('f')} ORDER BY f.path"
    )
    return [LiveReinforcement(str(path), str(kind), int(n)) for path, kind, n in rows]


def list_page(
    db: IndexDB,
    *,
    memory_type: str | None,
    workspace: str | None,
    para: str | None,
    tag: str | None,
    entity_key: str | None,
    include_archived: bool,
    after: str | None,
    limit: int,
) -> list[ListedFile]:
    """Up to ``limit`` files in path order after ``after`` (keyset), filtered by equality on each given value.

    ``tag`` matches ``file_tags.tag``; ``entity_key`` matches ``file_entities.entity_key`` (already normalised by
    ``domain.entities.entity_key``). Archived files only with ``include_archived``. Tasks are included.
    """
    where = ["1 = 1"]
    params: list[Any] = []
    if not include_archived:
        where.append(live_file("f"))
    for column, value in (("f.memory_type", memory_type), ("f.workspace", workspace), ("f.para", para)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    if tag is not None:
        where.append("EXISTS (SELECT 1 FROM file_tags t WHERE t.path = f.path AND t.tag = ?)")
        params.append(tag)
    if entity_key is not None:
        where.append("EXISTS (SELECT 1 FROM file_entities e WHERE e.path = f.path AND e.entity_key = ?)")
        params.append(entity_key)
    if after is not None:
        where.append("f.path > ?")
        params.append(after)
    rows = db.query(
        "SELECT f.path, f.title, f.gist, f.memory_type, f.updated_at, f.archived, f.task_status FROM files f "
        f"WHERE {' AND '.join(where)} ORDER BY f.path LIMIT ?",
        (*params, limit),
    )
    return [
        ListedFile(str(path), title, gist, kind, updated, bool(archived), status)
        for path, title, gist, kind, updated, archived, status in rows
    ]


def active_paths_with_hashes(db: IndexDB, content_hashes: Sequence[str]) -> dict[str, list[str]]:
    """Paths of the active memories holding each of ``content_hashes``, in a few queries (500 hashes a statement):
    ``{hash: sorted paths}``, hashes without a holder left out (at most one path is committed: the partial unique
    index; the index also covers uncommitted work-tree files). Read by :func:`hash_holders`."""
    out: dict[str, list[str]] = {}
    wanted = list(dict.fromkeys(content_hashes))
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        rows = db.query(
            f"SELECT content_hash, path FROM files WHERE content_hash IN ({', '.join('?' for _ in part)}) "
            f"AND {ACTIVE_MEMORY} ORDER BY path", tuple(part))
        for digest, path in rows:
            out.setdefault(str(digest), []).append(str(path))
    return out


@dataclass(frozen=True)
class TaskRow:
    """One task as the index holds it (``files`` columns; ``due_at`` an ISO date or None)."""

    path: str
    title: str
    gist: str
    task_status: str
    due_at: str | None
    updated_at: str
    workspace: str | None
    archived: bool


def task_page(
    db: IndexDB,
    *,
    statuses: Sequence[str],
    workspace: str | None,
    include_archived: bool,
    after: str | None,
    limit: int,
) -> list[TaskRow]:
    """Up to ``limit`` tasks in path order after ``after`` (keyset) whose ``task_status`` is one of ``statuses``
    (all when empty), in ``workspace`` when given. Archived (done) tasks only with ``include_archived``; a task file
    without a status counts as ``todo``, the status its template writes (docs/store.md §5.6)."""
    where = ["f.memory_type = 'task'"]
    params: list[Any] = []
    if not include_archived:
        where.append(live_file("f"))
    if statuses:
        where.append(f"coalesce(f.task_status, 'todo') IN ({', '.join('?' for _ in statuses)})")
        params.extend(statuses)
    if workspace is not None:
        where.append("f.workspace = ?")
        params.append(workspace)
    if after is not None:
        where.append("f.path > ?")
        params.append(after)
    rows = db.query(
        "SELECT f.path, f.title, f.gist, coalesce(f.task_status, 'todo'), f.due_at, f.updated_at, f.workspace, "
        f"f.archived FROM files f WHERE {' AND '.join(where)} ORDER BY f.path LIMIT ?",
        (*params, limit),
    )
    return [TaskRow(str(path), title, gist, status, due, updated, ws, bool(archived))
            for path, title, gist, status, due, updated, ws, archived in rows]

