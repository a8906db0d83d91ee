"""Task commands: ``task add``, ``task status``, ``task list`` (docs/store.md §5.6)."""

from __future__ import annotations

from functools import partial

import click

from git_memhtml.cli.app import utc_now
from git_memhtml.cli.common import app_of, json_option, respond, writes
from git_memhtml.cli.memory_cmds import _op, _raise_first_error, write_options
from git_memhtml.document.model import TASK_STATUSES
from git_memhtml.output import table

TASK_LIST_LIMIT_MAX = 500
"""The largest ``task list --limit`` (the ``list`` command's cap, docs/cli.md)."""

OPEN_STATUSES = ("todo", "doing", "blocked")
"""What ``task list`` shows without ``--status``: the tasks not done (spec digest §5.6)."""


@click.group("task")
def task_group() -> None:
    """Open, move and close tasks (a task is a memory of type task; done archives it)."""


@task_group.command("add")
@click.option("--path", help="Explicit repository path (default: placement rules, areas/inbox/tasks/).")
@click.option("--workspace", help="Project workspace (files go to projects/<ws>/).")
@click.option("--status", "task_status", type=click.Choice(OPEN_STATUSES), help="Initial status (default: todo).")
@click.option("--due", help="Due date, YYYY-MM-DD.")
@click.option("--importance", type=click.IntRange(1, 10))
@write_options
@json_option
@click.pass_context
@writes()
def task_add_cmd(ctx: click.Context, /, path: str | None, workspace: str | None, task_status: str | None,
                 due: str | None, as_json: bool, **flags: object) -> int:
    """Open a task: a write of type task, one commit (tasks are never deduplicated)."""
    from git_memhtml.index.memories import hash_holders
    from git_memhtml.store.writer import apply_batch

    app = app_of(ctx)
    if path is not None:
        path = app.memory_path(path, "write", name="--path")
    fixed = {"type": "task", "status": task_status, "due": due}
    op = _op(ctx, flags, path=path, workspace=workspace, fixed={k: v for k, v in fixed.items() if v is not None})
    with app.index() as db:
        result = apply_batch(app.repo(), [op], now=utc_now(), verb="write", dedupe_view=partial(hash_holders, db))
        _raise_first_error(result.results)
        if result.commit_sha:
            app.catch_up_after_commit(db, result.documents)
    first = result.results[0]
    data = {"path": first.path, "status": op.draft.task_status or "todo", "due": op.draft.due,
            "commitSha": result.commit_sha}
    respond(as_json, "task.written", data, lambda: f"opened task {first.path}")
    return 0


@task_group.command("status")
@click.argument("path")
@click.argument("status", type=click.Choice(TASK_STATUSES))
@click.option("--reason", help="With done: the archive reason (default: 'task done').")
@json_option
@click.pass_context
@writes()
def task_status_cmd(ctx: click.Context, path: str, status: str, reason: str | None, as_json: bool) -> int:
    """Set a task's status: one commit; the same status changes nothing; done archives the task."""
    from git_memhtml.index.access import rename_access
    from git_memhtml.store.tasks import set_task_status

    app = app_of(ctx)
    rel = app.memory_path(path, "task-status")
    with app.index() as db:
        result = set_task_status(app.repo(), rel, status, now=utc_now(), reason=reason)
        if result.archive_path is not None:
            rename_access(db, result.path, result.archive_path)
        if result.commit_sha:
            app.catch_up_after_commit(db)

    def human() -> str:
        if not result.changed:
            return f"{result.path} is already {status}; nothing changed"
        if result.archive_path is not None:
            return f"done: {result.path} → {result.archive_path}"
        return f"{result.path}: {result.previous} → {status}"

    data = {"path": result.path, "status": result.status, "previous": result.previous, "changed": result.changed,
            "archivePath": result.archive_path, "commitSha": result.commit_sha}
    respond(as_json, "task.updated", data, human)
    return 0


@task_group.command("list")
@click.option("--status", "statuses", multiple=True, type=click.Choice(TASK_STATUSES),
              help="Only tasks with this status (repeatable; default: todo, doing, blocked).")
@click.option("--workspace")
@click.option("--limit", type=click.IntRange(1, TASK_LIST_LIMIT_MAX), default=50, show_default=True)
@click.option("--cursor", help="Continue after this path.")
@json_option
@click.pass_context
def task_list_cmd(ctx: click.Context, statuses: tuple[str, ...], workspace: str | None, limit: int,
                  cursor: str | None, as_json: bool) -> int:
    """List tasks in path order: open ones by default; --status done includes the archived (done) ones."""
    from git_memhtml.index.memories import task_page

    wanted = statuses or OPEN_STATUSES
    app = app_of(ctx)
    with app.index() as db:
        rows = task_page(db, statuses=wanted, workspace=workspace, include_archived="done" in wanted,
                         after=cursor, limit=limit + 1)
    page = rows[:limit]
    tasks = [{"path": r.path, "title": r.title, "gist": r.gist, "status": r.task_status, "due": r.due_at,
              "updatedAt": r.updated_at, "workspace": r.workspace, "archived": r.archived} for r in page]
    next_cursor = page[-1].path if len(rows) > limit else None
    respond(as_json, "task.list", {"tasks": tasks, "nextCursor": next_cursor},
            lambda: table(["status", "due", "path", "title"],
                          [[t["status"], t["due"] or "", t["path"], t["title"]] for t in tasks]))
    return 0
