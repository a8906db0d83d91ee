"""An index of one commit, built in a folder of its own (docs/index.md §3.10 "Commit index").

The gate that sees a run (issue 10) compares retrieval on a run's base and on its tip. Forge CI has no index and the
user's own index may project a dirty work tree, so the base is projected here from the commit alone:
:class:`CommitView` is the indexer's repository for one commit and no work tree, :func:`build_commit_index`
rebuilds ``<folder>/index.db`` (with a fresh ``<folder>/state.db``) from it, and :func:`describes_commit` says
whether an open index is a clean projection of exactly one commit, so a caller can reuse one it built before.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from git_memhtml.document.model import PARA_PREFIXES
from git_memhtml.embed.base import Embedder
from git_memhtml.errors import GitError, ModelUnavailable, StorageError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.gitrepo.values import Change, DirtyEntry, TreeBlob
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB, open_index
from git_memhtml.index.indexer import IndexReport
from git_memhtml.index.watermark import index_state, overlay_rows

INDEX_FILE = "index.db"
STATE_FILE = "state.db"
"""The two database files of a commit index inside its folder (the names of the per-worktree index, docs/index.md
§3.1)."""
NO_WORK_TREE = "a commit index has no work tree"


class CommitView:
    """The repository as the indexer sees it (``source.IndexedRepo``), pinned to commit ``sha``, with no work tree.

    ``head_sha`` is the commit, ``dirty`` is empty, and ``tree_files``/``blobs_at``/``tree_delta``/``read_blob``
    read git objects through ``repo``. ``root`` raises
    :class:`GitError`: nothing may read a work tree through a commit view, so a pass that tried would fail loudly
    instead of projecting the user's uncommitted files.

    Raises:
        GitError: ``sha`` names no commit (hint ``git log --oneline``).
    """

    def __init__(self, repo: GitRepo, sha: str) -> None:
        self._repo = repo
        self.sha = repo.commit_sha(sha)

    @property
    def root(self) -> Path:
        """Never available (see the class docstring). Raises :class:`GitError`."""
        raise GitError(f"{NO_WORK_TREE} (commit {self.sha[:12]})",
                       hint="index the commit's tree through its blobs only (index/snapshot.py)")

    def head_sha(self) -> str | None:
        """The pinned commit's full sha."""
        return self.sha

    def tree_files(self, commit_sha: str, prefixes: Sequence[str] = PARA_PREFIXES) -> dict[str, TreeBlob]:
        """Every file and symlink of ``commit_sha``'s tree under ``prefixes`` (``GitRepo.tree_files``)."""
        return self._repo.tree_files(commit_sha, prefixes)

    def blobs_at(self, commit_sha: str, paths: Iterable[str]) -> dict[str, TreeBlob]:
        """The tree entries of ``paths`` in ``commit_sha``, one look-up each (``GitRepo.blobs_at``)."""
        return self._repo.blobs_at(commit_sha, paths)

    def read_blob(self, sha: str) -> bytes:
        """The bytes of blob ``sha``."""
        return self._repo.read_blob(sha)

    def tree_delta(self, a_sha: str, b_sha: str) -> Sequence[Change]:
        """The changes between two commits, renames detected, equal subtrees skipped (``GitRepo.tree_delta``)."""
        return self._repo.tree_delta(a_sha, b_sha)

    def dirty(self) -> Sequence[DirtyEntry]:
        """Always empty: a commit has no uncommitted files."""
        return ()


def rebuild_commit(repo: GitRepo, sha: str, db: IndexDB, embedder: Embedder | None, *, now: str) -> IndexReport:
    """Rebuild the open index ``db`` as the projection of commit ``sha`` alone (``indexer.rebuild`` over a
    :class:`CommitView`); ``now`` (ISO UTC) stamps the rows. Invalid memories and committed symlinks are skipped and
    listed in the report's ``errors``; an embedder failure is the report's ``embed_error``.

    Raises:
        GitError: ``sha`` names no commit, or a git object cannot be read. StorageError: SQLite failed.
    """
    return indexer.rebuild(CommitView(repo, sha), db, embedder, now=now)


def build_commit_index(repo: GitRepo, sha: str, folder: Path, embedder: Embedder | None, *, now: str) -> IndexDB:
    """Create ``folder/index.db`` + ``folder/state.db``, project commit ``sha`` into them with ``embedder`` (None:
    no vectors) and return the open index; the caller closes it. The state plane starts empty (no access counts).

    A file of the commit that is not a valid memory, or is committed as a symlink, is left out, as ``index
    rebuild`` leaves it out (:func:`rebuild_commit` returns that report).

    Raises:
        GitError: ``sha`` names no commit (hint ``git log --oneline``). StorageError: ``folder`` cannot be
            created, already holds an index (hint: pass an empty folder), or SQLite failed. ModelUnavailable: the
            embedder failed, so the index would lack vectors (nothing is left open).
    """
    full = repo.commit_sha(sha)
    index_path, state_path = folder / INDEX_FILE, folder / STATE_FILE
    for existing in (index_path, state_path):
        if existing.exists():
            raise StorageError(f"{existing} already exists: a commit index is built into an empty folder",
                               hint=f"remove {folder} or pass another folder", path=str(existing))
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(f"cannot create {folder}: {exc}", hint="pass a writable folder, e.g. under $TMPDIR",
                           path=str(folder)) from exc
    db = open_index(index_path, state_path)
    try:
        report = rebuild_commit(repo, full, db, embedder, now=now)
        if report.embed_error is not None:
            raise ModelUnavailable(f"the embedder failed while indexing commit {full[:12]}: {report.embed_error}",
                                   hint="check the configured embedder (git memhtml doctor), or use `fake`")
    except BaseException:
        db.close()
        raise
    return db


def describes_commit(db: IndexDB, sha: str, space: str | None) -> bool:
    """Whether ``db`` is a clean projection of exactly commit ``sha`` (a full sha) in vector space ``space``
    (``"<provider>:<model>@<dim>"``; ``None`` = no embedder): the watermark is ``sha``, no work-tree file is
    overlaid (``worktree_paths`` is empty), the recorded space is ``space`` and, with a space, every chunk has its
    vector. Reads only.

    Raises:
        StorageError: SQLite failed.
    """
    state = index_state(db)
    if state is None or state.head_sha != sha or state.embed_model != space or overlay_rows(db) != 0:
        return False
    if space is None:
        return True
    row = db.query_one(
        "SELECT EXISTS (SELECT 1 FROM chunks c LEFT JOIN embeddings e ON e.chunk_id = c.chunk_id AND e.model = ? "
        "WHERE e.chunk_id IS NULL)",
        (space,),
    )
    return row is not None and not row[0]
