"""One sleep run at a time, and the stale git locks a killed run leaves behind (issue 8 item 3).

**The sleep lock** is ``<git common dir>/memhtml/sleep.lock``: created with ``O_CREAT | O_EXCL`` by ``sleep run``,
``sleep resume`` and ``sleep rebase`` (every verb that writes a run's branch), holding one JSON object
``{"runId", "pid", "host", "startedAt", "token", "procStart"}``; removed by its holder when the verb ends. A lock
whose holder is on this host and whose pid no longer exists, or now belongs to a process started at another
time (``procStart``, a reused pid), is stale (a SIGKILL) and is taken over. A lock held by another
host, or by a live pid here, refuses the second verb (exit 1) naming the holder.

**Stale git locks.** A process killed while git (or libgit2) updates the run's branch leaves
``<common dir>/refs/heads/<run>.lock``; one killed while it writes the run worktree's index leaves
``<common dir>/worktrees/<worktree>/index.lock``. Both make every later write fail. :func:`stale_git_locks`
names them; ``sleep resume`` and ``sleep abort`` remove them, but only when no live process owns the run;
``doctor`` reports them.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from git_memhtml.errors import RunRefused
from git_memhtml.gitrepo import GitRepo
from git_memhtml.sleep.engine.runfiles import run_file_stem

LOCK_FILE = "memhtml/sleep.lock"
"""Under the git common dir, so every linked worktree of the repository sees the same lock."""

UNREADABLE_GRACE_S = 10.0
"""A lock file that does not parse (its writer died between create and write) is stale after this many seconds."""


@dataclass(frozen=True)
class LockHolder:
    """Who holds the sleep lock: the run, the process (``host``, ``pid``) and since when."""

    run_id: str
    pid: int
    host: str
    started_at: str
    token: str = ""
    proc_start: str | None = None

    def is_this_process(self) -> bool:
        """Whether the lock is held by the calling process (a verb re-resolving its run under its own lock)."""
        return self.host == socket.gethostname() and self.pid == os.getpid()

    def describe(self) -> str:
        """``sleep/2026-01-15-3f9a2c (pid 4242 on host-a since 2026-01-15T09:00:00Z)``."""
        return f"{self.run_id} (pid {self.pid} on {self.host} since {self.started_at})"


def lock_path(repo: GitRepo) -> Path:
    """``<git common dir>/memhtml/sleep.lock``."""
    return repo.common_dir / LOCK_FILE


def proc_start(pid: int) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot (``/proc/<pid>/stat`` field 22), or ``None``
    where there is no ``/proc`` (then a reused pid cannot be told from the holder)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = raw.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def pid_alive(host: str, pid: int, started: str | None = None) -> bool:
    """Whether process ``pid`` on ``host`` may still run: another host always counts as alive (we cannot ask); a
    pid that now belongs to a process started at another time than ``started`` is dead (the pid was reused)."""
    if host != socket.gethostname():
        return True
    if pid <= 0:
        return False
    if started is not None:
        now = proc_start(pid)
        if now is not None and now != started:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_holder(repo: GitRepo) -> LockHolder | None:
    """The holder named in the lock file, or ``None`` when there is no readable lock file."""
    try:
        raw = lock_path(repo).read_text(encoding="utf-8")
        data = json.loads(raw)
        start = data.get("procStart")
        return LockHolder(str(data["runId"]), int(data["pid"]), str(data["host"]), str(data["startedAt"]),
                          str(data.get("token", "")), None if start is None else str(start))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def live_holder(repo: GitRepo) -> LockHolder | None:
    """The holder of the sleep lock when it is held by a live process, else ``None`` (absent or stale)."""
    holder = read_holder(repo)
    if holder is None or not pid_alive(holder.host, holder.pid, holder.proc_start):
        return None
    return holder


def _stale(repo: GitRepo) -> bool:
    path = lock_path(repo)
    holder = read_holder(repo)
    if holder is None:
        try:
            return time.time() - path.stat().st_mtime > UNREADABLE_GRACE_S
        except OSError:
            return True
    return not pid_alive(holder.host, holder.pid, holder.proc_start)


def _payload(holder: LockHolder) -> bytes:
    return json.dumps({"runId": holder.run_id, "pid": holder.pid, "host": holder.host,
                       "startedAt": holder.started_at, "token": holder.token,
                       "procStart": holder.proc_start}).encode("utf-8")


@contextmanager
def sleep_lock(repo: GitRepo, run_id: str, *, now: str) -> Iterator[LockHolder]:
    """Hold the sleep lock for ``run_id`` while the block runs; a stale lock is taken over.

    Raises:
        RunRefused: a live process holds the lock (the message names its run, pid and host; the hint says how to
            find it and, for another host, when removing the file is safe).
    """
    path = lock_path(repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    me = LockHolder(run_id, os.getpid(), socket.gethostname(), now, secrets.token_hex(8), proc_start(os.getpid()))
    payload = _payload(me)
    for _attempt in range(3):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except OSError as exc:
            if exc.errno != errno.EEXIST:
                raise RunRefused(f"{path}: cannot create the sleep lock: {exc.strerror}",
                                 hint="check the permissions of the git directory", path=str(path)) from exc
            if _stale(repo):
                try:
                    path.unlink()
                except FileNotFoundError:
                    pass
                continue
            holder = read_holder(repo)
            who = holder.describe() if holder else "a process that is still writing the lock"
            here = holder is not None and holder.host == socket.gethostname()
            raise RunRefused(
                f"another sleep run holds {path}: {who}; one sleep run at a time",
                hint=("wait for it to finish (git memhtml sleep status)" if here or holder is None else
                      f"wait for it; if no process runs on {holder.host}, remove {path}"),
                path=str(path),
            ) from None
        try:
            os.write(fd, payload)
        finally:
            os.close(fd)
        break
    else:
        raise RunRefused(f"{path}: the sleep lock keeps reappearing", hint="git memhtml sleep status", path=str(path))
    try:
        yield me
    finally:
        current = read_holder(repo)
        if current is not None and current.token == me.token:
            try:
                path.unlink()
            except FileNotFoundError:
                pass


def relabel(repo: GitRepo, holder: LockHolder, run_id: str) -> LockHolder:
    """Name ``run_id`` in the lock ``holder`` holds (a run id is chosen once the lock is held); returns the new holder.

    Written to a temporary file and renamed over the lock, so a reader never sees half a file.
    """
    path = lock_path(repo)
    new = LockHolder(run_id, holder.pid, holder.host, holder.started_at, holder.token, holder.proc_start)
    temp = path.with_name(f"{path.name}.{holder.token}.tmp")
    temp.write_bytes(_payload(new))
    os.replace(temp, path)
    return new


def stale_git_locks(repo: GitRepo, run_id: str, worktree: str | None = None) -> list[Path]:
    """The git lock files of a run that exist now: its branch's ref lock and its worktree's index lock.

    Args:
        run_id: the run (its branch is ``refs/heads/<run_id>``).
        worktree: the run's linked worktree name (default: the run id with ``/`` → ``-``).

    Whether they are stale is the caller's judgement (no live process owns the run).
    """
    name = worktree or run_file_stem(run_id)
    candidates = [
        repo.common_dir / "refs" / "heads" / f"{run_id}.lock",
        repo.common_dir / "worktrees" / name / "index.lock",
        repo.common_dir / "worktrees" / name / "HEAD.lock",
    ]
    return [p for p in candidates if p.is_file()]


def all_stale_git_locks(repo: GitRepo) -> list[Path]:
    """Every run branch ref lock (``refs/heads/sleep/**.lock``) and sleep worktree index/HEAD lock, sorted."""
    found: list[Path] = []
    heads = repo.common_dir / "refs" / "heads" / "sleep"
    if heads.is_dir():
        found += [p for p in heads.rglob("*.lock") if p.is_file()]
    trees = repo.common_dir / "worktrees"
    if trees.is_dir():
        for folder in trees.glob("sleep-*"):
            found += [p for p in (folder / "index.lock", folder / "HEAD.lock") if p.is_file()]
    return sorted(found)


def remove_locks(paths: list[Path]) -> list[str]:
    """Delete ``paths`` (already gone is fine); return the removed ones as strings."""
    removed = []
    for path in paths:
        try:
            path.unlink()
            removed.append(str(path))
        except FileNotFoundError:
            pass
    return removed


def lock_findings(repo: GitRepo) -> list[dict[str, str]]:
    """What ``doctor`` reports: every stale git lock of a sleep run and a stale sleep lock, as
    ``[{"path", "kind", "hint"}]`` (``kind``: ``ref-lock``, ``index-lock``, ``sleep-lock``).

    Nothing is reported while a live process holds the sleep lock: its git locks may be in use right now.
    """
    if live_holder(repo) is not None:
        return []
    found: list[dict[str, str]] = []
    for path in all_stale_git_locks(repo):
        if path.name in ("index.lock", "HEAD.lock"):
            found.append({"path": str(path), "kind": "index-lock",
                          "hint": f"git memhtml sleep resume or abort the run of worktree {path.parent.name}"})
        else:
            run_id = path.relative_to(repo.common_dir / "refs" / "heads").as_posix()[: -len(".lock")]
            found.append({"path": str(path), "kind": "ref-lock",
                          "hint": f"git memhtml sleep resume {run_id} (or abort it)"})
    if lock_path(repo).is_file():
        found.append({"path": str(lock_path(repo)), "kind": "sleep-lock",
                      "hint": "stale (its process is gone): the next sleep run takes it over"})
    return found
