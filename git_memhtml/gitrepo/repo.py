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

import secrets
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import pygit2
from pygit2.enums import DiffFind, FileStatus

from git_memhtml.config import live_env
from git_memhtml.cut import clip
from git_memhtml.document.model import PARA_PREFIXES
from git_memhtml.errors import GitError, NotARepo, PathNotFound
from git_memhtml.gitrepo.committing import CommitPath
from git_memhtml.gitrepo.identity import resolve_identity
from git_memhtml.gitrepo.merging import cherry_pick_in_memory
from git_memhtml.gitrepo.plumbing import parse_git_date, prune_empty_dirs
from git_memhtml.gitrepo.process import run_git
from git_memhtml.gitrepo.values import Change, DirtyEntry, InMemoryMerge, Resolver, TreeBlob, TreeChange

_DELETED = FileStatus.WT_DELETED | FileStatus.INDEX_DELETED
TRASH_GRACE_S = 600
"""Seconds a removed worktree folder may sit in the trash before the next :meth:`GitRepo.remove_worktree` starts
deleting it again (its own deleter is presumed dead by then: a 100k-file folder is deleted in well under a minute on
an idle disk); our choice."""
class GitRepo(CommitPath):
    """A git repository with a work tree.

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

    # -- reads ---------------------------------------------------------------------------------------------
    def head_sha(self) -> str | None:
        """Return the commit HEAD points at, or ``None`` on an unborn branch."""
        if self._repo.head_is_unborn:
            return None
        return str(self._repo.head.target)

    def current_branch(self) -> str | None:
        """Return the short name of the checked-out branch, or ``None`` when HEAD is detached."""
        if self._repo.head_is_detached:
            return None
        ref = self._repo.lookup_reference("HEAD").target
        name = str(ref)
        return name[len("refs/heads/") :] if name.startswith("refs/heads/") else name

    def branch_sha(self, name: str) -> str | None:
        """Return the tip of local branch ``name``, or ``None`` when it does not exist."""
        branch = self._repo.branches.local.get(name)
        return None if branch is None else str(branch.target)

    def branches(self, prefix: str = "") -> list[str]:
        """Return local branch names starting with ``prefix``, sorted."""
        return sorted(b for b in self._repo.branches.local if b.startswith(prefix))

    def read_blob(self, sha: str) -> bytes:
        """Return the bytes of blob ``sha``."""
        obj = self._repo.get(sha)
        if obj is None or not isinstance(obj, pygit2.Blob):
            raise GitError(f"blob {sha} not found", hint="run `git fsck` to check the repository")
        return obj.data

    def tree_blobs(self, commit_sha: str, prefixes: Sequence[str] = PARA_PREFIXES) -> dict[str, str]:
        """Return ``{path: blob sha}`` for every blob of the commit's tree under ``prefixes`` (all when empty)."""
        index = pygit2.Index()
        index.read_tree(self._commit(commit_sha).tree)
        out: dict[str, str] = {}
        for entry in index:
            if not prefixes or entry.path.startswith(tuple(prefixes)):
                out[entry.path] = str(entry.id)
        return out

    def tree_files(self, commit_sha: str, prefixes: Sequence[str] = PARA_PREFIXES) -> dict[str, TreeBlob]:
        """Return ``{path: TreeBlob}`` for every file and symlink of the commit's tree under ``prefixes`` (all when
        empty), in one read of the tree: :meth:`tree_blobs` with each entry's mode (a symlink's blob is its
        target). Submodule entries (mode ``160000``: a commit, not a blob) are left out. Cost: O(entries)."""
        index = pygit2.Index()
        index.read_tree(self._commit(commit_sha).tree)
        wanted = tuple(prefixes)
        out: dict[str, TreeBlob] = {}
        for entry in index:
            path = entry.path
            if (not wanted or path.startswith(wanted)) and entry.mode != pygit2.enums.FileMode.COMMIT:
                out[path] = TreeBlob(str(entry.id), int(entry.mode))
        return out

    def blobs_at(self, commit_sha: str, paths: Iterable[str]) -> dict[str, TreeBlob]:
        """Return ``{path: TreeBlob}`` for each of ``paths`` that is a file or a symlink in the commit's tree; a path
        that is absent, a folder or a submodule there (or is not a plain ``a/b/c`` path: empty segments, a leading
        or trailing slash) is left out. Each folder on the way is resolved once and each name looked up in it (a
        binary search), never a walk of the whole tree: a pass over a one-file commit costs the same at 100 and at
        100,000 files, and k paths in a few folders cost a few µs each. A path that is not UTF-8 is given as Python
        decodes it (``os.fsdecode``, surrogate escapes), as :meth:`tree_blobs` and :meth:`diff` return it.

        Raises:
            GitError: ``commit_sha`` names no commit.
        """
        root = self._commit(commit_sha).tree
        folders: dict[str, pygit2.Tree | None] = {"": root}
        out: dict[str, TreeBlob] = {}
        for path in paths:
            folder, _, name = path.rpartition("/")
            if not name or (folder and "" in folder.split("/")):
                continue
            if folder not in folders:
                try:
                    found = root[folder]
                except (KeyError, ValueError):
                    found = None
                folders[folder] = found if isinstance(found, pygit2.Tree) else None
            tree = folders[folder]
            if tree is None:
                continue
            try:
                entry = tree[name]
            except (KeyError, ValueError):
                continue
            if entry.type_str == "blob":
                out[path] = TreeBlob(str(entry.id), int(entry.filemode))
        return out

    def read_path_at(self, commit_sha: str, path: str) -> bytes | None:
        """Return the bytes of ``path`` at ``commit_sha``, or ``None`` when absent."""
        tree = self._commit(commit_sha).tree
        try:
            obj = tree[path]
        except KeyError:
            return None
        blob = self._repo.get(obj.id)
        return blob.data if isinstance(blob, pygit2.Blob) else None

    def diff(self, a_sha: str, b_sha: str) -> list[Change]:
        """Return the changes from commit ``a_sha`` to ``b_sha`` with rename detection (copies are adds)."""
        diff = self._commit(a_sha).tree.diff_to_tree(self._commit(b_sha).tree)
        diff.find_similar(flags=DiffFind.FIND_RENAMES, rename_threshold=50)
        out: list[Change] = []
        for delta in diff.deltas:
            status = delta.status_char()
            if status == "R":
                out.append(Change("R", delta.new_file.path, delta.old_file.path))
            elif status == "D":
                out.append(Change("D", delta.old_file.path))
            elif status == "C":
                out.append(Change("A", delta.new_file.path))
            else:
                out.append(Change(status, delta.new_file.path))
        return out

    def tree_delta(self, a_sha: str, b_sha: str) -> list[Change]:
        """The answer of :meth:`diff` (renames detected, copies are adds, a file turned symlink is a deletion plus an
        addition) at the cost of what changed: subtrees whose ids are equal on both sides are never entered, so a
        one-file commit reads the trees on the path to that file, not the 100,000 entries libgit2's tree diff walks.
        Renames of identical content are paired here, one deleted regular file with one added regular file of the
        same blob; when any deletion and addition stay unpaired (a rename with edits, or the same content at
        several paths) the pair is handed to :meth:`diff`, so libgit2's similarity rule decides, as before.
        Sorted by path (the new path of a rename).

        Raises:
            GitError: a commit is missing.
        """
        old_tree, new_tree = self._commit(a_sha).tree, self._commit(b_sha).tree
        gone: dict[str, pygit2.Object] = {}
        came: dict[str, pygit2.Object] = {}
        out: list[Change] = []
        _walk_delta(old_tree, new_tree, "", gone, came, out)
        by_sha_gone = _unique_regular(gone)
        by_sha_came = _unique_regular(came)
        if by_sha_gone is None or by_sha_came is None:
            return sorted(self.diff(a_sha, b_sha), key=_by_path)
        for sha, old_path in by_sha_gone.items():
            new_path = by_sha_came.get(sha)
            if new_path is not None:
                out.append(Change("R", new_path, old_path))
                del gone[old_path], came[new_path]
        if gone and came:
            return sorted(self.diff(a_sha, b_sha), key=_by_path)
        out += [Change("D", path) for path in gone] + [Change("A", path) for path in came]
        return sorted(out, key=_by_path)

    def tree_changes(self, a_sha: str, b_sha: str) -> list[TreeChange]:
        """Every path that differs between commits ``a_sha`` and ``b_sha``, each side's blob and the new mode, no
        rename pairing (a move is a deletion plus an addition). Reads trees only, never a blob."""
        diff = self._commit(a_sha).tree.diff_to_tree(self._commit(b_sha).tree)
        out: list[TreeChange] = []
        for delta in diff.deltas:
            status = delta.status_char()
            old = None if status == "A" else str(delta.old_file.id)
            new = None if status == "D" else str(delta.new_file.id)
            path = delta.old_file.path if status == "D" else delta.new_file.path
            out.append(TreeChange(path, old, new, None if new is None else int(delta.new_file.mode)))
        return out

    def changed_paths(self, a_sha: str, b_sha: str) -> list[str]:
        """Return every path that differs between two commits (both sides of a rename)."""
        out: set[str] = set()
        for change in self.diff(a_sha, b_sha):
            out.add(change.path)
            if change.old_path:
                out.add(change.old_path)
        return sorted(out)

    def dirty(self) -> list[DirtyEntry]:
        """Return uncommitted paths (staged, modified, deleted or untracked; ignored ones excluded), sorted."""
        status = self._repo.status()
        out = [
            DirtyEntry(path, bool(flags & _DELETED))
            for path, flags in status.items()
            if not flags & FileStatus.IGNORED
        ]
        return sorted(out, key=lambda e: e.path)

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """Return whether ``ancestor`` is ``descendant`` or one of its ancestors."""
        if ancestor == descendant:
            return True
        try:
            return bool(self._repo.descendant_of(descendant, ancestor))
        except (KeyError, ValueError, pygit2.GitError) as exc:
            raise GitError(f"cannot compare {ancestor[:12]} with {descendant[:12]}: {exc}",
                           hint="git fsck; a commit may be missing") from exc

    def merge_base(self, a: str, b: str) -> str:
        """Return the best common ancestor of commits ``a`` and ``b``."""
        oid = self._repo.merge_base(pygit2.Oid(hex=a), pygit2.Oid(hex=b))
        if oid is None:
            raise GitError(f"{a[:12]} and {b[:12]} share no history", hint="git log --graph --oneline --all")
        return str(oid)

    def commits_between(self, base: str, head: str) -> list[str]:
        """Return the commits reachable from ``head`` but not ``base``, oldest first."""
        walker = self._repo.walk(head, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
        walker.hide(base)
        return [str(c.id) for c in walker]

    def commit_sha(self, rev: str) -> str:
        """Return the full sha of the commit ``rev`` names (a sha, a branch, a tag: tags are peeled); raises
        :class:`GitError` when it names no commit."""
        return str(self._commit(rev).id)

    def parents(self, sha: str) -> list[str]:
        """Return the parent shas of commit ``sha``, in order."""
        return [str(p) for p in self._commit(sha).parent_ids]

    def commit_message(self, sha: str) -> str:
        """Return the full message of commit ``sha``."""
        return str(self._commit(sha).message)

    def log_trailers(self, base: str, head: str, key: str) -> list[tuple[str, list[str]]]:
        """Return ``(sha, values)`` of trailer ``key`` for each commit in ``base..head``, oldest first.

        Parsed by ``git log %(trailers:key=…)`` so the semantics are git's own (docs/design.md §3.4).
        """
        fmt = f"%x00%H%x1f%(trailers:key={key},valueonly,separator=%x1f)"
        out = self.run_git(["log", "--reverse", f"--format={fmt}", f"{base}..{head}"])
        result: list[tuple[str, list[str]]] = []
        for record in out.split("\x00"):
            if not record.strip():
                continue
            parts = record.strip("\n").split("\x1f")
            values = [p.strip() for p in parts[1:] if p.strip()]
            result.append((parts[0].strip(), values))
        return result

    # -- writes to the work tree and index -----------------------------------------------------------------
    def stage(self, paths: Iterable[str]) -> None:
        """Stage ``paths`` as they are on disk (a missing file is staged as a deletion)."""
        index = self._repo.index
        index.read(force=False)
        for path in paths:
            if (self.root / path).is_file():
                index.add(path)
            else:
                try:
                    index.remove(path)
                except (OSError, KeyError):
                    pass
        index.write()

    def move(self, src: str, dst: str, *, stage: bool = True) -> None:
        """``git mv src dst``: create parent folders, rename on disk, and stage both sides (unless ``stage=False``)."""
        source = self.root / src
        if not source.is_file():
            raise PathNotFound(f"{src}: no such file in the work tree", hint="run `git memhtml list`")
        target = self.root / dst
        target.parent.mkdir(parents=True, exist_ok=True)
        source.rename(target)
        if stage:
            self.stage([src, dst])

    def unstage_all(self) -> None:
        """Reset the index to HEAD without touching work-tree bytes (``git reset -q``)."""
        head = self.head_sha()
        index = self._repo.index
        if head is None:
            index.clear()
        else:
            index.read_tree(self._commit(head).tree)
        index.write()

    def restore_paths(self, paths: Iterable[str]) -> None:
        """Put ``paths`` back as HEAD has them: rewrite tracked files, delete untracked ones, and reset their index
        entries to HEAD's (other index entries are left as they are)."""
        head = self.head_sha()
        wanted = sorted(set(paths))
        for path in wanted:
            data = self.read_path_at(head, path) if head else None
            target = self.root / path
            if data is None:
                if target.is_file():
                    target.unlink()
                    prune_empty_dirs(target.parent, self.root)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        self._reset_index_entries(head, wanted)

    def staged_changes(self) -> bool:
        """Return whether the index differs from HEAD's tree."""
        index = self._repo.index
        index.read(force=False)
        tree = index.write_tree()
        head = self.head_sha()
        return head is None or tree != self._commit(head).tree_id


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
        return GitRepo(pygit2.Repository(str(path)), env=self._env)

    def add_detached_worktree(self, name: str, path: Path, sha: str) -> GitRepo:
        """Check ``sha`` out detached in a new linked work tree at ``path`` (no branch is created)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.run_git(["worktree", "add", "--detach", "--quiet", str(path), sha])
        created = pygit2.Repository(str(path))
        actual = path.resolve().name
        if actual != name:
            raise GitError(f"worktree {actual} is not named {name}", hint="git worktree prune")
        return GitRepo(created, env=self._env)

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


_LINK = int(pygit2.enums.FileMode.LINK)
_REGULAR = (int(pygit2.enums.FileMode.BLOB), int(pygit2.enums.FileMode.BLOB_EXECUTABLE))


def _walk_delta(old: pygit2.Tree, new: pygit2.Tree, prefix: str, gone: dict[str, pygit2.Object],
                came: dict[str, pygit2.Object], out: list[Change]) -> None:
    """Compare two trees entry by entry, entering only subtrees whose ids differ: a non-tree entry on one side only
    goes to ``gone`` / ``came``; one changed in place is ``M``, or a deletion plus an addition when it turned from a
    regular file into a symlink or a submodule (libgit2's answer without ``INCLUDE_TYPECHANGE``)."""
    if old.id == new.id:
        return
    olds = {str(e.name): e for e in old}
    news = {str(e.name): e for e in new}
    for name in sorted(olds.keys() | news.keys()):
        o, n = olds.get(name), news.get(name)
        if o is not None and n is not None and o.id == n.id and o.filemode == n.filemode:
            continue
        path = prefix + name
        o_tree, n_tree = isinstance(o, pygit2.Tree), isinstance(n, pygit2.Tree)
        if o_tree and n_tree:
            assert isinstance(o, pygit2.Tree) and isinstance(n, pygit2.Tree)
            _walk_delta(o, n, path + "/", gone, came, out)
            continue
        if o is not None and n is not None and not o_tree and not n_tree \
                and _kind(int(o.filemode)) == _kind(int(n.filemode)):
            out.append(Change("M", path))
            continue
        for entry, side in ((o, gone), (n, came)):
            if isinstance(entry, pygit2.Tree):
                _every_file(entry, path + "/", side)
            elif entry is not None:
                side[path] = entry


def _every_file(tree: pygit2.Tree, prefix: str, side: dict[str, pygit2.Object]) -> None:
    for entry in tree:
        if isinstance(entry, pygit2.Tree):
            _every_file(entry, prefix + str(entry.name) + "/", side)
        else:
            side[prefix + str(entry.name)] = entry


def _by_path(change: Change) -> tuple[str, str]:
    return change.path, change.status


def _kind(mode: int) -> str:
    return "file" if mode in _REGULAR else "link" if mode == _LINK else "other"


def _unique_regular(side: dict[str, pygit2.Object]) -> dict[str, str] | None:
    """``{blob sha: path}`` of the regular files of ``side``; ``None`` when a sha is held by several of them (which
    one moved where is libgit2's call then)."""
    out: dict[str, str] = {}
    for path, entry in side.items():
        if _kind(int(entry.filemode)) != "file":
            continue
        sha = str(entry.id)
        if sha in out:
            return None
        out[sha] = path
    return out
