"""The repository-wide write lock (docs/store.md "The write lock").

Every writer of the checked-out branches (``write``, ``apply``, ``correct``, ``archive``, ``link``, ``init``'s
commit, ``doctor --fix-leftovers``, ``sleep merge``'s fast-forward, and the MCP server later) holds one exclusive
``fcntl.flock`` on ``<common-dir>/memhtml/write.lock`` from its first read of ``HEAD`` to its ref update, so that
no two of them plan against the same ``HEAD`` or touch the shared work tree and index at once.

- **Shared by every work tree**: the file lives in the common git dir, so a linked worktree locks the same file.
- **Re-entrant in a process**: a thread that already holds it enters again for free (a core function that locks
  may call another that locks), since a second ``flock`` on a new descriptor would wait for the first; other
  threads of the process queue on an in-process lock, so one descriptor serves the whole process.
- **Bounded wait**: ``timeout`` seconds (default :data:`DEFAULT_LOCK_TIMEOUT_S`; the CLI resolves
  ``memhtml.locktimeout`` / ``MEMHTML_LOCK_TIMEOUT``), polled every :data:`POLL_S`; then :class:`WriteLocked`
  names the holder (pid, host, command, since), which the holder wrote into the file after taking it.
- **Crash-safe**: the kernel drops a ``flock`` when its holder dies (``kill -9`` included), so a stale file never
  blocks anyone; its text then names a dead holder and is overwritten by the next one.
"""

from __future__ import annotations

import fcntl
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from git_memhtml.errors import StorageError, WriteLocked

DEFAULT_LOCK_TIMEOUT_S = 10.0
"""Default bound on the wait for the write lock, seconds (our decision: a write holds it for tens of ms, a big
``apply`` or a ``sleep merge`` fast-forward for a few seconds at most)."""
POLL_S = 0.01
"""Interval between two non-blocking ``flock`` attempts, seconds."""
LOCK_PARTS = ("memhtml", "write.lock")
"""Where the lock lives under the common git dir."""


@dataclass
class _Held:
    """In-process state of one lock file: who owns it and how deep."""

    mutex: threading.RLock
    depth: int = 0
    fd: int | None = None


_REGISTRY: dict[Path, _Held] = {}
_REGISTRY_GUARD = threading.Lock()


def lock_path(common_dir: Path) -> Path:
    """Return ``<common-dir>/memhtml/write.lock``."""
    return common_dir.joinpath(*LOCK_PARTS)


def _held(path: Path) -> _Held:
    with _REGISTRY_GUARD:
        held = _REGISTRY.get(path)
        if held is None:
            held = _REGISTRY[path] = _Held(threading.RLock())
        return held


def _holder_text(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        return os.read(fd, 512).decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _refusal(path: Path, fd: int, timeout: float, purpose: str) -> WriteLocked:
    holder = _holder_text(fd) or "an unknown process"
    return WriteLocked(
        f"{purpose}: another git-memhtml writer held the write lock for more than {timeout:g} s ({holder})",
        hint=f"wait for it to finish and retry, or raise MEMHTML_LOCK_TIMEOUT / git config memhtml.locktimeout; "
        f"the lock file is {path}",
        path=str(path),
    )


@contextmanager
def write_lock(common_dir: Path, *, purpose: str, timeout: float = DEFAULT_LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the repository-wide write lock for the body of the ``with``.

    Args:
        common_dir: the repository's common git dir (``GitRepo.common_dir``).
        purpose: the command taking it (``write``, ``sleep merge`` …), recorded for the refusal message.
        timeout: seconds to wait for another holder before refusing (0 = one attempt).

    Raises:
        WriteLocked: another process (or thread) held it for longer than ``timeout`` (exit 1, names the holder).
        StorageError: the lock file cannot be created.
    """
    path = lock_path(common_dir)
    held = _held(path)
    deadline = time.monotonic() + max(0.0, timeout)
    if not held.mutex.acquire(timeout=max(0.0, timeout)):
        raise WriteLocked(
            f"{purpose}: another thread of this process held the write lock for more than {timeout:g} s",
            hint="retry once it is done", path=str(path),
        )
    try:
        if held.depth == 0:
            held.fd = _acquire(path, deadline, timeout, purpose)
        held.depth += 1
        try:
            yield
        finally:
            held.depth -= 1
            if held.depth == 0 and held.fd is not None:
                fd, held.fd = held.fd, None
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
    finally:
        held.mutex.release()


def _acquire(path: Path, deadline: float, timeout: float, purpose: str) -> int:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StorageError(f"{path}: cannot open the write lock: {exc}", hint="check the git dir's permissions",
                           path=str(path)) from exc
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                refusal = _refusal(path, fd, timeout, purpose)
                os.close(fd)
                raise refusal from None
            time.sleep(POLL_S)
    since = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    record = f"pid={os.getpid()} host={socket.gethostname()} command={purpose!r} since={since}\n"
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, record.encode("utf-8"), 0)
    except OSError:
        pass  # the record only improves a refusal message
    return fd

