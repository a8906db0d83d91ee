"""The ``pre-commit`` / ``pre-merge-commit`` guard: finish a killed git-memhtml write before git builds a commit
from its index (docs/hooks.md "The commit guard"; docs/store.md "The residual window").

A ``git memhtml`` write killed between its ref move and its index write (``kill -9``, a power cut) leaves HEAD
holding a batch that ``.git/index`` lacks: ``git status`` shows it staged for deletion, and a plain ``git commit``
would delete it from HEAD. Its journal (``<git-dir>/memhtml/write-journal.json``) says so; the shim tests for it
with one ``stat`` and calls this only when it exists. The guard then takes the write lock (bounded by
``memhtml.locktimeout``) and finishes the journal into the index git is about to commit:

- **Which index.** Git names it in ``GIT_INDEX_FILE`` (git 2.39, builtin/commit.c ``prepare_index``, checked by
  tests/hooks/test_commit_guard.py): ``.git/index`` (relative, unlocked) for a plain ``git commit`` or
  ``--amend``; ``.git/index.lock`` for ``-a`` / ``-i``; a temporary ``next-index-<pid>.lock`` for ``git commit
  <paths>``, while ``.git/index.lock`` holds what becomes the index afterwards (both are set). Git re-reads
  ``GIT_INDEX_FILE`` after the hook, so the commit holds the batch. ``.git/index`` is never written while git
  holds ``index.lock``.
- **Refuse, never lose.** When the journal cannot be finished (lock held too long, a write fails), the hook exits
  1: git refuses the commit, and the message names the journal with a hint. ``git commit --no-verify`` remains
  the user's explicit override.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from git_memhtml.errors import MemhtmlError

if TYPE_CHECKING:
    from git_memhtml.gitrepo import GitRepo

GUARD_HOOKS: frozenset[str] = frozenset({"pre-commit", "pre-merge-commit"})
"""Hooks git runs before it writes a commit from an index (githooks(5); ``pre-merge-commit`` since git 2.24)."""


@dataclass(frozen=True)
class GuardOutcome:
    """One guard run: ``ok`` False refuses the commit (exit 1); ``message`` is the line printed and logged."""

    hook: str
    ok: bool
    message: str


def index_files(git_dir: Path, index_file_env: str | None, cwd: Path) -> list[Path]:
    """The index files a commit under way will use, in the order to write them.

    ``index_file_env`` is the ``GIT_INDEX_FILE`` git exported to the hook (relative paths are relative to
    ``cwd``, the work-tree root git runs hooks in); unset: ``<git_dir>/index`` (a hook run by hand). When it
    names a file other than ``index`` and ``index.lock`` while ``<git_dir>/index.lock`` exists (``git commit
    <paths>``), the lock is added: git renames it over the index once the commit is made.
    """
    if not index_file_env:
        return [git_dir / "index"]
    named = Path(index_file_env)
    named = named if named.is_absolute() else cwd / named
    lock = git_dir / "index.lock"
    files = [named]
    if named.resolve() not in {(git_dir / "index").resolve(), lock.resolve()} and lock.is_file():
        files.append(lock)
    return files


def run_guard(hook: str, repo: GitRepo, *, index_file_env: str | None, cwd: Path) -> GuardOutcome:
    """Finish ``repo``'s journal, if any, into the index files of the commit under way; never raises.

    Returns ``ok`` with "no journal" (the common case, one ``stat``), or with the commit finished; not ``ok``
    (the commit must be refused) when the journal could not be finished: the message names the journal file
    and carries the hint of the error (:class:`~git_memhtml.errors.WriteLocked`, ``GitError``).
    """
    journal = repo.journal_path()
    if not journal.is_file():
        return GuardOutcome(hook, True, "no journal")
    files = index_files(repo.git_dir, index_file_env, cwd)
    try:
        sha = repo.finish_journal(files)
    except MemhtmlError as exc:
        return GuardOutcome(hook, False, _refusal(journal, exc.message, exc.hint))
    except Exception as exc:
        return GuardOutcome(hook, False, _refusal(journal, f"{type(exc).__name__}: {exc}",
                                                  "run git memhtml doctor --fix, then commit again"))
    if sha is None:
        return GuardOutcome(hook, True, f"{journal.name} removed: its commit never landed, or its branch is no "
                                        "longer checked out (nothing to finish here)")
    names = ", ".join(str(f) for f in files)
    return GuardOutcome(hook, True, f"finished the killed write {sha[:12]} (index {names}) before the commit")


def _refusal(journal: Path, reason: str, hint: str | None) -> str:
    return (f"commit refused: a git-memhtml write was killed after its commit landed and {journal} could not be "
            f"finished ({reason}); committing now would delete that write's memories from HEAD. hint: "
            f"{hint or 'run git memhtml doctor --fix'}; then commit again (git commit --no-verify commits anyway)")

