"""``git memhtml index rebuild|update|status``."""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import TYPE_CHECKING

import click

from git_memhtml.cli.app import utc_now
from git_memhtml.cli.common import app_of, json_option, respond
from git_memhtml.cli.lazy import LazyCommand, LazyGroup
from git_memhtml.output import kv, warn

if TYPE_CHECKING:
    from git_memhtml.index.indexer import IndexReport


@click.group("index", cls=LazyGroup, lazy={
    "verify": LazyCommand("git_memhtml.cli.doctor_cmds:verify_cmd",
                          "Compare the index with a re-projection of HEAD + work tree (reads only; `doctor --fix` "
                          "repairs)."),
})
def index_group() -> None:
    """Maintain the rebuildable SQLite index (kept in the git dir)."""


def _human(report: IndexReport) -> str:
    lines = [f"{path}: not indexed: {reason}" for path, reason in report.errors]
    if report.errors:
        lines.append(f"hint: git memhtml validate {report.errors[0][0]} shows why a file is refused; fix it and "
                     "commit, and the next update indexes it")
    lines.append(
        f"{'rebuilt' if report.rebuilt else 'updated'} to {str(report.head_sha)[:12]}: {report.added} added, "
        f"{report.modified} modified, {report.removed} removed, {report.renamed} renamed, {report.skipped} skipped, "
        f"{report.embeddings_written} vectors written"
    )
    return "\n".join(lines)


@index_group.command("rebuild")
@json_option
@click.pass_context
def rebuild_cmd(ctx: click.Context, as_json: bool) -> int:
    """Drop the index plane and re-project HEAD plus the work tree (re-embeds every chunk)."""
    from git_memhtml.index.indexer import rebuild

    app = app_of(ctx)
    with app.index(catch_up=False) as db:
        report = rebuild(app.repo(), db, app.embedder(), now=utc_now(), progress=app.progress(as_json=as_json))
    if report.embed_error:
        warn(f"embedding stopped early: {report.embed_error}; search degrades to the lexical arms until it works")
    respond(as_json, "index.report", asdict(report), lambda: _human(report))
    return 1 if report.errors else 0


@index_group.command("update")
@json_option
@click.pass_context
def update_cmd(ctx: click.Context, as_json: bool) -> int:
    """Catch the index up from the indexed commit to HEAD and the work tree (malformed files are reported)."""
    from git_memhtml.index.verify import held_refusals

    app = app_of(ctx)
    with app.index(catch_up=False) as db:
        report = app.reindex(db)
        met = {path for path, _ in report.errors}  # a refusal the pass met itself is reported once, as it said it
        known = tuple(refusal for refusal in held_refusals(db) if refusal[0] not in met)
    report = replace(report, errors=(*report.errors, *known))
    respond(as_json, "index.report", asdict(report), lambda: _human(report))
    return 1 if report.errors else 0


@index_group.command("status")
@json_option
@click.pass_context
def status_cmd(ctx: click.Context, as_json: bool) -> int:
    """Show whether the index describes HEAD, and its size."""
    from git_memhtml.index.indexer import status

    app = app_of(ctx)
    with app.index(catch_up=False) as db:
        result = status(app.repo(), db)
    respond(as_json, "index.status", asdict(result), lambda: kv(asdict(result)))
    return 0


