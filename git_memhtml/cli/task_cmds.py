"""Task commands: ``task add``, ``task status``, ``task list`` (docs/store.md §5.6)."""

from __future__ import annotations

import click

from git_memhtml.cli.app import utc_now
from git_memhtml.cli.common import app_of, json_option, respond, writes
from git_memhtml.cli.memory_cmds import OP_HINTS, _op, write_options
from git_memhtml.document.model import TASK_STATUSES
from git_memhtml.output import table
from git_memhtml.service.tasks import OPEN_STATUSES, TASK_LIST_LIMIT_MAX


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
    from git_memhtml.service.tasks import add

    app = app_of(ctx)
    if path is not None:
        path = app.memory_path(path, "write", name="--path")
    fixed = {"type": "task", "status": task_status, "due": due}
    op = _op(ctx, flags, path=path, workspace=workspace, fixed={k: v for k, v in fixed.items() if v is not None})
    with app.index() as db:
        data = add(app, db, op, now=utc_now(), hints=OP_HINTS)
    respond(as_json, "task.written", data, lambda: f"opened task {data['path']}")
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
    from git_memhtml.service.tasks import set_status, status_json

    app = app_of(ctx)
    rel = app.memory_path(path, "task-status")
    with app.index() as db:
        result = set_status(app, db, rel, status, now=utc_now(), reason=reason)

    def human() -> str:
        if not result.changed:
            return f"{result.path} is already {status}; nothing changed"
        if result.archive_path is not None:
            return f"done: {result.path} → {result.archive_path}"
        return f"{result.path}: {result.previous} → {status}"

    respond(as_json, "task.updated", status_json(result), human)
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
    from git_memhtml.service.tasks import page

    app = app_of(ctx)
    with app.index() as db:
        data = page(db, statuses=statuses, workspace=workspace, limit=limit, cursor=cursor)
    tasks = data["tasks"]
    respond(as_json, "task.list", data,
            lambda: table(["status", "due", "path", "title"],
                          [[t["status"], t["due"] or "", t["path"], t["title"]] for t in tasks]))
    return 0
