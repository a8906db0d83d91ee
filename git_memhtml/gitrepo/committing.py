"""The commit path of the git choke point: the write lock, commits landed by compare-and-swap, the journal.

:class:`CommitPath` is the part of :class:`~git_memhtml.gitrepo.repo.GitRepo` that puts commits on a branch
(docs/store.md "The write lock", "How a commit is built"): ``commit`` (what a private index holds) and
``commit_files`` (``HEAD``'s tree plus one operation's paths), each moving the branch only if it still points
where it was read, and the journal that lets the next writer finish a commit whose process was killed.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import pygit2
from pygit2.enums import FileMode

from git_memhtml.cut import clip
from git_memhtml.errors import GitError, HeadMoved, MemhtmlError
from git_memhtml.gitrepo.index_entries import disk_stat, index_add, index_remove, tree_entries
from git_memhtml.gitrepo.lock import DEFAULT_LOCK_TIMEOUT_S, write_lock
from git_memhtml.gitrepo.message import build_message
from git_memhtml.gitrepo.packwrite import PACK_MIN_BLOBS, distinct_blobs, hash_name, pack_stream
from git_memhtml.gitrepo.plumbing import prune_empty_dirs, write_atomic
from git_memhtml.gitrepo.process import run_git

_ZERO = "0" * 40
_DEFERRED_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""What :func:`signals_deferred` holds back: Ctrl-C and a polite kill (SIGKILL cannot be caught: the journal)."""
_INDEX_LOCK_RETRIES = 40
_INDEX_LOCK_WAIT_S = 0.05
"""Writing the index waits up to 2 s (40 × 50 ms) for a concurrent git's ``index.lock``."""
JOURNAL_PARTS = ("memhtml", "write-journal.json")
"""Where :meth:`CommitPath.commit_files` notes the commit it is landing, under this work tree's git dir."""


class _Unset:
    """Marker of an argument not given."""


_UNSET = _Unset()


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while the block runs, then deliver each one that arrived, with the handlers of
    before (Ctrl-C raises ``KeyboardInterrupt`` after the block, SIGTERM then ends the process as it would have).

    For the steps that must finish once begun: between a commit's ref move and its last work-tree file, an
    interrupt used to leave HEAD holding a batch that git's index and the work tree lacked (a plain ``git
    commit`` then deleted it). Outside the main thread (where Python cannot set handlers) it holds nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []

    def hold(signum: int, _frame: FrameType | None) -> None:
        arrived.append(signum)

    before = {sig: signal.signal(sig, hold) for sig in _DEFERRED_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)  # None: a handler set outside Python
        for got in dict.fromkeys(arrived):
            signal.raise_signal(got)


class CommitPath:
    """The commit methods of :class:`~git_memhtml.gitrepo.repo.GitRepo` (a mixin: it reads the repository
    through the attributes and methods declared under ``TYPE_CHECKING``, which ``GitRepo`` defines)."""

    lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S
    fault_point: str | None = None
    """Test fault point: the stage of :meth:`commit_files` at which the process kills itself with SIGKILL (the
    CLI sets it from ``MEMHTML_FAULT_POINT``; docs/store.md): ``before-ref`` (the commit object and journal exist
    but the branch has not moved), ``after-ref`` (the branch moved but no file is written) or ``mid-files`` (the
    first of several files is written)."""

    if TYPE_CHECKING:
        _repo: pygit2.Repository
        root: Path
        git_dir: Path
        common_dir: Path
        landed: list[str]
        recovered: list[str]

        @property
        def env(self) -> Mapping[str, str]: ...
        def head_sha(self) -> str | None: ...
        def read_blob(self, sha: str) -> bytes: ...
        def tree_blobs(self, commit_sha: str, prefixes: Sequence[str] = ...) -> dict[str, str]: ...
        def is_ancestor(self, ancestor: str, descendant: str) -> bool: ...
        def _commit(self, sha: str) -> pygit2.Commit: ...
        def _signature(self, role: str) -> pygit2.Signature: ...

    def _reset_index_entries(self, commit: str | None, paths: Sequence[str], *,
                             verified: Mapping[str, os.stat_result] | None = None,
                             index_file: Path | None = None) -> None:
        """Set the index entries of ``paths`` to their blobs in ``commit`` (removed when absent there), in one index
        write. A file on disk holding that blob gets its stat data recorded (``git status`` then trusts it without
        re-hashing, as after a checkout); any other keeps the blob without stat data, so git shows the disk bytes
        as an unstaged change. ``verified`` maps paths whose disk bytes the caller just wrote or compared to their
        ``lstat`` result: those are neither read nor hashed again. No attribute or filter is consulted: memory
        files take none (docs/git.md). Retries while another git holds ``index.lock``.

        ``index_file``: another index file than this work tree's (the ``GIT_INDEX_FILE`` git hands a pre-commit
        hook, :meth:`finish_journal`); the same entries, stat data included, go there."""
        entries = tree_entries(self._commit(commit).tree if commit else None, paths)
        known = verified or {}
        stats: dict[str, os.stat_result | None] = {}
        for path, entry in entries.items():
            if entry is not None:
                stats[path] = known[path] if path in known else disk_stat(self.root / path, entry[0])
        for attempt in range(_INDEX_LOCK_RETRIES):
            index = self._repo.index if index_file is None else pygit2.Index(str(index_file))
            index.read(force=False)
            for path, entry in entries.items():
                if entry is None:
                    index_remove(index, path)
                else:
                    index_add(index, path, entry[0], entry[1], stats[path])
            try:
                index.write()
                return
            except pygit2.GitError:
                if attempt == _INDEX_LOCK_RETRIES - 1:
                    raise
                time.sleep(_INDEX_LOCK_WAIT_S)

    def _write_blobs(self, blobs: Sequence[bytes]) -> list[pygit2.Oid]:
        """Store ``blobs`` and return their ids in order: loose objects below :data:`PACK_MIN_BLOBS`, else one pack
        through ``git index-pack --stdin`` (:mod:`gitrepo.packwrite`) in the repository's object format.

        Raises:
            GitError: ``git index-pack`` refused the pack, or an object is missing after it (nothing committed).
        """
        if len(blobs) < PACK_MIN_BLOBS:
            return [self._repo.create_blob(data) for data in blobs]
        try:
            object_format = str(self._repo.config["extensions.objectformat"])
        except KeyError:
            object_format = None
        algorithm = hash_name(object_format)
        ids, unique = distinct_blobs(blobs, algorithm)
        proc = run_git(["index-pack", "--stdin"], cwd=self.root, env=self.env,
                       input=pack_stream(list(unique.values()), algorithm), text=False)
        if proc.returncode != 0:
            raise GitError(f"git index-pack failed (exit {proc.returncode}): "
                           f"{clip(proc.stderr.decode('utf-8', 'replace').strip(), 300)}; nothing was committed",
                           hint="check the disk space and `git fsck`, then retry")
        oids = {oid: pygit2.Oid(hex=oid) for oid in unique}
        odb = self._repo.odb
        missing = [oid for oid, value in oids.items() if not odb.exists(value)]
        if missing:
            raise GitError(f"{len(missing)} blob(s) missing after git index-pack (first {missing[0]}); nothing was "
                           "committed", hint="run `git fsck` and retry")
        return [oids[oid] for oid in ids]

    # -- commits ---------------------------------------------------------------------------------------------
    @contextmanager
    def write_lock(self, purpose: str) -> Iterator[None]:
        """Hold the repository-wide write lock (:mod:`gitrepo.lock`) for ``purpose``; on entry, finish the commit
        a killed writer of this work tree left half-applied (:meth:`recover_journal`).

        Raises:
            WriteLocked: another writer held it for more than :attr:`lock_timeout` seconds.
        """
        with write_lock(self.common_dir, purpose=purpose, timeout=self.lock_timeout):
            finished = self.recover_journal()
            if finished:
                self.recovered.append(finished)
            yield

    def head_ref(self) -> tuple[str, str | None]:
        """Return ``(ref, sha)`` of HEAD: the branch ref it points at (``HEAD`` when detached) and its commit
        (``None`` on an unborn branch)."""
        if self._repo.head_is_detached:
            return "HEAD", str(self._repo.head.target)
        ref = str(self._repo.lookup_reference("HEAD").target)
        found = self._repo.references.get(ref)
        return ref, None if found is None else str(found.resolve().target)

    def _ref_sha(self, ref: str) -> str | None:
        found = self._repo.references.get(ref)
        return None if found is None else str(found.resolve().target)

    def _compare_and_swap(self, ref: str, new: str, old: str | None, subject: str) -> None:
        """Move ``ref`` from ``old`` (``None``: it must not exist) to ``new`` with ``git update-ref``, which checks
        the old value under git's own ref lock.

        Raises:
            HeadMoved: ``ref`` is no longer at ``old`` (nothing was changed).
            GitError: the update failed for another reason.
        """
        proc = run_git(["update-ref", "-m", clip(f"commit: {subject}", 200), ref, new, old or _ZERO], cwd=self.root,
                       env=self.env)
        if proc.returncode == 0:
            return
        now = self._ref_sha(ref)
        if now != old:
            raise HeadMoved(
                f"{ref} moved from {(old or 'nothing')[:12]} to {(now or 'nothing')[:12]} while committing; "
                "nothing was committed",
                hint="another program committed at the same time: run the command again",
            )
        raise GitError(f"git update-ref {ref} failed (exit {proc.returncode}): {clip(proc.stderr.strip(), 300)}",
                       hint="check for a stale .lock file under .git/refs and retry")

    def commit(self, subject: str, body: str | None = None, trailers: Sequence[tuple[str, str]] = ()) -> str | None:
        """Commit what is staged on the checked-out branch; return the sha, or ``None`` when nothing is staged.

        For work trees whose index is private to one process (a sleep run's worktree, a scratch corpus); the
        user's checkout is written with :meth:`commit_files`. The message is :func:`message.build_message`'s (free
        text cannot forge a trailer); the branch moves by compare-and-swap from the HEAD read here.

        Raises:
            HeadMoved: the branch moved meanwhile (nothing committed). GitError: git failed.
        """
        ref, head = self.head_ref()
        index = self._repo.index
        index.read(force=False)
        tree = index.write_tree()
        if head is not None and tree == self._commit(head).tree_id:
            return None
        return self._land(ref, head, tree, build_message(subject, body, trailers), subject)

    def _land(self, ref: str, head: str | None, tree: pygit2.Oid, message: str, subject: str) -> str:
        parents = [] if head is None else [pygit2.Oid(hex=head)]
        try:
            oid = self._repo.create_commit(
                None, self._signature("AUTHOR"), self._signature("COMMITTER"), message, tree, parents
            )
        except pygit2.GitError as exc:
            raise GitError(f"commit failed: {exc}", hint="check `git status` and retry") from exc
        self._compare_and_swap(ref, str(oid), head, subject)
        self.landed.append(str(oid))
        return str(oid)

    def commit_files(
        self,
        changes: Mapping[str, bytes | None],
        subject: str,
        body: str | None = None,
        trailers: Sequence[tuple[str, str]] = (),
        *,
        parent: str | _Unset | None = _UNSET,
        purpose: str = "commit",
    ) -> str | None:
        """Commit ``changes`` (``{path: new bytes, or None to delete}``) on the checked-out branch, then put them
        in the work tree and the index; return the sha, or ``None`` when HEAD already holds exactly them.

        Under :meth:`write_lock`: the tree is HEAD's plus ``changes`` (never what the shared index holds), the
        commit's parent is the HEAD read (``parent``, when given, must still be it), the branch moves by
        compare-and-swap, and only then are the files written and their index entries updated, so ``git
        status`` stays clean and unrelated staged entries are kept. A journal under the git dir names the commit
        while it lands: a process killed before the ref moved left nothing but unreachable objects; one killed
        after is completed by the next writer (:meth:`recover_journal`).

        Raises:
            HeadMoved: HEAD is not ``parent``, or moved during the commit (nothing committed).
            WriteLocked: see :meth:`write_lock`.
            GitError: git failed before the commit landed; or, with ``landed`` set, while updating the work tree
                after it (the commit stands; the next writer or ``doctor --fix`` finishes the work tree).
        """
        with self.write_lock(purpose):
            ref, head = self.head_ref()
            if not isinstance(parent, _Unset) and parent != head:
                raise HeadMoved(
                    f"HEAD moved from {(parent or 'nothing')[:12]} to {(head or 'nothing')[:12]} before the commit; "
                    "nothing was committed",
                    hint="another program committed at the same time: run the command again",
                )
            index = pygit2.Index()
            if head is not None:
                index.read_tree(self._commit(head).tree)
            written = sorted((path, data) for path, data in changes.items() if data is not None)
            blobs = self._write_blobs([data for _, data in written])
            for path, data in changes.items():
                if data is None:
                    index_remove(index, path)
            for (path, _), blob in zip(written, blobs, strict=True):
                mode = FileMode(index[path].mode) if path in index else FileMode.BLOB
                index.add(pygit2.IndexEntry(path, blob, mode))
            tree = index.write_tree(self._repo)
            if head is not None and tree == self._commit(head).tree_id:
                return None
            message = build_message(subject, body, trailers)
            parents = [] if head is None else [pygit2.Oid(hex=head)]
            try:
                oid = str(self._repo.create_commit(
                    None, self._signature("AUTHOR"), self._signature("COMMITTER"), message, tree, parents))
            except pygit2.GitError as exc:
                raise GitError(f"commit failed: {exc}", hint="check `git status` and retry") from exc
            journal = self.git_dir.joinpath(*JOURNAL_PARTS)
            journal.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(journal, json.dumps({"ref": ref, "parent": head, "commit": oid,
                                               "paths": sorted(changes)}).encode("utf-8"))
            self._fault("before-ref")
            with signals_deferred():  # from the ref move to the last file: Ctrl-C or SIGTERM waits for the end
                try:
                    self._compare_and_swap(ref, oid, head, subject)
                except MemhtmlError:  # the ref did not move; any other exception leaves the journal to judge
                    journal.unlink(missing_ok=True)
                    raise
                self.landed.append(oid)
                self._fault("after-ref")
                try:
                    # index entries first: a plain `git commit` starting now builds from an index that has our paths
                    self._reset_index_entries(oid, sorted(changes))
                    self._materialize(oid, sorted(changes), fault=True, data=changes)
                except (OSError, pygit2.GitError) as exc:
                    raise GitError(
                        f"commit {oid} landed, but updating the work tree failed: {exc}",
                        hint="the next git memhtml write finishes it (or run git memhtml doctor --fix)",
                    ) from exc
                journal.unlink(missing_ok=True)
            return oid

    def _fault(self, stage: str) -> None:
        """The test fault points (docs/store.md "Test fault points"): ``stage`` SIGKILLs this process,
        ``interrupt:stage`` sends it SIGINT (Ctrl-C), ``term:stage`` SIGTERM."""
        sent = {stage: signal.SIGKILL, f"interrupt:{stage}": signal.SIGINT, f"term:{stage}": signal.SIGTERM}
        if self.fault_point in sent:
            os.kill(os.getpid(), sent[self.fault_point])

    def _materialize(self, commit: str, paths: Sequence[str], *, only_if: Callable[[str, bytes | None], bool]
                     | None = None, fault: bool = False, data: Mapping[str, bytes | None] | None = None,
                     index_file: Path | None = None) -> None:
        """Make the work tree and index entries of ``paths`` equal ``commit``'s (files written atomically).
        ``only_if(path, bytes on disk or None)`` may veto a path (recovery never overwrites later edits). ``data``:
        the bytes the caller knows ``commit`` holds at some paths (``commit_files``'s own), not read back from the
        object store. One subtree read per folder; each file written or found equal is ``lstat``-ed once for its
        index entry. ``index_file``: the index to set, as :meth:`_reset_index_entries`."""
        tree = self._commit(commit).tree
        entries = tree_entries(tree, paths)
        given = data or {}
        done: list[str] = []
        verified: dict[str, os.stat_result] = {}
        folders: set[Path] = set()
        for path in paths:
            entry = entries[path]
            if entry is None:
                want = None
            elif given.get(path) is not None:
                want = given[path]
            else:
                want = self.read_blob(str(entry[0]))
            target = self.root / path
            disk = target.read_bytes() if target.is_file() else None
            if disk != want:
                if only_if is not None and not only_if(path, disk):
                    done.append(path)  # its index entry still follows the commit; the edit shows as unstaged
                    continue
                if want is None:
                    if target.is_file():
                        target.unlink()
                        prune_empty_dirs(target.parent, self.root)
                else:
                    if target.parent not in folders:
                        target.parent.mkdir(parents=True, exist_ok=True)
                        folders.add(target.parent)
                    write_atomic(target, want)
            if want is not None:
                verified[path] = os.lstat(target)
            done.append(path)
            if fault and len(done) == 1 < len(paths):
                self._fault("mid-files")
        self._reset_index_entries(commit, done, verified=verified, index_file=index_file)

    def has_journal(self) -> bool:
        """Whether a :meth:`commit_files` of this work tree was killed before it finished (one ``stat``)."""
        return self.git_dir.joinpath(*JOURNAL_PARTS).is_file()

    def journal_path(self) -> Path:
        """Where this work tree's :meth:`commit_files` journal lives (``<git-dir>/memhtml/write-journal.json``)."""
        return self.git_dir.joinpath(*JOURNAL_PARTS)

    def finish_journal(self, index_files: Sequence[Path]) -> str | None:
        """Under the write lock, finish the journal's commit into the index files ``index_files`` (git's own
        ``GIT_INDEX_FILE`` of a commit under way, :mod:`git_memhtml.hooks.guard`) instead of this work tree's
        ``index``; return the sha finished or ``None`` (no journal, or its commit never landed).

        Unlike :meth:`write_lock`, it never touches ``<git-dir>/index`` unless it is one of ``index_files``: a
        ``git commit -a`` or ``git commit <paths>`` holds ``index.lock`` while its hooks run.

        Raises:
            WriteLocked: another writer held the lock for more than :attr:`lock_timeout` seconds.
            GitError: the commit landed but its files or index entries could not be written.
        """
        if not self.journal_path().is_file():
            return None
        with write_lock(self.common_dir, purpose="pre-commit journal recovery", timeout=self.lock_timeout):
            try:
                return self.recover_journal(index_files=index_files)
            except (OSError, pygit2.GitError) as exc:
                raise GitError(f"could not finish the commit named in {self.journal_path()}: {exc}",
                               hint="run git memhtml doctor --fix, then commit again", path=str(self.journal_path())
                               ) from exc

    def recover_journal(self, *, index_files: Sequence[Path] = ()) -> str | None:
        """Finish or forget the commit a killed :meth:`commit_files` of this work tree left in its journal.

        A commit that reached its branch (it is an ancestor of the branch tip) gets its files written and its
        index entries set, except paths edited since (their bytes are neither the parent's nor the commit's);
        one that did not is forgotten (nothing had been written), and so is one whose branch is no longer checked
        out (the work tree is another branch's). Returns the sha finished, or ``None``.
        Called on every :meth:`write_lock` entry; cheap when there is no journal (one ``stat``).

        ``index_files``: the index files to set the entries in (empty: this work tree's ``index``); the journal
        is removed only once every one is written (an exception leaves it for the next writer).
        """
        journal = self.journal_path()
        if not journal.is_file():
            return None
        try:
            note = json.loads(journal.read_text(encoding="utf-8"))
            commit, ref, parent = note.get("commit"), str(note["ref"]), note.get("parent")
            paths = [str(p) for p in note["paths"]]
        except (ValueError, KeyError, TypeError, OSError):
            journal.unlink(missing_ok=True)
            return None
        for path in paths:  # a temporary sibling of a file the killed writer was writing
            target = self.root / path
            if target.parent.is_dir():
                for temp in target.parent.glob(f".{target.name}.memhtml-tmp-*"):
                    temp.unlink(missing_ok=True)
        tip = self._ref_sha(ref)
        landed = bool(commit) and tip is not None and self._repo.get(commit) is not None \
            and self.is_ancestor(str(commit), tip)
        if landed and self.head_ref()[0] != ref:  # the user checked out another branch since: git's checkout
            journal.unlink(missing_ok=True)          # wrote that branch's files; ours arrive when they come back
            return None
        if landed:
            before = self.tree_blobs(parent, prefixes=()) if parent else {}

            def untouched(path: str, disk: bytes | None) -> bool:
                old = before.get(path)
                return disk is None if old is None else disk is not None and str(pygit2.hash(disk)) == old

            own = self.git_dir / "index"
            first, *others = [None if f.resolve() == own.resolve() else f for f in index_files] or [None]
            self._materialize(str(commit), paths, only_if=untouched, index_file=first)
            for other in others:  # every path's entry follows the commit, edited ones included (_materialize)
                self._reset_index_entries(str(commit), paths, index_file=other)
        journal.unlink(missing_ok=True)
        return str(commit) if landed else None
