"""Memory commands: init, write, apply, correct, archive, link, read, list."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import click

from git_memhtml.cli.app import utc_now
from git_memhtml.cli.common import F, app_of, check_entity_flag, init_memory, json_option, respond, writes
from git_memhtml.cli.inputs import read_text_input
from git_memhtml.cli.op_schema_help import OP_SCHEMA_TEXT
from git_memhtml.cut import clip
from git_memhtml.document.draft import HEAD_FIELDS
from git_memhtml.document.model import MEMORY_TYPES, PARA_BUCKETS, WRITABLE_TYPES
from git_memhtml.document.secret_gate import SECRET_HINT
from git_memhtml.errors import InvalidMemory, MemhtmlError, PathNotFound, SecretInMemory, UsageError, WriteConflict
from git_memhtml.output import table, warn
from git_memhtml.tree.paths import VERB_NEEDS, resolve_memory_path

if TYPE_CHECKING:
    from git_memhtml.store.ops import WriteOp

APPLY_EPILOG = ("\b\nJSONL op schema: one JSON object per line, unknown fields refused (docs/apply.md):\n"
                + OP_SCHEMA_TEXT)
"""``apply -h``'s op schema, generated from the :class:`~git_memhtml.store.ops.OpLine` model
(``store.ops.op_schema``) into :mod:`git_memhtml.cli.op_schema_help`, so help imports no pydantic."""


@click.command("init")
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@json_option
@click.pass_context
def init_cmd(ctx: click.Context, path: Path | None, as_json: bool) -> int:
    """Create or complete a memory repository (PARA folders, .gitattributes, .gitignore, merge config)."""
    base = app_of(ctx).repo_path or Path.cwd()  # -C DIR: PATH is relative to DIR, as for git
    report = init_memory(base / path if path is not None else base, env=app_of(ctx).env)
    respond(
        as_json,
        "repo.init",
        asdict(report),
        lambda: f"{'created' if report.created_repo else 'scaffolded'} {report.root}"
        + (f" ({len(report.written)} files, commit {report.commit_sha[:12]})" if report.commit_sha
           else " (nothing to add)"),
    )
    return 0


def _op(ctx: click.Context, flags: Mapping[str, object], *, path: str | None = None,
        workspace: str | None = None, fixed: Mapping[str, object] | None = None) -> WriteOp:
    """The op of a ``write``/``correct`` invocation: each ``HEAD_FIELDS`` row with a ``flag`` this command has
    fills its ``op_key`` from that option's value (``--body`` paragraphs joined by blank lines, ``--article-html``
    read from its file), then the op model validates it, as it does an ``apply`` line. ``flags`` maps click
    parameter names to values; ``fixed`` adds op fields the command itself decides (``task add``'s type).

    Raises:
        UsageError: the op model refused the flags (naming the field), or ``--article-html`` is unreadable.
    """
    from pydantic import ValidationError

    from git_memhtml.store.ops import WriteOp

    names = {opt: param.name for param in ctx.command.params for opt in param.opts}
    values: dict[str, object] = {"path": path, "workspace": workspace, **(fixed or {})}
    for spec in HEAD_FIELDS:
        name = names.get(spec.flag) if spec.flag is not None else None
        if name is None or spec.op_key is None:
            continue
        value = flags.get(name)
        if spec.kind == "body":
            value = "\n\n".join(value) if isinstance(value, tuple) and value else None
        elif spec.kind == "article":
            value = _read_html(value if isinstance(value, str) else None)
        values[spec.op_key] = value
    try:
        return WriteOp.from_json({k: v for k, v in values.items() if v not in (None, ())})
    except ValidationError as exc:
        reasons = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'flags'}: {e['msg'].removeprefix('Value error, ')}"
            for e in exc.errors()
        )
        raise UsageError(f"invalid memory: {reasons}",
                         hint="fix the named flag; a memory needs --title and --claim "
                              "(or --article-html FILE)") from exc


def _read_html(source: str | None) -> str | None:
    if source is None:
        return None
    return read_text_input(source, flag="--article-html")[0]


def write_options(fn: F) -> F:
    """Attach the memory-content flags."""
    for option in reversed(
        [
            click.option("--title", required=True, help="Title of the memory."),
            click.option("--claim", help="The one-sentence claim (becomes the <mark>), verbatim."),
            click.option("--body", multiple=True, help="A body paragraph (repeatable)."),
            click.option("--article-html", "article_html", help="File (or -) holding the article inner HTML."),
            click.option("--tag", "tags", multiple=True, help="Tag (repeatable)."),
            click.option("--entity", "entities", multiple=True, help="Entity type:name (repeatable)."),
            click.option("--session-id", help="Provenance: the agent session id."),
        ]
    ):
        fn = option(fn)
    return fn


@click.command("write")
@click.option("--type", "memory_type", required=True, type=click.Choice(WRITABLE_TYPES))
@click.option("--path", help="Explicit repository path (default: placement rules).")
@click.option("--workspace", help="Project workspace (files go to projects/<ws>/).")
@click.option("--importance", type=click.IntRange(1, 10))
@click.option("--confidence", type=click.FloatRange(0, 1))
@write_options
@json_option
@click.pass_context
@writes()
def write_cmd(ctx: click.Context, /, path: str | None, workspace: str | None, as_json: bool, **flags: object) -> int:
    """Write one memory as one commit (deduplicated by content hash)."""
    from git_memhtml.service.memories import write_one

    app = app_of(ctx)
    if path is not None:
        path = app.memory_path(path, "write", name="--path")
    op = _op(ctx, flags, path=path, workspace=workspace)
    article = flags.get("article_html")
    try:
        with app.index() as db:
            written = write_one(app, db, op, now=utc_now(), hints=OP_HINTS)
    except InvalidMemory as exc:
        if isinstance(article, str):  # the article came from a file: the error names it (trust rule: every error)
            exc.message = f"--article-html {article}: {exc.message}"
            exc.hint = f"fix the article in {article} and write again"
        raise
    respond(as_json, "memory.written", written.json(),
            lambda: f"{'deduplicated: already stored at' if written.deduped else 'wrote'} {written.path}")
    return 0


OP_HINTS: dict[str, str] = {
    UsageError.code: "see git memhtml write -h",
    WriteConflict.code: "choose another --path, or git memhtml correct the memory already there",
    PathNotFound.code: "check the path with git memhtml list",
    SecretInMemory.code: SECRET_HINT,
    InvalidMemory.code: "fix the memory and write again",
}
"""The CLI's hint for a refused op, by its result ``code`` (``service/memories.py:raise_first_error``)."""


@click.command("apply", epilog=APPLY_EPILOG)
@click.option("--file", "source", default="-", show_default=True, help="JSONL stream of write ops, or - for stdin.")
@click.option("--continue-on-error", is_flag=True,
              help="Commit the ops that pass instead of refusing the batch; bad lines and refused ops are listed "
                   "as failed results (exit 1 when any op failed, with the others committed).")
@json_option
@click.pass_context
@writes()
def apply_cmd(ctx: click.Context, /, source: str, continue_on_error: bool, as_json: bool) -> int:
    """Write a JSONL batch of memories as one commit; atomic unless --continue-on-error (docs/apply.md)."""
    from git_memhtml.service.memories import apply_ops
    from git_memhtml.store.ops import WriteOp, parse_op_lines, parse_op_stream

    app = app_of(ctx)
    text, label = read_text_input(source, flag="--file")
    parsed = parse_op_lines(text, source=label) if continue_on_error else parse_op_stream(text, source=label)
    if not parsed:
        raise UsageError(f"{label}: the apply stream holds no operations", hint="give one JSON object per line")
    root = app.repo().root  # a path that names no memory refuses its op (the batch, when atomic) before the index opens
    for number, op in enumerate(parsed, start=1):
        if isinstance(op, WriteOp) and op.path is not None and not continue_on_error:
            resolve_memory_path(root, op.path, need=VERB_NEEDS["apply"], name=f"{label}: op #{number} path")
    with app.index() as db:
        try:
            applied = apply_ops(app, db, parsed, now=utc_now(), label=label, continue_on_error=continue_on_error,
                                retry_hint="--continue-on-error", progress=app.progress(as_json=as_json))
        except MemhtmlError as exc:
            for r in [r for r in exc.details.get("results", []) if r["code"]][1:]:
                warn(f"op #{r['index'] + 1}: {r['error']}")
            raise
    failed = applied.failed
    for r in failed:
        warn(f"op #{r.index + 1} not written: {r.error}")

    def human() -> str:
        s = applied.result.summary
        sha = applied.result.commit_sha
        return (f"{s['written']} written, {s['deduped']} deduplicated, {s['failed']} failed, {s['skipped']} skipped"
                + (f"; commit {sha[:12]}" if sha else "; nothing written"))

    respond(as_json, "batch.applied", applied.json(), human)
    return 1 if failed else 0  # exit 0 means every op is in HEAD (docs/apply.md)


@click.command("correct")
@click.argument("target")
@click.option("--type", "memory_type", type=click.Choice(WRITABLE_TYPES), help="Default: the target's type.")
@click.option("--reason", help="Why the target is wrong.")
@write_options
@json_option
@click.pass_context
@writes()
def correct_cmd(ctx: click.Context, /, target: str, memory_type: str | None, reason: str | None, as_json: bool,
                **flags: object) -> int:
    """Write a memory that supersedes TARGET; TARGET is archived (one commit)."""
    from git_memhtml.service.memories import correct, target_type

    app = app_of(ctx)
    rel = app.memory_path(target, "correct", name="TARGET")
    if memory_type is None:
        memory_type = target_type(app, rel)
    op = _op(ctx, {**flags, "memory_type": memory_type})
    with app.index() as db:
        result = correct(app, db, rel, op, reason=reason, now=utc_now())
    respond(as_json, "memory.corrected", asdict(result),
            lambda: f"wrote {result.path}; archived the target to {result.archived_path}")
    return 0


@click.command("archive")
@click.argument("path")
@click.option("--reason", required=True, help="Why the memory is archived.")
@json_option
@click.pass_context
@writes()
def archive_cmd(ctx: click.Context, path: str, reason: str, as_json: bool) -> int:
    """Move a memory into archive/<YYYY>/ (git mv) as one commit; nothing is ever deleted."""
    from git_memhtml.service.memories import archive

    app = app_of(ctx)
    rel = app.memory_path(path, "archive")
    with app.index() as db:
        result = archive(app, db, rel, reason=reason, now=utc_now())
    respond(as_json, "memory.archived", asdict(result), lambda: f"archived {result.path} → {result.archive_path}")
    return 0


@click.command("link")
@click.argument("src")
@click.argument("rel")
@click.argument("dst")
@json_option
@click.pass_context
@writes()
def link_cmd(ctx: click.Context, src: str, rel: str, dst: str, as_json: bool) -> int:
    """Add a typed head link SRC --REL--> DST (one commit when it changes the file)."""
    from git_memhtml.document.model import REL_CLASSES
    from git_memhtml.service.memories import link

    if rel.replace("-", "_") not in REL_CLASSES:
        raise UsageError(f"unknown rel {rel!r}", hint="one of " + ", ".join(sorted(REL_CLASSES)))
    app = app_of(ctx)
    src = app.memory_path(src, "link-src", name="SRC")
    dst = app.memory_path(dst, "link-dst", name="DST")
    with app.index() as db:
        linked = link(app, db, src, rel, dst)
    respond(as_json, "memory.linked", linked.json(),
            lambda: f"linked {src} --{rel}--> {dst}" if linked.commit_sha else "already linked; nothing changed")
    return 0


@click.command("read")
@click.argument("path")
@json_option
@click.pass_context
def read_cmd(ctx: click.Context, path: str, as_json: bool) -> int:
    """Show one memory (an explicit read: it counts as an access)."""
    from git_memhtml.service.memories import read

    app = app_of(ctx)
    rel = app.memory_path(path, "read")
    with app.index(catch_up=False) as db:
        data = read(app, db, rel, now=utc_now())
    respond(as_json, "memory.detail", data,
            lambda: f"{data['title']}\n{rel} · {data['memoryType']} · {data['status']}\n\n{data['body']}")
    return 0


@click.command("list")
@click.option("--type", "memory_type", type=click.Choice(MEMORY_TYPES))
@click.option("--workspace")
@click.option("--tag")
@click.option("--entity")
@click.option("--para", type=click.Choice(PARA_BUCKETS))
@click.option("--include-archived", is_flag=True)
@click.option("--limit", type=click.IntRange(1, 500), default=50, show_default=True)
@click.option("--cursor", help="Continue after this path.")
@json_option
@click.pass_context
def list_cmd(
    ctx: click.Context,
    /,
    memory_type: str | None,
    workspace: str | None,
    tag: str | None,
    entity: str | None,
    para: str | None,
    include_archived: bool,
    limit: int,
    cursor: str | None,
    as_json: bool,
) -> int:
    """List memories in path order (tasks included)."""
    from git_memhtml.service.memories import list_page

    check_entity_flag(entity)
    app = app_of(ctx)
    with app.index() as db:
        data = list_page(db, memory_type=memory_type, workspace=workspace, tag=tag, entity=entity, para=para,
                         include_archived=include_archived, limit=limit, cursor=cursor)
    rows, next_cursor = data["files"], data["nextCursor"]
    respond(as_json, "memory.list", data, lambda: table(
        ["path", "type", "updated", "title"],
        [[r["path"], r["memoryType"], r["updatedAt"], clip(r["title"], 60)] for r in rows],
    ) + (f"\nmore: --cursor {next_cursor}" if next_cursor else ""))
    return 0


"""``search`` lives in :mod:`git_memhtml.cli.retrieval_cmds` with recall, neighbors and reinforce."""
