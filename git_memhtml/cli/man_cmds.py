"""``git memhtml man [--out DIR]``: the ``git-memhtml(1)`` page, so ``git memhtml --help`` works (docs/manpage.md)."""

from __future__ import annotations

from pathlib import Path

import click

from git_memhtml import __version__
from git_memhtml.cli.common import json_option, respond
from git_memhtml.cli.manpage import MAN_NAME, render_manpage
from git_memhtml.errors import UsageError
from git_memhtml.output import emit


@click.command("man")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=None,
              help=f"Write {MAN_NAME} into this folder (created if missing) instead of printing it.")
@json_option
@click.pass_context
def man_cmd(ctx: click.Context, out_dir: Path | None, as_json: bool) -> int:
    """Print or write the git-memhtml(1) man page, generated from these commands."""
    page = render_manpage(ctx.find_root().command, version=__version__)
    if out_dir is None:
        if as_json:
            respond(True, "man", {"path": None, "page": page}, lambda: "")
        else:
            emit(page.rstrip("\n"))
        return 0
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"--out {out_dir}: not a folder", hint="pass a folder, e.g. --out ~/.local/share/man/man1")
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / MAN_NAME
    target.write_text(page, encoding="utf-8")
    respond(as_json, "man", {"path": str(target), "bytes": len(page.encode("utf-8"))}, lambda: f"wrote {target}")
    return 0


