"""The one choke point for git (docs/design.md §3.4).

pygit2 does reads, trees, index edits, commits, branches and worktrees; the ``git`` binary is used only where
pygit2 cannot give git's own semantics: trailer parsing (``git log %(trailers)``) and the user-visible
fast-forward of a checked-out branch (``git merge --ff-only``). libgit2 runs no hooks, so every command of ours
indexes after its own commits.

The environment is a parameter (docs/architecture.md "Environment and configuration"): a repository opened with
``env=`` takes its commit identity and dates (``GIT_AUTHOR_*``, ``GIT_COMMITTER_*``, ``EMAIL``) and its ``git``
children's base environment from that mapping; one opened without reads :func:`git_memhtml.config.live_env` at
each use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pygit2

from git_memhtml.config import live_env
from git_memhtml.cut import clip
from git_memhtml.errors import GitError, NotARepo
from git_memhtml.gitrepo.committing import CommitPath
from git_memhtml.gitrepo.identity import resolve_identity
from git_memhtml.gitrepo.merging import cherry_pick_in_memory
from git_memhtml.gitrepo.plumbing import parse_git_date
from git_memhtml.gitrepo.process import run_git
from git_memhtml.gitrepo.reads import Reads
from git_memhtml.gitrepo.status import WorkTree
from git_memhtml.gitrepo.values import InMemoryMerge, Resolver
from git_memhtml.gitrepo.worktrees import TRASH_GRACE_S, Worktrees

__all__ = ["TRASH_GRACE_S", "GitRepo"]


class GitRepo(Reads, WorkTree, Worktrees, CommitPath):
    """A git repository with a work tree: discovery, config and plumbing here; reads (:class:`Reads`), the work
    tree and index (:class:`WorkTree`), branches and worktrees (:class:`Worktrees`) and commits
    (:class:`CommitPath`) in their own modules.

    Attributes:
        root: the work tree folder.
        git_dir: this work tree's git dir (``.git`` or ``.git/worktrees/<name>``).
        common_dir: the git dir shared by every work tree of the repository.
        lock_timeout: seconds :meth:`write_lock` waits for another writer (the CLI sets it from
            ``memhtml.locktimeout``; default :data:`lock.DEFAULT_LOCK_TIMEOUT_S`).
        landed: the commits this object put on a branch (``commit``, ``commit_files``, ``fast_forward``), oldest
            first: the CLI's translator says so when a later step fails (an exit 3 after a commit would lie).
        recovered: commits of a killed writer whose work tree :meth:`write_lock` finished (:meth:`recover_journal`).
    """

    def __init__(self, repo: pygit2.Repository, *, env: Mapping[str, str] | None = None) -> None:
        if repo.workdir is None:
            raise NotARepo(
                f"{repo.path}: a bare repository has no work tree",
                hint="clone it (git clone <bare> <folder>) and run the command inside the clone",
            )
        self._repo = repo
        self.root = Path(repo.workdir).resolve()
        self.git_dir = Path(repo.path).resolve()
        commondir = self.git_dir / "commondir"
        if commondir.is_file():
            self.common_dir = (self.git_dir / commondir.read_text().strip()).resolve()
        else:
            self.common_dir = self.git_dir
        self.landed: list[str] = []
        self.recovered: list[str] = []
        self._env = env

    @property
    def env(self) -> Mapping[str, str]:
        """The environment this repository commits and runs ``git`` with: the one it was opened with, else the live
        process environment (:func:`git_memhtml.config.live_env`, read at each use)."""
        return live_env() if self._env is None else self._env

    # -- discovery -----------------------------------------------------------------------------------------
    @classmethod
    def discover(cls, path: Path | str = ".", *, env: Mapping[str, str] | None = None) -> GitRepo:
        """Open the repository containing ``path`` with environment ``env`` (see :attr:`env`); raises
        :class:`NotARepo` with a hint."""
        found = pygit2.discover_repository(str(path))
        if found is None:
            raise NotARepo(
                f"{Path(path).resolve()}: not inside a git repository",
                hint="run `git memhtml init` here, or pass --repo PATH",
            )
        return cls(pygit2.Repository(found), env=env)

    @classmethod
    def init(cls, path: Path | str, *, branch: str = "main", env: Mapping[str, str] | None = None) -> GitRepo:
        """Create a repository at ``path`` whose first branch is ``branch`` and open it with ``env``."""
        repo = pygit2.init_repository(str(path), initial_head=branch)
        return cls(repo, env=env)

    # -- config ------------------------------------------------------------------------------------------
    def config_get(self, key: str) -> str | None:
        """Return the effective value of git config ``key`` (repo, then global), or ``None``."""
        try:
            return str(self._repo.config[key])
        except KeyError:
            return None

    def config_set(self, key: str, value: str) -> None:
        """Set ``key`` in the repository's local config."""
        self._repo.config[key] = value

    # -- plumbing ---------------------------------------------------------------------------------------
    def run_git(self, args: Sequence[str]) -> str:
        """Run the ``git`` binary in this work tree (:func:`process.run_git`, with :attr:`env`); raises
        :class:`GitError` naming the subcommand."""
        proc = run_git(args, cwd=self.root, env=self.env)
        if proc.returncode != 0:
            raise GitError(
                f"git {args[0]} failed (exit {proc.returncode}): {clip(proc.stderr.strip(), 300)}",
                hint="run the same git command by hand to see the full message",
            )
        return proc.stdout

    def run_git_bytes(self, args: Sequence[str]) -> bytes:
        """Like :meth:`run_git` but returns raw stdout bytes (paths that are not UTF-8 survive; use ``-z``)."""
        proc = run_git(args, cwd=self.root, env=self.env, text=False)
        if proc.returncode != 0:
            raise GitError(
                f"git {args[0]} failed (exit {proc.returncode}): "
                f"{clip(proc.stderr.decode('utf-8', 'replace').strip(), 300)}",
                hint="run the same git command by hand to see the full message",
            )
        return proc.stdout

    def cherry_pick_in_memory(
        self,
        commit: str,
        onto: str,
        resolve: Resolver,
        refresh: Callable[[Mapping[str, str]], Mapping[str, bytes]] | None = None,
    ) -> InMemoryMerge:
        """Replay ``commit``'s change onto ``onto`` in memory (see :func:`merging.cherry_pick_in_memory`).

        Raises:
            GitError: a commit is missing, or ``commit`` has no parent.
        """
        picked = self._commit(commit)
        if not picked.parents:
            raise GitError(f"commit {commit[:12]} has no parent to replay it from", hint="git log --oneline")
        return cherry_pick_in_memory(self._repo, picked, self._commit(onto), resolve, refresh)

    def replay_commit(self, original: str, tree_sha: str, parent: str) -> str:
        """Write a commit object with ``original``'s message and author over ``tree_sha`` and ``parent``; the
        committer is the current identity. No ref moves. Returns the new sha."""
        source = self._commit(original)
        committer = self._signature("COMMITTER")
        oid = self._repo.create_commit(None, source.author, committer, source.message, pygit2.Oid(hex=tree_sha),
                                       [pygit2.Oid(hex=parent)])
        return str(oid)

    def move_branch(self, name: str, sha: str, *, expected: str) -> None:
        """Point existing branch ``name`` at ``sha`` if it still points at ``expected`` (compare and swap).

        Raises:
            GitError: the branch moved meanwhile, is missing, or its ref is locked.
        """
        ref = self._repo.references.get(f"refs/heads/{name}")
        if ref is None or str(ref.target) != expected:
            raise GitError(f"{name} moved while it was being rewritten (expected {expected[:12]})",
                           hint=f"git log -1 {name}; then run the command again")
        try:
            ref.set_target(pygit2.Oid(hex=sha))
        except pygit2.GitError as exc:
            raise GitError(f"cannot move {name}: {exc}", hint=f"a stale lock? ls $(git rev-parse --git-common-dir)"
                           f"/refs/heads/{name}.lock") from exc

    def _commit(self, sha: str) -> pygit2.Commit:
        try:
            obj = self._repo.revparse_single(sha)
        except (KeyError, ValueError, pygit2.GitError) as exc:
            raise GitError(f"no commit {sha}", hint="git log --oneline") from exc
        try:
            commit = obj.peel(pygit2.Commit)
        except (ValueError, pygit2.GitError) as exc:  # a tree or a blob (InvalidSpecError is a ValueError)
            raise GitError(f"{sha} names a {obj.type_str}, not a commit", hint="git log --oneline") from exc
        assert isinstance(commit, pygit2.Commit)
        return commit

    def _signature(self, role: str) -> pygit2.Signature:
        env = self.env
        who = resolve_identity(role, env, self.config_get)  # IdentityUnknown, as git refuses
        name, email = who.name, who.email
        date = env.get(f"GIT_{role}_DATE")
        parsed = parse_git_date(date) if date else None
        if parsed is None:
            return pygit2.Signature(name, email)
        return pygit2.Signature(name, email, parsed[0], parsed[1])

    def _reopen(self, path: Path) -> GitRepo:
        """Open the work tree at ``path`` (a linked worktree of this repository) with this one's environment."""
        return GitRepo(pygit2.Repository(str(path)), env=self._env)
