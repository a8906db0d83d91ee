"""Branches and linked worktrees of the git choke point: create, fast-forward, add, remove (through the trash).

:class:`Worktrees` is the part of :class:`~git_memhtml.gitrepo.repo.GitRepo` that manages branches and linked
worktrees (a mixin: it reaches the repository through the attributes declared under ``TYPE_CHECKING``).
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2

from git_memhtml.errors import GitError

if TYPE_CHECKING:
    from git_memhtml.gitrepo.repo import GitRepo

TRASH_GRACE_S = 600
"""Seconds a removed worktree folder may sit in the trash before the next :meth:`Worktrees.remove_worktree` starts
deleting it again (its own deleter is presumed dead by then: a 100k-file folder is deleted in well under a minute on
an idle disk); our choice."""


class Worktrees:
    """Local branches and linked worktrees."""

    if TYPE_CHECKING:
        _repo: pygit2.Repository
        common_dir: Path
        landed: list[str]

        def _commit(self, sha: str) -> pygit2.Commit: ...

        def _reopen(self, path: Path) -> GitRepo: ...

        def _compare_and_swap(self, ref: str, new: str, old: str | None, subject: str) -> None: ...

        def run_git(self, args: Sequence[str]) -> str: ...

        def branch_sha(self, name: str) -> str | None: ...

        def current_branch(self) -> str | None: ...

        def is_ancestor(self, ancestor: str, descendant: str) -> bool: ...

    # -- branches and worktrees ------------------------------------------------------------------------------
    def create_branch(self, name: str, sha: str) -> None:
        """Create local branch ``name`` at ``sha``; raises :class:`GitError` when it exists."""
        try:
            self._repo.branches.local.create(name, self._commit(sha))
        except (pygit2.GitError, ValueError) as exc:
            raise GitError(f"cannot create branch {name}: {exc}", hint=f"git branch -D {name}") from exc

    def delete_branch(self, name: str) -> None:
        """Delete local branch ``name`` if it exists."""
        branch = self._repo.branches.local.get(name)
        if branch is not None:
            branch.delete()

    def add_worktree(self, name: str, path: Path, branch: str) -> GitRepo:
        """Check ``branch`` out in a new linked work tree at ``path`` and return it."""
        ref = self._repo.branches.local.get(branch)
        if ref is None:
            raise GitError(f"no branch {branch}", hint="git branch --list 'sleep/*'")
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._repo.add_worktree(name, str(path), ref)
        except pygit2.GitError as exc:
            raise GitError(f"cannot add worktree {name}: {exc}", hint="git worktree prune") from exc
        return self._reopen(path)

    def add_detached_worktree(self, name: str, path: Path, sha: str) -> GitRepo:
        """Check ``sha`` out detached in a new linked work tree at ``path`` (no branch is created)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.run_git(["worktree", "add", "--detach", "--quiet", str(path), sha])
        created = self._reopen(path)
        actual = path.resolve().name
        if actual != name:
            raise GitError(f"worktree {actual} is not named {name}", hint="git worktree prune")
        return created

    def worktree_path(self, name: str) -> Path | None:
        """Return the folder of linked work tree ``name``, or ``None``."""
        if name not in self._repo.list_worktrees():
            return None
        return Path(self._repo.lookup_worktree(name).path)

    def remove_worktree(self, name: str) -> None:
        """Delete linked work tree ``name`` (its folder and its admin dir) if it exists; cost independent of its size.

        The folder is renamed into :meth:`trash_folder` (one rename), the worktree is pruned, and the renamed
        folder is deleted by a detached ``rm -rf`` (:meth:`_discard`): unlinking ten thousand files the run just
        wrote waits on their write-back and took 26 s on a loaded box (issue 12), the rename takes milliseconds.
        Every state a kill leaves is one this method (or ``git worktree prune``) finishes: a registered worktree
        whose folder is gone is prunable, a trash folder is swept by the next call (:meth:`sweep_trash`).
        """
        self.sweep_trash()
        self.prune_dangling_worktrees()
        if name not in self._repo.list_worktrees():
            return
        worktree = self._repo.lookup_worktree(name)
        folder = Path(worktree.path)
        aside = self._put_aside(folder) if folder.exists() else None
        worktree.prune(True)
        if aside is not None:
            self._discard(aside)

    def discard_folder(self, folder: Path) -> None:
        """Delete ``folder`` (a worktree folder no worktree is registered for any more, which a kill left) the way
        :meth:`remove_worktree` does: renamed into the trash, then deleted by a detached ``rm -rf``."""
        aside = self._put_aside(folder)
        if aside is not None:
            self._discard(aside)

    def _put_aside(self, folder: Path) -> Path | None:
        """Rename ``folder`` into :meth:`trash_folder` and return its new path; a folder that cannot be renamed
        there (another file system) is deleted where it is and ``None`` returned."""
        aside = self.trash_folder() / f"{folder.name}.{int(time.time())}.{secrets.token_hex(4)}"
        try:
            aside.parent.mkdir(parents=True, exist_ok=True)
            folder.rename(aside)
        except OSError:
            shutil.rmtree(folder)
            return None
        return aside

    def prune_dangling_worktrees(self) -> list[str]:
        """Prune every linked worktree of ours (its folder under ``<common-dir>/memhtml/``) whose folder is gone
        and that is not locked, as ``git worktree prune`` would; a kill between the rename and the prune of
        :meth:`remove_worktree` leaves one. Your own linked worktrees elsewhere (a drive not mounted now) are left
        to git's own expiry. Returns the names pruned."""
        ours = self.common_dir / "memhtml"
        pruned: list[str] = []
        for name in self._repo.list_worktrees():
            try:
                worktree = self._repo.lookup_worktree(name)
                if Path(worktree.path).is_relative_to(ours) and worktree.is_prunable:
                    worktree.prune(False)
                    pruned.append(name)
            except pygit2.GitError:
                continue
        return pruned

    def trash_folder(self) -> Path:
        """Where removed worktree folders wait for deletion: ``<common-dir>/memhtml/trash/`` (entries are named
        ``<worktree>.<unix seconds>.<hex>``)."""
        return self.common_dir / "memhtml" / "trash"

    def sweep_trash(self, *, grace_s: float = TRASH_GRACE_S) -> list[str]:
        """Start deleting every trash entry put aside more than ``grace_s`` seconds ago (its deleter was killed,
        or never ran); return their names. Younger entries are left to the deleter started with them."""
        folder = self.trash_folder()
        try:
            entries = list(folder.iterdir())
        except OSError:
            return []
        swept: list[str] = []
        for entry in entries:
            stamp = entry.name.rsplit(".", 2)
            try:
                age = time.time() - int(stamp[1]) if len(stamp) == 3 else grace_s + 1
            except ValueError:
                age = grace_s + 1
            if age > grace_s:
                self._discard(entry)
                swept.append(entry.name)
        return swept

    def _discard(self, folder: Path) -> None:
        """Delete ``folder`` in a detached ``rm -rf`` that outlives this process (``sh`` starts it in the
        background and exits, so nothing is left to wait for); without ``sh``/``rm``, delete it here."""
        try:
            proc = subprocess.run(
                ["sh", "-c", 'rm -rf -- "$1" >/dev/null 2>&1 </dev/null &', "memhtml-trash", str(folder)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, check=False, timeout=30,
            )
            if proc.returncode == 0:
                return
        except (OSError, subprocess.SubprocessError):
            pass
        shutil.rmtree(folder, ignore_errors=True)

    def fast_forward(self, branch: str, sha: str) -> None:
        """Move ``branch`` forward to ``sha``; a checked-out branch is merged with ``git merge --ff-only``."""
        current = self.branch_sha(branch)
        if current is not None and not self.is_ancestor(current, sha):
            raise GitError(f"{branch} cannot fast-forward to {sha[:12]}", hint="re-run the sleep cycle")
        if self.current_branch() == branch:
            self.run_git(["merge", "--ff-only", "-q", sha])
            self._repo.index.read(force=True)
        else:
            self._compare_and_swap(f"refs/heads/{branch}", sha, current, f"fast-forward to {sha[:12]}")
        self.landed.append(sha)
