"""``git memhtml hook <name>``: the body of every installed shim (docs/design.md §3.9; docs/git.md §0.3–0.4, §1.11).

A hook is only a trigger: it catches the index up from the indexed commit to HEAD with
:func:`git_memhtml.index.indexer.update`, which converges from any HEAD (commit, merge, reset, rebase, pull).
It never fails and never blocks a git command: every outcome is one line in ``<git-dir>/memhtml/hooks.log`` and
the process exits 0. Decisions (docs/hooks.md):

- **Environment.** Git exports ``GIT_DIR`` (a linked worktree's ``.git/worktrees/<n>``), and ``GIT_INDEX_FILE``
  during rebase and ``commit <paths>``; a ``git`` child of ours would then read another index. The repository is
  found from the hook's cwd (git runs hooks at the work-tree root), checked against ``GIT_DIR`` when set, and
  the hook's entry point (``git_memhtml.cli.hook_entry``) removes the repository-locating variables with
  :func:`git_memhtml.gitrepo.process.scrub_git_env` before anything runs (the one scrub list,
  :data:`~git_memhtml.gitrepo.process.SCRUBBED_ENV`, which every git child loses anyway). Author/committer
  variables are harmless and kept.
- **One catch-up at a time.** An exclusive ``flock`` on ``<git-dir>/memhtml/hook.lock``; a hook that finds it held
  leaves a rerun mark and exits, and the holder runs again once it is done (a 20-commit rebase costs one or two
  passes, not twenty).
- **Time bound** (:data:`HOOK_TIMEOUT_S`, ``memhtml.hooktimeout`` / ``MEMHTML_HOOK_TIMEOUT``): a real-time alarm
  interrupts the pass; every file is its own transaction and the watermark moves last, so the next pass resumes.
- **Broken index.** A missing ``index.db`` is built; one that is not an SQLite file (or that SQLite calls
  corrupt) is moved aside to ``index.db.corrupt`` and rebuilt (it is a cache); a locked one waits until the
  time bound. ``state.db`` (not rebuildable) is never touched.
- **Skips.** ``MEMHTML_HOOKS=0`` (or ``memhtml.hooks=0``); a sleep worktree (the run keeps its own index); a
  rebase in progress for every hook but post-rewrite (it catches up once at the end).
"""

from __future__ import annotations

import fcntl
import os
import signal
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from git_memhtml.cut import clip_join
from git_memhtml.embed.base import Embedder
from git_memhtml.errors import MemhtmlError, NotARepo
from git_memhtml.gitrepo import GitRepo

if TYPE_CHECKING:
    from git_memhtml.index.db import IndexDB

HOOK_TIMEOUT_S = 20.0
"""Default wall-time bound of one hook run, seconds (our decision, docs/hooks.md; docs/git.md §0.3 asks only for
"a time bound")."""
LOG_NAME = "hooks.log"
LOG_CAP_BYTES = 1 << 20
"""The log is rotated to ``hooks.log.1`` beyond 1 MiB."""
MAX_PASSES = 5
"""Catch-up passes one holder of the lock runs for rerun marks left by concurrent hooks."""
"""The first 16 bytes of every SQLite database file (sqlite.org/fileformat.html §1.3.1)."""
HOOK_BUSY_TIMEOUT_MS = 250
"""SQLite busy wait per statement inside a hook, so the time bound (a Python-level alarm) can interrupt."""
_OFF = {"0", "false", "no", "off"}


class HookTimeout(BaseException):
    """Raised by the alarm; a BaseException so that no ``except Exception`` inside a pass swallows it."""


@dataclass(frozen=True)
class HookOutcome:
    """One hook run: ``status`` is ``updated``, ``skipped``, ``queued`` (another run holds the lock), ``timeout``
    or ``failed``; ``message`` is the log line's text; ``log_path`` the log written (``None`` when none)."""

    hook: str
    status: str
    message: str
    log_path: str | None


def hooks_disabled(env: Mapping[str, str], git_config: Callable[[str], str | None]) -> bool:
    """Whether ``MEMHTML_HOOKS`` (else ``git config memhtml.hooks``) turns the hooks off (``0/false/no/off``)."""
    raw = env.get("MEMHTML_HOOKS")
    if raw is None or not raw.strip():
        raw = git_config("memhtml.hooks")
    return raw is not None and raw.strip().lower() in _OFF


def hook_timeout(env: Mapping[str, str], git_config: Callable[[str], str | None]) -> float:
    """The time bound in seconds: ``MEMHTML_HOOK_TIMEOUT``, else ``memhtml.hooktimeout``, else the default.
    A value that is not a positive number falls back to :data:`HOOK_TIMEOUT_S`."""
    for raw in (env.get("MEMHTML_HOOK_TIMEOUT"), git_config("memhtml.hooktimeout")):
        if raw is None or not raw.strip():
            continue
        try:
            value = float(raw)
        except ValueError:
            continue
        if value > 0:
            return value
    return HOOK_TIMEOUT_S


def _log(path: Path, hook: str, message: str, now: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_file() and path.stat().st_size > LOG_CAP_BYTES:
            os.replace(path, path.with_name(LOG_NAME + ".1"))
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"{now} {hook} pid={os.getpid()} {message}\n")
    except OSError:
        pass


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    def fire(_signum: int, _frame: FrameType | None) -> None:
        raise HookTimeout()

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


DEFERRED_STATUS_HOOKS = frozenset({"post-commit"})
"""Hooks whose pass leaves the work-tree status to the next reader (``indexer.update(worktree=False)``): a commit
changes what it commits and nothing else, so its pass costs what it changed, not one ``lstat`` per tracked file
(docs/hooks.md "Deferred work-tree status")."""


def _catch_up(repo: GitRepo, now: str, embedder_factory: Callable[[], Embedder | None], *,
              worktree: bool = True) -> str:
    from git_memhtml.index.db import IndexDB  # noqa: PLC0415 - loaded only when a pass really runs
    from git_memhtml.index.indexer import update  # noqa: PLC0415

    index_path = repo.git_dir / "memhtml" / "index.db"
    notes: list[str] = []
    if not index_path.exists():
        notes.append("no index yet: building it")
    db = IndexDB.for_repo(repo, recover=True)
    if db.recovered_from is not None:
        notes.append(f"index.db was corrupt: moved to {db.recovered_from.name}, rebuilding")
    try:
        db.set_busy_timeout(HOOK_BUSY_TIMEOUT_MS)
        try:
            embedder = embedder_factory()
        except MemhtmlError as exc:
            embedder = None
            notes.append(f"embedder unavailable ({exc.message}); vectors wait for the next command")
        report = update(repo, db, embedder, now=now, worktree=worktree)
        notes += _landed_runs(repo, db, now)
    finally:
        db.close()
    summary = (
        f"{'rebuilt' if report.rebuilt else 'updated'} to {str(report.head_sha)[:12]}: {report.added} added, "
        f"{report.modified} modified, {report.removed} removed, {report.renamed} renamed, {report.skipped} skipped"
    )
    if report.errors:
        summary += " (not indexed: " + clip_join((path for path, _ in report.errors), 5) + ")"
    if report.embed_error:
        notes.append("embedding stopped early; the next command retries")
    return "; ".join([*notes, summary])


def _landed_runs(repo: GitRepo, db: IndexDB, now: str) -> list[str]:
    """Sleep runs merged on a forge that this pull brought to ``main``: ledger applied once, landing recorded
    (:func:`git_memhtml.sleep.landing.reconcile.reconcile_landed_runs`, docs/forge-ci.md §3). Raises nothing
    expected."""
    from git_memhtml.sleep.landing.reconcile import reconcile_landed_runs  # noqa: PLC0415

    try:
        done = reconcile_landed_runs(repo, db, now)
    except MemhtmlError as exc:
        return [f"landed sleep runs not recorded ({exc.message}); the next sleep command retries"]
    return [f"{d.run_id}: {d.error}" if d.error else f"{d.run_id} landed ({d.how}), {d.marks_applied} marks applied"
            for d in done]


def _skip_reason(repo: GitRepo, hook: str, git_dir_env: str | None) -> str | None:
    if git_dir_env:
        named = Path(git_dir_env) if Path(git_dir_env).is_absolute() else repo.root / git_dir_env
        if named.resolve() != repo.git_dir:
            return f"GIT_DIR={git_dir_env} is not the repository at {repo.root}"
    if (repo.common_dir / "memhtml" / "worktrees") in repo.root.parents:
        return "a sleep worktree (the run keeps its own index)"
    if hook != "post-rewrite" and any((repo.git_dir / d).is_dir() for d in ("rebase-merge", "rebase-apply")):
        return "rebase in progress; post-rewrite catches up"
    return None


def run_hook(
    hook: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    now: str,
    embedder_factory: Callable[[], Embedder | None],
    git_dir_env: str | None = None,
    repo_env: Mapping[str, str] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> HookOutcome:
    """Catch the index of the repository at ``cwd`` up to HEAD under the time bound; never raises.

    Args:
        hook: the git hook that fired (for the log only). cwd: where git ran it (the work-tree root).
        env: the environment (``MEMHTML_HOOKS``, ``MEMHTML_HOOK_TIMEOUT``). now: ISO-8601 UTC instant.
        embedder_factory: returns the configured embedder (may raise ``MemhtmlError``: the pass goes lexical).
        git_dir_env: the ``GIT_DIR`` git exported to the hook (already scrubbed from the environment), if any.
        repo_env: the environment the repository is opened with (commit identity of a landing record, base of
            its git children; :meth:`GitRepo.discover`); ``None``: the live process environment.
    """
    try:
        repo = GitRepo.discover(cwd, env=repo_env)
    except NotARepo as exc:
        return HookOutcome(hook, "skipped", exc.message, None)
    except Exception as exc:
        return HookOutcome(hook, "failed", f"{type(exc).__name__}: {exc}", None)
    log_path = repo.git_dir / "memhtml" / LOG_NAME
    try:
        if hooks_disabled(env, repo.config_get):
            return HookOutcome(hook, "skipped", "MEMHTML_HOOKS=0", None)
        reason = _skip_reason(repo, hook, git_dir_env)
        if reason is not None:
            _log(log_path, hook, f"skipped: {reason}", now)
            return HookOutcome(hook, "skipped", reason, str(log_path))
        timeout = hook_timeout(env, repo.config_get)
    except Exception as exc:
        _log(log_path, hook, f"failed: {type(exc).__name__}: {exc}", now)
        return HookOutcome(hook, "failed", str(exc), str(log_path))
    return _locked_passes(repo, hook, now, embedder_factory, timeout, log_path, clock)


def _locked_passes(repo: GitRepo, hook: str, now: str, embedder_factory: Callable[[], Embedder | None],
                   timeout: float, log_path: Path, clock: Callable[[], float]) -> HookOutcome:
    folder = repo.git_dir / "memhtml"
    rerun = folder / "hook.rerun"
    status, message = "queued", "another catch-up is running; it will run again for this change"
    start = clock()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        rerun.touch()
        with (folder / "hook.lock").open("a") as lock:
            for _ in range(MAX_PASSES):
                try:
                    fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    break
                try:
                    rerun.unlink(missing_ok=True)
                    remaining = timeout - (clock() - start)
                    if remaining <= 0:
                        raise HookTimeout()
                    with _alarm(remaining):
                        message = _catch_up(repo, now, embedder_factory,
                                            worktree=hook not in DEFERRED_STATUS_HOOKS)
                    status = "updated"
                finally:
                    fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
                if not rerun.exists():
                    break
    except HookTimeout:
        status = "timeout"
        message = (f"stopped at the {timeout:g} s time bound (the index may be locked by another writer); "
                   "the next command catches up, or run git memhtml index update")
    except MemhtmlError as exc:
        status = "failed"
        message = f"{exc.message}" + (f" (hint: {exc.hint})" if exc.hint else "")
    except Exception as exc:
        status = "failed"
        message = f"{type(exc).__name__}: {exc}"
    _log(log_path, hook, f"{status}: {message} ({clock() - start:.2f} s)", now)
    return HookOutcome(hook, status, message, str(log_path))
