"""The ``git-memhtml`` entry point: the click group and the one error translator (docs/design.md §3.8).

Exit codes: 0 ok, 1 failure or refusal, 2 usage, 3 internal error (a crash report path is printed), 130
interrupted. With ``--json`` errors are one envelope on stdout as well.

Once a command's commit has landed on the checked-out branch (``GitRepo.landed``), a later failure (index
catch-up, output, a bug) does not undo it, so it is not reported as a failure: exit 0, the failure and the sha as
warnings, and with ``--json`` a ``commit.landed`` envelope (docs/store.md "After the commit").
"""

from __future__ import annotations

import itertools
import os
import platform
import sys
import tempfile
import traceback
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import click

from git_memhtml import __version__
from git_memhtml.cli.app import App
from git_memhtml.cli.inputs import check_arguments
from git_memhtml.errors import MemhtmlError
from git_memhtml.output import emit, envelope, error_envelope, log, warn


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
    app = ctx.ensure_object(App)  # main() passes its own, to read what landed after a failure
    app.repo_path = repo_path


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
    """Write a crash report to a new file ``<tmp>/git-memhtml-crashes/crash-<UTC stamp>-<pid>-<n>.log`` and
    return its path. The file is created with ``O_CREAT | O_EXCL`` (mode 0600), so two crashes in the same second,
    from one process or many, never overwrite each other: a taken name moves on to the next ``n``."""
    from git_memhtml.gitrepo import library_versions as git_versions
    from git_memhtml.index.db import library_versions as db_versions

    folder = Path(tempfile.gettempdir()) / "git-memhtml-crashes"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    text = (f"git-memhtml {__version__}\npython {platform.python_version()}\n{git_versions()}\n{db_versions()}\n"
            f"argv {sys.argv}\n\n" + "".join(traceback.format_exception(exc)))
    for n in itertools.count(1):
        path = folder / f"crash-{stamp}-{os.getpid()}-{n}.log"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        return path
    raise AssertionError("unreachable")  # itertools.count never ends


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in args
    app = App()
    try:
        check_arguments(args)
        result = cli.main(args=args, prog_name="git memhtml", standalone_mode=False, obj=app)
        return int(result) if isinstance(result, int) else 0
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except SystemExit as exc:  # click turns a closed stdout (EPIPE) into sys.exit(1)
        if exc.code not in (0, None) and app.landed_commits():
            return _after_commit(exc, app.landed_commits(), as_json)
        raise
    except click.exceptions.Abort as exc:
        if app.landed_commits():
            return _after_commit(exc, app.landed_commits(), as_json)
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
        if as_json:
            emit(error_envelope(exc.format_message(), "ERR_UNKNOWN", "see --help"))
        log(f"error: {exc.format_message()}")
        log("hint: see --help")
        return exc.exit_code
    except MemhtmlError as exc:
        if app.landed_commits():
            return _after_commit(exc, app.landed_commits(), as_json)
        if as_json:
            emit(error_envelope(exc.message, exc.code, exc.hint, path=exc.path, **exc.details))
        log(f"error: {exc.message}")
        if exc.hint:
            log(f"hint: {exc.hint}")
        return exc.exit_code
    except KeyboardInterrupt as exc:
        if app.landed_commits():
            return _after_commit(exc, app.landed_commits(), as_json)
        log("interrupted")
        return 130
    except Exception as exc:
        if app.landed_commits():
            return _after_commit(exc, app.landed_commits(), as_json)
        log(f"internal error: {type(exc).__name__}: {exc}")
        try:
            report = _crash_report(exc)
        except OSError as failed:  # an unwritable temp folder must not hide the original error
            log(f"no crash report could be written ({failed}); please report the error above")
        else:
            log(f"a crash report was written to {report}; please attach it to a bug report")
        return 3


def _after_commit(exc: BaseException, landed: Sequence[str], as_json: bool) -> int:
    """A failure after a commit landed: exit 0 with the failure and the sha as warnings (crash report kept)."""
    if isinstance(exc, MemhtmlError):
        what = exc.message
    elif isinstance(exc, (KeyboardInterrupt, click.exceptions.Abort)):
        what = "interrupted"
    elif isinstance(exc, (SystemExit, BrokenPipeError)):
        what = "the output could not be written (stdout closed)"
    else:
        what = f"internal error: {type(exc).__name__}: {exc} (crash report: {_crash_report(exc)})"
    note = f"commit {', '.join(sha[:12] for sha in landed)} landed (the change is stored); a later step failed: {what}"
    for line in (note, "the index catches up on the next command (or: git memhtml index update)"):
        try:
            warn(line)
        except OSError:
            break
    if as_json and not isinstance(exc, (SystemExit, BrokenPipeError)):
        try:
            emit(envelope("commit.landed", {"commitShas": list(landed), "warning": note}))
        except OSError:
            pass
    return 0
