"""Task verbs: add, status, list (docs/store.md §5.6). A task is a memory of type task; ``done`` archives it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from git_memhtml.service.memories import write_one

if TYPE_CHECKING:
    from git_memhtml.index.db import IndexDB
    from git_memhtml.service.door import Door
    from git_memhtml.store.ops import WriteOp
    from git_memhtml.store.tasks import TaskStatusResult

OPEN_STATUSES = ("todo", "doing", "blocked")
"""What ``task list`` shows without a status: the tasks not done (spec digest §5.6)."""
TASK_LIST_LIMIT_MAX = 500
"""The largest ``task list`` page (the ``list`` command's cap, docs/cli.md)."""


def add(door: Door, db: IndexDB, op: WriteOp, *, now: str, hints: Mapping[str, str]) -> dict[str, Any]:
    """Open the task ``op`` (type task): one commit, never deduplicated. Returns ``task add --json``'s data
    ``{path, status, due, commitSha}``.

    Raises:
        MemhtmlError: the op was refused (``service/memories.py:raise_first_error``).
    """
    written = write_one(door, db, op, now=now, hints=hints)
    return {"path": written.path, "status": op.draft.task_status or "todo", "due": op.draft.due,
            "commitSha": written.commit_sha}


def set_status(door: Door, db: IndexDB, path: str, status: str, *, now: str,
               reason: str | None = None) -> TaskStatusResult:
    """Set the live task ``path``'s status in one commit (same status: nothing); ``done`` archives it and moves its
    access row. :func:`status_json` is ``task status --json``'s data.

    Raises:
        InvalidMemory: not a task, or an unknown status; WriteConflict: as ``store/tasks.py:set_task_status``.
    """
    from git_memhtml.index.access import rename_access
    from git_memhtml.store.tasks import set_task_status

    result = set_task_status(door.repo(), path, status, now=now, reason=reason)
    if result.archive_path is not None:
        rename_access(db, result.path, result.archive_path)
    if result.commit_sha:
        door.catch_up_after_commit(db)
    return result


def status_json(result: TaskStatusResult) -> dict[str, Any]:
    """``{path, status, previous, changed, archivePath, commitSha}``."""
    return {"path": result.path, "status": result.status, "previous": result.previous, "changed": result.changed,
            "archivePath": result.archive_path, "commitSha": result.commit_sha}


def page(db: IndexDB, *, statuses: Sequence[str] = (), workspace: str | None = None, limit: int = 50,
         cursor: str | None = None) -> dict[str, Any]:
    """One page of tasks in path order as ``task list --json``'s data ``{tasks, nextCursor}``: the open ones when
    ``statuses`` is empty; ``done`` includes the archived (done) tasks."""
    from git_memhtml.index.memories import task_page

    wanted = tuple(statuses) or OPEN_STATUSES
    limit = max(1, min(limit, TASK_LIST_LIMIT_MAX))
    rows = task_page(db, statuses=wanted, workspace=workspace, include_archived="done" in wanted, after=cursor,
                     limit=limit + 1)
    shown = rows[:limit]
    tasks = [{"path": r.path, "title": r.title, "gist": r.gist, "status": r.task_status, "due": r.due_at,
              "updatedAt": r.updated_at, "workspace": r.workspace, "archived": r.archived} for r in shown]
    return {"tasks": tasks, "nextCursor": shown[-1].path if len(rows) > limit else None}
