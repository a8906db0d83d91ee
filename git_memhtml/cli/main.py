"""The ``git-memhtml`` entry point: the click group and the one error translator (DESIGN §3.8).

Exit codes: 0 ok, 1 failure or refusal, 2 usage, 3 internal error (a crash report path is printed), 130
interrupted. With ``--json`` errors are one envelope on stdout as well.
"""

from __future__ import annotations

import platform
import sys
import tempfile
import traceback
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

import click

from git_memhtml import __version__
from git_memhtml.cli.app import App
from git_memhtml.cli.inputs import check_arguments
from git_memhtml.errors import MemhtmlError
from git_memhtml.output import emit, error_envelope, log


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "-C",
    "--repo",
    "repo_path",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Run as if started in this folder (default: the current directory).",
)
@click.version_option(__version__, prog_name="git-memhtml")
@click.pass_context
def cli(ctx: click.Context, repo_path: Path | None) -> None:
    """A long-term memory for AI agents kept in an ordinary git repository.

    Every fact is one semantic HTML5 file; a rebuildable SQLite index serves hybrid search; `sleep` curates the
    memory on a branch that a person reviews and merges through a retrieval-quality gate.
    """
    ctx.obj = App(repo_path=repo_path)


def _register() -> None:
    from git_memhtml.cli import config_cmds, demo, eval_cmds, index_cmds, memory_cmds, sleep_cmds, validate_cmd

    for module in (memory_cmds, index_cmds, sleep_cmds, eval_cmds, config_cmds, demo, validate_cmd):
        for command in module.COMMANDS:
            cli.add_command(command)
    from git_memhtml.cli import hooks_cmds

    for command in hooks_cmds.COMMANDS:
        cli.add_command(command)

    from git_memhtml.cli import man_cmds

    for command in man_cmds.COMMANDS:
        cli.add_command(command)

    from git_memhtml.cli import retrieval_cmds

    for command in retrieval_cmds.COMMANDS:
        cli.add_command(command)

    from git_memhtml.cli import doctor_cmds

    for command in doctor_cmds.COMMANDS:
        cli.add_command(command)


_register()


def _crash_report(exc: BaseException) -> Path:
    from git_memhtml.gitrepo import library_versions as git_versions
    from git_memhtml.index.db import library_versions as db_versions

    folder = Path(tempfile.gettempdir()) / "git-memhtml-crashes"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    path = folder / f"crash-{stamp}.log"
    path.write_text(
        f"git-memhtml {__version__}\npython {platform.python_version()}\n{git_versions()}\n{db_versions()}\n"
        f"argv {sys.argv}\n\n"
        + "".join(traceback.format_exception(exc)),
        encoding="utf-8",
    )
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in args
    try:
        check_arguments(args)
        result = cli.main(args=args, prog_name="git memhtml", standalone_mode=False)
        return int(result) if isinstance(result, int) else 0
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.Abort:
        log("interrupted")
        return 130
    except click.UsageError as exc:
        if as_json:
            emit(error_envelope(exc.format_message(), "ERR_INVALID_FLAG", "see --help"))
        log(f"error: {exc.format_message()}")
        if exc.ctx is not None:
            log(f"hint: {exc.ctx.command_path} --help")
        return 2
    except click.ClickException as exc:
        log(f"error: {exc.format_message()}")
        return exc.exit_code
    except MemhtmlError as exc:
        if as_json:
            emit(error_envelope(exc.message, exc.code, exc.hint, path=exc.path))
        log(f"error: {exc.message}")
        if exc.hint:
            log(f"hint: {exc.hint}")
        return exc.exit_code
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    except Exception as exc:  # noqa: BLE001 - the one place that turns a bug into exit 3
        report = _crash_report(exc)
        log(f"internal error: {type(exc).__name__}: {exc}")
        log(f"a crash report was written to {report}; please attach it to a bug report")
        return 3
