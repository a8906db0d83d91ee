"""An index of one commit built in a folder equals ``index rebuild`` of a checkout of that commit, and never reads
the work tree (docs/index.md §3.10).

The repository's work tree is made to disagree with the commit on purpose (an edited memory, an untracked one, a
deleted one, a committed invalid memory repaired on disk, a committed symlink replaced by a regular file), so any
read of the work tree would show in the rows.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from git_memhtml.cli.common import init_memory
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.errors import GitError, ModelUnavailable, StorageError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB, open_index
from git_memhtml.index.overlay import COMMITTED_LINK
from git_memhtml.index.retrieval import search
from git_memhtml.index.retrieval_sql import Scope
from git_memhtml.index.snapshot import CommitView, build_commit_index, describes_commit, rebuild_commit
from git_memhtml.store.ops import parse_op_stream
from git_memhtml.store.writer import apply_batch
from tests.index.index_helpers import NOW, Repo, memory_html
from tests.index.test_incremental_property import plane

PROJECT = Path(__file__).resolve().parents[2]
DEMO = PROJECT / "git_memhtml" / "resources" / "demo" / "memories.jsonl"
CLI_EMBEDDER = FakeEmbedder()
"""``MEMHTML_EMBED=fake`` (tests/conftest.py) is the fake embedder at its default 1024 dimensions."""
BAD = "areas/inbox/bad.html"
LINK = "areas/inbox/link.html"
FILES = {
    "areas/inbox/a.html": memory_html("Deploys", "Alpha deploys on Mondays.", tags=("ops",),
                                      entities=("project:alpha",)),
    "areas/inbox/b.html": memory_html("Caches", "Alpha caches pages for an hour.", entities=("project:alpha",),
                                      links=(("supersedes", "/areas/inbox/a.html"),)),
    "areas/inbox/twin.html": memory_html("Deploys", "Alpha deploys on Mondays.", tags=("ops",),
                                         entities=("project:alpha",)),
    "projects/web/c.html": memory_html("Checkout", "The checkout-api timeout is 30 seconds.",
                                       entities=("service:checkout-api",)),
    "projects/web/task.html": memory_html("Fix timeout", "Raise the checkout-api timeout.", memory_type="task"),
    "archive/2025/areas/inbox/old.html": memory_html("Old", "Alpha used to deploy on Sundays."),
    "resources/topic/long.html": memory_html(
        "Long", "Beta shards the ledger.", body=" ".join(f"Shard {n} holds the ledger rows of tenant {n}." for n in
                                                        range(120))),
    BAD: "<!doctype html><html><body><p>not a memory</p></body></html>\n",
}


def _scenario(tmp_path: Path) -> tuple[Repo, str]:
    """A commit with the files above plus a committed symlink, then a work tree that disagrees with it."""
    repo = Repo(tmp_path / "mem")
    for path, html in FILES.items():
        repo.write(path, html)
    os.symlink("a.html", repo.root / LINK)
    sha = repo.commit("corpus", *FILES, LINK)
    repo.write("areas/inbox/a.html", memory_html("Deploys", "Alpha deploys on Fridays now."))
    repo.write("areas/inbox/untracked.html", memory_html("New", "Gamma retries thrice."))
    (repo.root / "projects/web/c.html").unlink()
    repo.write(BAD, memory_html("Repaired", "The bad file is valid on disk only."))
    (repo.root / LINK).unlink()
    repo.write(LINK, memory_html("Link", "A regular file where the commit has a symlink."))
    return repo, sha


@pytest.fixture
def scenario(tmp_path: Path) -> Iterator[tuple[Repo, str, IndexDB]]:
    repo, sha = _scenario(tmp_path)
    db = build_commit_index(repo.git, sha, tmp_path / "commit-index", CLI_EMBEDDER, now=NOW)
    yield repo, sha, db
    db.close()


def _checkout_rebuild(repo: GitRepo, sha: str, where: Path) -> IndexDB:
    """``git memhtml index rebuild`` (the console script, a subprocess) in a clean detached checkout of ``sha``."""
    checkout = repo.add_detached_worktree("checkout", where / "checkout", sha)
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    done = subprocess.run(["git-memhtml", "-C", str(checkout.root), "index", "rebuild"], env=env,
                          capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    return IndexDB.for_repo(checkout)


def test_commit_index_equals_rebuild_of_a_checkout(scenario: tuple[Repo, str, IndexDB], tmp_path: Path) -> None:
    repo, sha, built = scenario
    checkout = _checkout_rebuild(repo.git, sha, tmp_path)
    try:
        ours, theirs = plane(built), plane(checkout)
        assert ours == theirs
        assert ours["head"] == [(sha, CLI_EMBEDDER.space)]
        paths = {r[0] for r in ours["files"]}
        assert "areas/inbox/untracked.html" not in paths and "projects/web/c.html" in paths
        assert BAD not in paths and LINK not in paths
        assert ours["index_refusals"] and ours["edges"] and ours["file_entities"] and ours["embeddings"]
        assert len([r for r in ours["chunks"] if r[1] == "resources/topic/long.html"]) > 1
        body = next(r for r in ours["files"] if r[0] == "areas/inbox/a.html")
        assert "Mondays" in str(body)
        for query, scope in [("alpha deploys", Scope()), ("checkout timeout", Scope(memory_types=("task",))),
                             ("alpha", Scope(include_archived=True)), ("ledger", Scope(entity="project:alpha")),
                             ("shard 7 tenant", Scope())]:
            for limit in (3, 10):
                got = search(built, query, scope=scope, embedder=CLI_EMBEDDER, now=NOW, limit=limit)
                want = search(checkout, query, scope=scope, embedder=CLI_EMBEDDER, now=NOW, limit=limit)
                assert got == want
                assert got.hits or got.archived_matches is not None
    finally:
        checkout.close()


def test_invalid_memory_and_symlink_are_reported_from_the_commit(tmp_path: Path) -> None:
    """The report names the committed invalid file and the committed symlink, though the work tree holds valid
    regular files at both paths: nothing was read from disk."""
    repo, sha = _scenario(tmp_path)
    db = open_index(":memory:", ":memory:")
    try:
        report = rebuild_commit(repo.git, sha, db, None, now=NOW)
        errors = dict(report.errors)
        assert set(errors) == {BAD, LINK, "areas/inbox/twin.html"}
        assert errors[LINK] == COMMITTED_LINK
        assert "same content" in errors["areas/inbox/twin.html"]
        assert report.head_sha == sha and report.embeddings_written == 0
        assert describes_commit(db, sha, None)
    finally:
        db.close()


def test_a_commit_view_has_no_work_tree(tmp_path: Path) -> None:
    repo, sha = _scenario(tmp_path)
    view = CommitView(repo.git, sha[:10])
    assert view.head_sha() == sha and view.dirty() == ()
    with pytest.raises(GitError, match="no work tree"):
        _ = view.root
    tree = repo.git.run_git(["rev-parse", f"{sha}^{{tree}}"]).strip()
    for rev in ("no-such-rev", tree, "0" * 40):
        with pytest.raises(GitError) as caught:
            CommitView(repo.git, rev)
        assert caught.value.hint


def test_update_of_a_commit_index_re_tries_refusals_from_blobs(tmp_path: Path) -> None:
    """``update`` from one commit to the next through a CommitView: the holder of a duplicate goes, so the refused
    twin is projected again, from its blob (before the fix it was read from the work tree). The result equals a
    fresh build of the second commit."""
    repo, first = _scenario(tmp_path)
    repo.git.run_git(["rm", "-q", "--cached", "areas/inbox/a.html"])
    second = repo.git.commit("drop the holder")
    assert second is not None
    embedder = FakeEmbedder(dim=16)
    moved = build_commit_index(repo.git, first, tmp_path / "first", embedder, now=NOW)
    fresh = build_commit_index(repo.git, second, tmp_path / "second", embedder, now=NOW)
    try:
        report = indexer.update(CommitView(repo.git, second), moved, embedder, now=NOW)
        assert report.head_sha == second
        assert moved.query("SELECT path FROM files WHERE path = 'areas/inbox/twin.html'")
        assert plane(moved) == plane(fresh)
        assert describes_commit(moved, second, embedder.space)
    finally:
        moved.close()
        fresh.close()


def test_describes_commit(scenario: tuple[Repo, str, IndexDB], tmp_path: Path) -> None:
    repo, sha, built = scenario
    assert describes_commit(built, sha, CLI_EMBEDDER.space)
    assert not describes_commit(built, sha, "fake:hash@64")
    assert not describes_commit(built, sha, None)
    assert not describes_commit(built, "0" * 40, CLI_EMBEDDER.space)
    dirty = IndexDB.for_repo(repo.git)  # the user's index: watermark = HEAD = sha, plus the work-tree overlay
    try:
        indexer.rebuild(repo.git, dirty, CLI_EMBEDDER, now=NOW)
        assert dirty.query("SELECT path FROM worktree_paths")
        assert not describes_commit(dirty, sha, CLI_EMBEDDER.space)
    finally:
        dirty.close()
    with built.atomic():
        built.execute("DELETE FROM embeddings WHERE chunk_id = (SELECT min(chunk_id) FROM chunks)")
    assert not describes_commit(built, sha, CLI_EMBEDDER.space)


class _Failing:
    """An embedder that always fails (the remote one unreachable)."""

    provider, model, dim = "fake", "down", 4
    space = "fake:down@4"

    def embed(self, texts: object) -> np.ndarray:
        raise ModelUnavailable("the endpoint is down", hint="retry later")


def test_build_errors(tmp_path: Path) -> None:
    repo, sha = _scenario(tmp_path)
    with pytest.raises(GitError):
        build_commit_index(repo.git, "0" * 40, tmp_path / "none", None, now=NOW)
    build_commit_index(repo.git, sha, tmp_path / "once", None, now=NOW).close()
    with pytest.raises(StorageError, match="already exists") as caught:
        build_commit_index(repo.git, sha, tmp_path / "once", None, now=NOW)
    assert caught.value.hint
    (tmp_path / "file").write_text("x")
    with pytest.raises(StorageError, match="cannot create"):
        build_commit_index(repo.git, sha, tmp_path / "file" / "sub", None, now=NOW)
    with pytest.raises(ModelUnavailable, match="endpoint is down"):
        build_commit_index(repo.git, sha, tmp_path / "down", _Failing(), now=NOW)


def test_a_commit_without_memories(tmp_path: Path) -> None:
    """A commit holding no memory gives an empty index that still describes it, vectors of the space included."""
    repo = Repo(tmp_path / "mem")
    repo.write("README.md", "# notes\n")
    sha = repo.commit("readme", "README.md")
    embedder = FakeEmbedder(dim=8)
    db = build_commit_index(repo.git, "main", tmp_path / "empty", embedder, now=NOW)
    try:
        assert db.query("SELECT count(*) FROM files") == [(0,)]
        assert describes_commit(db, sha, embedder.space) and not describes_commit(db, "main", embedder.space)
    finally:
        db.close()


def test_commit_index_of_the_demo_corpus_equals_rebuild_of_a_checkout(tmp_path: Path) -> None:
    """The demo corpus (82 operations, one commit each), at a commit in the middle of its history, while HEAD has
    moved on and the work tree holds an uncommitted edit."""
    root = tmp_path / "demo"
    init_memory(root)
    repo = GitRepo.discover(root)
    ops = DEMO.read_text(encoding="utf-8").splitlines()
    apply_batch(repo, parse_op_stream("\n".join(ops[:50]) + "\n"), now="2026-01-10T00:00:00Z", dedupe=lambda _h: None)
    middle = repo.head_sha()
    assert middle is not None
    apply_batch(repo, parse_op_stream("\n".join(ops[50:]) + "\n"), now="2026-01-11T00:00:00Z", dedupe=lambda _h: None)
    edited = next(p for p in sorted(root.glob("areas/**/*.html")))
    edited.write_text(edited.read_text(encoding="utf-8").replace("</article>", "<p>Uncommitted.</p></article>"),
                      encoding="utf-8")
    built = build_commit_index(repo, middle, tmp_path / "middle", CLI_EMBEDDER, now=NOW)
    checkout = _checkout_rebuild(repo, middle, tmp_path)
    try:
        ours = plane(built)
        assert ours == plane(checkout) and len(ours["files"]) >= 40
        for query in ("checkout-api timeout", "who owns the paging policy", "postgres upgrade"):
            assert search(built, query, embedder=CLI_EMBEDDER, now=NOW) == \
                search(checkout, query, embedder=CLI_EMBEDDER, now=NOW)
    finally:
        built.close()
        checkout.close()
