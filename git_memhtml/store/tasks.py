"""Task verbs: a person or agent opens, moves and closes a task without editing HTML (docs/store.md §5.6).

``task add`` is a write of type ``task`` (:func:`~git_memhtml.store.writer.apply_batch`); this module holds the one
verb a task has of its own, :func:`set_task_status` (spec digest §5.6).
"""

from __future__ import annotations

from dataclasses import dataclass

from git_memhtml.document.model import TASK_STATUSES
from git_memhtml.document.parse import parse_memory
from git_memhtml.document.secret_gate import refuse_secrets
from git_memhtml.errors import InvalidMemory, UsageError, WriteConflict
from git_memhtml.gitrepo import GitRepo
from git_memhtml.store.edits import apply_edits, free_archive_path, set_meta
from git_memhtml.store.writer import _archived_bytes, _gate_bytes, _live_file, _placed, commit_subject
from git_memhtml.tree.paths import read_tree_file

DONE_REASON = "task done"
"""The archive reason of a task closed without one (spec digest §5.6)."""


@dataclass(frozen=True)
class TaskStatusResult:
    """Outcome of :func:`set_task_status`.

    Attributes:
        path: the task's path before the call (repository-relative).
        status: the status asked for; ``previous`` the one the file held.
        changed: False when the task already had ``status`` (nothing written, ``commit_sha`` is None).
        archive_path: where a ``done`` task now lives (``archive/<YYYY>/…``), else None.
        commit_sha: the commit, or None when nothing changed.
    """

    path: str
    status: str
    previous: str
    changed: bool
    archive_path: str | None
    commit_sha: str | None


def set_task_status(repo: GitRepo, path: str, status: str, *, now: str, reason: str | None = None) -> TaskStatusResult:
    """Set a live task's ``memhtml-task-status`` to ``status`` as one commit (spec digest §5.6).

    The same status is a no-op. ``todo``/``doing``/``blocked`` splice ``task-status`` and ``updated`` in place and
    commit ``memhtml(task): <status> <path>``. ``done`` splices them too, then moves the task to
    ``archive/<YYYY>/`` (status, updated, archived stamped, as ``archive``) in the same commit,
    ``memhtml(archive): <path> — <reason | "task done">``. ``now`` is the instant (``YYYY-MM-DDTHH:MM:SSZ``).

    Raises:
        UsageError: ``status`` is not one of ``TASK_STATUSES``, or ``reason`` is given for a status other than
            ``done``. PathRefused, PathNotFound: ``path`` is not a live memory. InvalidMemory: it is not a task, or
            the stamped bytes would not validate. SecretInMemory: the reason holds a secret. WriteConflict: no
            free archive path. All before anything is written.
    """
    if status not in TASK_STATUSES:
        raise UsageError(f"STATUS {status!r} is not a task status",
                         hint="one of " + ", ".join(TASK_STATUSES))
    if reason is not None and status != "done":
        raise UsageError("--reason is only for done (the archive reason)",
                         hint=f"drop --reason, or set the task done: git memhtml task status {path} done")
    with repo.write_lock("task"):
        head = repo.head_sha()
        path = _live_file(repo, path)
        original = read_tree_file(repo.root, path)
        doc = parse_memory(original, path=path)
        if doc.memory_type != "task":
            raise InvalidMemory(f"{path} is a {doc.memory_type} memory, not a task",
                                hint="git memhtml task list shows the tasks; archive or correct other memories",
                                path=path)
        previous = doc.task_status or "todo"
        if previous == status:
            return TaskStatusResult(path, status, previous, False, None, None)
        stamped = apply_edits(original.decode("utf-8"),
                              [set_meta("task-status", status), set_meta("updated", now)]).encode("utf-8")
        if status != "done":
            _gate_bytes({path: stamped})
            sha = repo.commit_files({path: stamped}, commit_subject("task", f"{status} {path}"), parent=head,
                                    purpose="task")
            return TaskStatusResult(path, status, previous, True, None, sha)
        why = reason if reason is not None and reason.strip() else DONE_REASON
        refuse_secrets(why, where="--reason")  # the reason becomes the commit subject
        target = free_archive_path(repo, path, now[:4])
        if target is None:
            raise WriteConflict(f"no free archive path for {path}", hint="inspect archive/ for stale copies",
                                path=path)
        _placed(repo, target)
        changes: dict[str, bytes | None] = {path: None, target: _archived_bytes(stamped, at=now)}
        _gate_bytes(changes)
        sha = repo.commit_files(changes, commit_subject("archive", f"{path} — {why}"), parent=head, purpose="archive")
        return TaskStatusResult(path, status, previous, True, target, sha)
