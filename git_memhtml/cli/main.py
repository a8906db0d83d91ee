"""The ``git-memhtml`` entry point: the click group and the one error translator (docs/design.md §3.8).

Exit codes: 0 ok, 1 failure or refusal, 2 usage, 3 internal error (a crash report path is printed), 130
interrupted. With ``--json`` errors are one envelope on stdout as well.

Once a command's commit has landed on the checked-out branch (``GitRepo.landed``), a later failure (index
catch-up, output, a bug) does not undo it, so it is not reported as a failure: exit 0, the failure and the sha as
warnings, and with ``--json`` a ``commit.landed`` envelope (docs/store.md "After the commit").
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final, NoReturn

import click

from git_memhtml import __version__
from git_memhtml.cli.app import App, check_start_folder
from git_memhtml.cli.inputs import check_arguments
from git_memhtml.cli.lazy import COMMAND_PACKAGE, LazyCommand, LazyGroup
from git_memhtml.errors import MemhtmlError
from git_memhtml.output import emit, envelope, error_envelope, flush_streams, log, warn

_M = COMMAND_PACKAGE
COMMAND_TABLE: Final[Mapping[str, LazyCommand]] = {
    "init": LazyCommand(_M + "memory_cmds:init_cmd",
                        "Create or complete a memory repository (PARA folders, .gitattributes, .gitignore, merge "
                        "config)."),
    "write": LazyCommand(_M + "memory_cmds:write_cmd",
                         "Write one memory as one commit (deduplicated by content hash)."),
    "apply": LazyCommand(_M + "memory_cmds:apply_cmd",
                         "Write a JSONL batch of memories as one commit; atomic unless --continue-on-error "
                         "(docs/apply.md)."),
    "correct": LazyCommand(_M + "memory_cmds:correct_cmd",
                           "Write a memory that supersedes TARGET; TARGET is archived (one commit)."),
    "archive": LazyCommand(_M + "memory_cmds:archive_cmd",
                           "Move a memory into archive/<YYYY>/ (git mv) as one commit; nothing is ever deleted."),
    "link": LazyCommand(_M + "memory_cmds:link_cmd",
                        "Add a typed head link SRC --REL--> DST (one commit when it changes the file)."),
    "read": LazyCommand(_M + "memory_cmds:read_cmd", "Show one memory (an explicit read: it counts as an access)."),
    "list": LazyCommand(_M + "memory_cmds:list_cmd", "List memories in path order (tasks included)."),
    "task": LazyCommand(_M + "task_cmds:task_group",
                        "Open, move and close tasks (a task is a memory of type task; done archives it)."),
    "index": LazyCommand(_M + "index_cmds:index_group", "Maintain the rebuildable SQLite index (kept in the git dir)."),
    "sleep": LazyCommand(_M + "sleep_cmds:sleep_group",
                         "Curate the memory on a sleep/<date> branch that a person reviews and merges."),
    "eval": LazyCommand(_M + "eval_cmds:eval_group", "Measure retrieval quality."),
    "config": LazyCommand(_M + "config_cmds:config_cmd",
                          "List effective settings by git config key: default < git config memhtml.<key> < "
                          "MEMHTML_<KEY>."),
    "demo": LazyCommand(_M + "demo:demo_cmd",
                        "Create a demo memory repository and run plan → sleep run → review → merge → search in it."),
    "validate": LazyCommand(_M + "validate_cmd:validate_cmd",
                            "Check memory files: WHATWG parse errors (html5lib) and the memory format rules."),
    "install": LazyCommand(_M + "hooks_cmds:install_cmd",
                           "Install the index hooks (post-commit, post-merge, post-checkout, post-rewrite) and the "
                           "merge driver."),
    "uninstall": LazyCommand(_M + "hooks_cmds:uninstall_cmd",
                             "Remove exactly what install wrote: our hooks (chained ones are put back) and our git "
                             "config."),
    "hook": LazyCommand(_M + "hooks_cmds:hook_cmd",
                        "Run by the installed shims: catch the index up to HEAD (exit 0), or, for a commit guard, "
                        "finish a killed write before git commits (exit 1 refuses the commit).", hidden=True),
    "merge-driver": LazyCommand(_M + "hooks_cmds:merge_driver_cmd",
                                "Called by git as `git-memhtml merge-driver %O %A %B %P` for generated listings, "
                                "sitemap, access sidecar.", hidden=True),
    "man": LazyCommand(_M + "man_cmds:man_cmd",
                       "Print or write the git-memhtml(1) man page, generated from these commands."),
    "search": LazyCommand(_M + "retrieval_cmds:search_cmd",
                          "Hybrid search: fts, vector, recency and salience arms fused by RRF (k=60), then MMR. Never "
                          "an access."),
    "recall": LazyCommand(_M + "retrieval_cmds:recall_cmd",
                          "A budgeted recall pack: arcs and memories disclosed in rank order, the rest as index lines. "
                          "Never an access."),
    "neighbors": LazyCommand(_M + "retrieval_cmds:neighbors_cmd",
                             "Memories linked to PATH by memory-class edges (authored and mined), both directions, "
                             "depth ≤ 2."),
    "reinforce": LazyCommand(_M + "retrieval_cmds:reinforce_cmd",
                             "Record that PATH… served (an access bump with a signal); a path bumped in the last 900 s "
                             "is cooled down."),
    "trace": LazyCommand(_M + "trace_cmds:trace_group",
                         "Index agent session transcripts (Claude Code, Codex CLI) and search them; read only."),
    "mcp": LazyCommand(_M + "mcp_cmds:mcp_cmd",
                       "Serve the memory's tools over MCP on stdio (JSON-RPC on stdout, logs on stderr) until stdin "
                       "closes."),
    "doctor": LazyCommand(_M + "doctor_cmds:doctor_cmd",
                          "Report index drift, unparseable files, dangling links, stale sleep runs and leftover "
                          "worktrees."),
}
"""Every top-level command by name: where it lives and its help summary (:mod:`git_memhtml.cli.lazy`)."""


@click.group(cls=LazyGroup, lazy=COMMAND_TABLE, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "-C",
    "--repo",
    "repo_path",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Run as if started in this folder (default: the current directory).",
)
@click.option("-q", "--quiet", is_flag=True, help="Show no progress bar (bars show only when stderr is a terminal).")
@click.version_option(__version__, prog_name="git-memhtml")
@click.pass_context
def cli(ctx: click.Context, repo_path: Path | None, quiet: bool) -> None:
    """A long-term memory for AI agents kept in an ordinary git repository.

    Every fact is one semantic HTML5 file; a rebuildable SQLite index serves hybrid search; `sleep` curates the
    memory on a branch that a person reviews and merges through a retrieval-quality gate.
    """
    app = ctx.ensure_object(App)  # main() passes its own, to read what landed after a failure
    check_start_folder(repo_path, app.env)  # a deleted or unreadable folder is a usage error, not a crash
    app.repo_path = repo_path
    app.quiet = quiet


def _without_secrets(text: str) -> str:
    """``text`` with every detected secret replaced by ``[redacted:<kind>]`` (docs/secrets.md): a crash report and the
    ``internal error:`` line carry the command line and exception messages, which may hold what was being written.
    When the scan itself fails, the text is withheld whole rather than written unscanned."""
    from git_memhtml.secrets import redact

    try:
        return redact(text).text
    except Exception as failed:  # the scan's own failure must not write the text it could not scan
        return f"[withheld: the secret scan failed with {type(failed).__name__}]\n"


def _crash_report(exc: BaseException) -> Path:
    """Write a crash report to a new file ``<tmp>/git-memhtml-crashes/crash-<UTC stamp>-<pid>-<n>.log`` and
    return its path. The file is created with ``O_CREAT | O_EXCL`` (mode 0600), so two crashes in the same second,
    from one process or many, never overwrite each other: a taken name moves on to the next ``n``."""
    import itertools  # a crash only: start-up (``--version``) imports none of these (issue 12 item 4)
    import platform
    import tempfile
    import traceback
    from datetime import UTC, datetime

    from git_memhtml.gitrepo import library_versions as git_versions
    from git_memhtml.index.connection import library_versions as db_versions

    folder = Path(tempfile.gettempdir()) / "git-memhtml-crashes"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    text = _without_secrets(
        f"git-memhtml {__version__}\npython {platform.python_version()}\n{git_versions()}\n{db_versions()}\n"
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


def run() -> NoReturn:
    """The ``git-memhtml`` console script: :func:`main`, then flush both streams and end the process with
    ``os._exit`` (docs/cli.md "Start-up": "Exit").

    Everything a command writes is durable before :func:`main` returns (commits, the index transaction, files:
    nothing of ours waits for ``atexit`` or a finaliser), so the interpreter's own teardown — a collection over
    every object, each module's dictionary, the tokenizer's vocabulary — is pure cost: 40–100 ms of a cold
    ``search``. A flush that fails (stdout closed by its reader) turns an exit code of 0 into 1, as click does for
    a write that fails.
    """
    from git_memhtml.cli.blas import limit_blas_threads

    limit_blas_threads(sys.argv[1:], os.environ)  # before numpy's first import (docs/cli.md "Start-up")
    code = main()
    if not flush_streams():  # EPIPE / a closed stream: the output did not reach its reader
        code = code or 1
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the process exit code (``git-memhtml`` itself runs :func:`run`)."""
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
        log(_without_secrets(f"internal error: {type(exc).__name__}: {exc}"))
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
        what = _without_secrets(f"internal error: {type(exc).__name__}: {exc} (crash report: {_crash_report(exc)})")
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
