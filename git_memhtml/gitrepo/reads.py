"""The read side of the git choke point: refs, blobs, trees, tree deltas and history.

:class:`Reads` is the part of :class:`~git_memhtml.gitrepo.repo.GitRepo` that reads commits and trees (a mixin:
it reaches the repository through the attributes declared under ``TYPE_CHECKING``, which ``GitRepo`` defines).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import pygit2
from pygit2.enums import DiffFind

from git_memhtml.document.model import PARA_PREFIXES
from git_memhtml.errors import GitError
from git_memhtml.gitrepo.values import Change, TreeBlob, TreeChange


class Reads:
    """Reads of refs, objects, trees and history (no write, no work-tree access)."""

    if TYPE_CHECKING:
        _repo: pygit2.Repository

        def _commit(self, sha: str) -> pygit2.Commit: ...

        def run_git(self, args: Sequence[str]) -> str: ...

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
