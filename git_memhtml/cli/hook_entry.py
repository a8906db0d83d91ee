"""``git-memhtml-hook <name> [args…]``: the light entry point the installed shims call (docs/hooks.md).

It is ``git memhtml hook <name>`` without loading click and every command module (about half the start-up time
of the full CLI, which matters in foreground mode). It exits 0, except a commit guard (``pre-commit``,
``pre-merge-commit``; :mod:`git_memhtml.hooks.guard`) that could not finish a killed write: 1, which makes git
refuse the commit.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from git_memhtml.hooks.guard import GUARD_HOOKS
from git_memhtml.hooks.shims import HOOK_NAMES


def guard(name: str, cwd: Path) -> tuple[int, str]:
    """Run the commit guard ``name`` in ``cwd`` with the ``GIT_INDEX_FILE`` git exported (read before the scrub);
    return ``(exit code, outcome line)``. Never raises: an unexpected failure refuses the commit (exit 1)."""
    try:
        from git_memhtml.cli.app import App
        from git_memhtml.errors import NotARepo
        from git_memhtml.gitrepo.process import scrub_git_env
        from git_memhtml.hooks.guard import run_guard

        index_file = os.environ.get("GIT_INDEX_FILE") or None
        scrub_git_env(os.environ)
        app = App(repo_path=cwd)
        try:
            repo = app.repo()
        except NotARepo as exc:
            return 0, f"git-memhtml {name}: skipped: {exc.message}"
        outcome = run_guard(name, repo, index_file_env=index_file, cwd=cwd)
        return (0 if outcome.ok else 1), f"git-memhtml {name}: {outcome.message}"
    except BaseException as exc:
        return 1, (f"git-memhtml {name}: commit refused: the journal check failed ({type(exc).__name__}: {exc}); "
                   "hint: run git memhtml doctor --fix, or commit anyway with git commit --no-verify")


def run(name: str, cwd: Path) -> str:
    """Scrub the inherited git variables, run the hook body for ``name`` in ``cwd``; return the outcome line.
    Never raises."""
    try:
        from git_memhtml.cli.app import App, utc_now
        from git_memhtml.gitrepo.process import scrub_git_env
        from git_memhtml.hooks.runner import run_hook

        git_dir = scrub_git_env(os.environ)
        app = App(repo_path=cwd)
        outcome = run_hook(name, cwd=cwd, env=app.env, now=utc_now(), embedder_factory=app.embedder,
                           git_dir_env=git_dir, repo_env=app.env)
        return f"git-memhtml {name}: {outcome.status}: {outcome.message}"
    except BaseException as exc:
        return f"git-memhtml {name}: failed: {type(exc).__name__}: {exc}"


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point; returns 0 whatever happens (a usage mistake is reported on stderr), but a guard's
    refusal (1)."""
    from git_memhtml.output import log

    args = list(sys.argv[1:] if argv is None else argv)
    if argv is None:  # the console script, before anything imports numpy: a hook's matrix work is one product
        from git_memhtml.cli.blas import limit_blas_threads

        limit_blas_threads(["hook"], os.environ)
    if not args or args[0] not in HOOK_NAMES:
        log(f"usage: git-memhtml-hook {{{','.join(HOOK_NAMES)}}} [git's hook arguments]")
        return 0
    if args[0] in GUARD_HOOKS:
        code, line = guard(args[0], Path.cwd())
        log(line)
        return code
    log(run(args[0], Path.cwd()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
