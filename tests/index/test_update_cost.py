"""An incremental update costs what changed (issue 12): a commit touching k files makes ``indexer.update`` parse k
files and look k paths up in HEAD's tree, however many files the tree holds; ``GitRepo.tree_delta`` gives the answer
of ``GitRepo.diff`` while entering only the subtrees that differ; a refusal is re-tried exactly when its holder goes
(deleted, renamed past it, edited, archived, or a dirty holder cleaned), also within one pass."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_memhtml.document.model import PARA_PREFIXES, MemoryDocument
from git_memhtml.document.parse import parse_memory
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.gitrepo import Change, GitRepo
from git_memhtml.gitrepo.values import TreeBlob
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB, open_index
from git_memhtml.index.source import HeadBlobs
from git_memhtml.sleep.engine.run import _open_env
from tests.index.index_helpers import NOW, Repo, memory_html
from tests.index.test_incremental_property import plane


class Watching(GitRepo):
    """A real repository that counts the reads that walk a whole tree (``tree_blobs``, ``tree_files``, and
    libgit2's tree diff, which walks every entry of both trees) and the paths looked up one by one."""

    whole_tree_reads = 0
    looked_up: list[str] = []  # noqa: RUF012 - a class-level tally the tests reset

    def blobs_at(self, commit_sha: str, paths: Iterable[str]) -> dict[str, TreeBlob]:
        wanted = list(paths)
        Watching.looked_up += wanted
        return super().blobs_at(commit_sha, wanted)

    def tree_blobs(self, commit_sha: str, prefixes: Sequence[str] = PARA_PREFIXES) -> dict[str, str]:
        Watching.whole_tree_reads += 1
        return super().tree_blobs(commit_sha, prefixes)

    def tree_files(self, commit_sha: str, prefixes: Sequence[str] = PARA_PREFIXES) -> dict[str, TreeBlob]:
        Watching.whole_tree_reads += 1
        return super().tree_files(commit_sha, prefixes)

    def diff(self, a_sha: str, b_sha: str) -> list[Change]:
        Watching.whole_tree_reads += 1
        return super().diff(a_sha, b_sha)


class Counting:
    """``parse_memory`` that records the paths it parsed."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    def __call__(self, data: bytes, *, path: str, **options: Any) -> MemoryDocument:
        self.paths.append(path)
        return parse_memory(data, path=path, **options)


def _corpus(repo: Repo, n: int) -> list[str]:
    paths = [f"areas/f{i % 7}/m{i:04d}.html" for i in range(n)]
    for i, path in enumerate(paths):
        repo.write(path, memory_html(f"Memory {i}", f"Fact number {i} holds."))
    repo.commit("seed", *paths)
    return paths


def _same_as_rebuild(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    fresh = open_index(":memory:", ":memory:")
    try:
        indexer.rebuild(repo.git, fresh, embedder, now=NOW)
        assert plane(db) == plane(fresh)
    finally:
        fresh.close()


@pytest.mark.parametrize("n", [40, 400])
def test_a_k_file_commit_parses_k_files_whatever_the_size(repo: Repo, db: IndexDB, embedder: FakeEmbedder,
                                                          n: int) -> None:
    paths = _corpus(repo, n)
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    changed = paths[3:6]
    for i, path in enumerate(changed):
        repo.write(path, memory_html(f"Edited {i}", f"Edited fact {i} holds now."))
    repo.git.move(paths[9], "resources/moved/m.html", stage=True)
    repo.commit("edit three, move one", *changed)
    counting = Counting()
    report = indexer.update(repo.git, db, embedder, now=NOW, parse=counting)
    assert (report.modified, report.renamed) == (3, 1)
    assert sorted(counting.paths) == sorted([*changed, "resources/moved/m.html"])
    _same_as_rebuild(repo, db, embedder)
    counting.paths.clear()
    indexer.update(repo.git, db, embedder, now=NOW, parse=counting)
    assert counting.paths == []  # nothing changed: nothing parsed


def test_an_update_never_reads_a_whole_tree(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    paths = _corpus(repo, 50)
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    watching = Watching.discover(repo.root)
    repo.write(paths[1], memory_html("Edited", "Edited fact holds now."))
    repo.commit("edit", paths[1])
    repo.git.move(paths[2], "areas/moved/m.html")  # an exact rename, committed
    repo.commit("move", paths[2], "areas/moved/m.html")
    repo.write(paths[3], memory_html("Dirty", "Uncommitted fact."))  # and a dirty file
    Watching.whole_tree_reads = 0
    report = indexer.update(watching, db, embedder, now=NOW)
    assert (report.modified, report.renamed) == (2, 1)
    assert Watching.whole_tree_reads == 0
    _same_as_rebuild(repo, db, embedder)


def test_a_pass_looks_up_only_the_paths_it_touches(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    paths = _corpus(repo, 60)
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    repo.write(paths[0], memory_html("Edited", "Edited fact holds now."))
    head = repo.commit("one file", paths[0])
    Watching.looked_up = []
    blobs = HeadBlobs(Watching.discover(repo.root), head)
    assert blobs.get(paths[0]) is not None and blobs.get("areas/f0/absent.html") is None
    assert blobs.get("notes/outside.html") is None  # not a memory path: never looked up
    assert blobs.get(paths[0]) is not None  # cached
    assert Watching.looked_up == [paths[0], "areas/f0/absent.html"]
    assert [c.path for c in repo.git.tree_delta(repo.git.parents(head)[0], head)] == [paths[0]]


def test_blobs_at_answers_as_the_whole_tree_listing(repo: Repo, tmp_path: Path) -> None:
    repo.write("areas/a/x.html", "x")
    repo.write("areas/a/deep/y.html", "y")
    repo.write("notes.txt", "n")
    os.symlink("x.html", repo.root / "areas/a/l.html")
    subprocess.run(["git", "-C", str(repo.root), "add", "-A"], check=True)
    head = repo.git.commit("tree")
    assert head is not None
    listing = repo.git.tree_files(head, ())
    asked = [*listing, "", "/", "areas", "areas/", "areas/a", "areas//a/x.html", "/areas/a/x.html", "areas/a/x.html/",
             "areas/a/l.html/x", "areas/a/absent.html", "absent/x.html", "areas/a/../a/x.html", "areas/./a/x.html"]
    assert repo.git.blobs_at(head, asked) == listing
    assert listing["areas/a/l.html"].link and not listing["areas/a/x.html"].link


def test_refusal_is_retried_when_its_holder_goes(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    same = memory_html("Twin", "The twin fact holds.")
    repo.write("areas/a/a.html", same)
    repo.write("areas/a/b.html", same)
    repo.write("areas/a/other.html", memory_html("Other", "Another fact."))
    repo.commit("twins", "areas/a/a.html", "areas/a/b.html", "areas/a/other.html")
    indexer.update(repo.git, db, embedder, now=NOW)
    assert db.query("SELECT path FROM index_refusals") == [("areas/a/b.html",)]
    # an unrelated commit does not re-try it
    repo.write("areas/a/other.html", memory_html("Other", "Another fact, edited."))
    repo.commit("unrelated", "areas/a/other.html")
    counting = Counting()
    indexer.update(repo.git, db, embedder, now=NOW, parse=counting)
    assert counting.paths == ["areas/a/other.html"]
    # the holder renamed past the refused path: b takes over, the moved twin is refused
    repo.git.move("areas/a/a.html", "areas/z/a.html")
    repo.commit("move the holder", "areas/a/a.html", "areas/z/a.html")
    indexer.update(repo.git, db, embedder, now=NOW)
    assert db.query("SELECT path FROM index_refusals") == [("areas/z/a.html",)]
    _same_as_rebuild(repo, db, embedder)
    # a dirty edit of the holder frees the content; cleaning it takes it back
    repo.write("areas/a/b.html", memory_html("Twin", "Edited in the work tree."))
    indexer.update(repo.git, db, embedder, now=NOW)
    assert db.query("SELECT path FROM index_refusals") == []
    _same_as_rebuild(repo, db, embedder)
    repo.git.restore_paths(["areas/a/b.html"])
    indexer.update(repo.git, db, embedder, now=NOW)
    assert db.query("SELECT path FROM index_refusals") == [("areas/z/a.html",)]
    _same_as_rebuild(repo, db, embedder)
    # deleting the holder in the work tree only
    (repo.root / "areas/a/b.html").unlink()
    indexer.update(repo.git, db, embedder, now=NOW)
    assert db.query("SELECT path FROM index_refusals") == []
    _same_as_rebuild(repo, db, embedder)


def test_refusal_made_and_freed_within_one_pass(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    """The holder comes back from HEAD and is gone from the work tree in the same pass (a soft reset): the twin it
    evicted on the way is re-tried before the pass ends."""
    same = memory_html("Twin", "The twin fact holds.")
    repo.write("areas/a/a.html", same)
    repo.write("areas/a/b.html", same)
    seed = repo.commit("twins", "areas/a/a.html", "areas/a/b.html")
    (repo.root / "areas/a/a.html").unlink()
    repo.commit("drop a", "areas/a/a.html")
    indexer.update(repo.git, db, embedder, now=NOW)
    assert db.query("SELECT path FROM index_refusals") == []
    repo.git.run_git(["reset", "-q", "--soft", seed])
    repo.git = GitRepo.discover(repo.root)
    indexer.update(repo.git, db, embedder, now=NOW)
    assert db.query("SELECT path FROM files") == [("areas/a/b.html",)]
    _same_as_rebuild(repo, db, embedder)


def test_symlinks_committed_and_in_the_work_tree_through_incremental_passes(
        repo: Repo, db: IndexDB, embedder: FakeEmbedder, tmp_path: Path) -> None:
    paths = _corpus(repo, 20)
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    outside = tmp_path / "outside.html"
    outside.write_text(memory_html("Outside", "Never indexed."), encoding="utf-8")
    os.symlink(outside, repo.root / "areas/f1/link.html")
    report = indexer.update(repo.git, db, embedder, now=NOW)
    assert [p for p, _ in report.errors] == ["areas/f1/link.html"]
    _same_as_rebuild(repo, db, embedder)
    subprocess.run(["git", "-C", str(repo.root), "add", "--", "areas/f1/link.html"], check=True)
    (repo.root / paths[2]).unlink()
    os.symlink(outside, repo.root / paths[2])  # a file turned link, committed with the new link
    subprocess.run(["git", "-C", str(repo.root), "add", "--", paths[2]], check=True)
    repo.git.commit("links")
    report = indexer.update(repo.git, db, embedder, now=NOW)
    assert sorted(p for p, _ in report.errors) == sorted(["areas/f1/link.html", paths[2]])
    assert db.query_one("SELECT 1 FROM files WHERE path = ?", (paths[2],)) is None
    _same_as_rebuild(repo, db, embedder)


# -- tree_delta == diff ------------------------------------------------------------------------------------------

NAMES = ("areas/a/x.html", "areas/a/y.html", "areas/b/x.html", "projects/p/q/r.html", "resources/t.html",
         "areas/a", "areas/b/x.html/in.html", "areas/a/caf\udce9.html")
"""Paths the generated histories use: nested, a file that becomes a folder and back, a name that is not UTF-8."""
CONTENTS = ("one\n", "two\n", "three\n" * 40, "three\n" * 39 + "four\n")
OP = st.tuples(st.sampled_from(("write", "delete", "move", "link", "exec")), st.integers(0, 7), st.integers(0, 7),
               st.integers(0, 3))


def _apply(root: Path, op: str, a: int, b: int, c: int) -> None:
    src, dst = root / NAMES[a], root / NAMES[b]

    def clear(target: Path) -> None:
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.is_dir():
            subprocess.run(["rm", "-rf", str(target)], check=True)
        for parent in target.parents:  # a file where a folder must be
            if parent == root:
                break
            if parent.is_file() or parent.is_symlink():
                parent.unlink()

    if op == "write":
        clear(src)
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text(CONTENTS[c], encoding="utf-8")
    elif op == "delete":
        clear(src)
    elif op == "move" and src.is_file() and not src.is_symlink() and a != b:
        data = src.read_bytes()
        clear(src)
        clear(dst)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(data)
    elif op == "link":
        clear(src)
        src.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(f"target{c}", src)
    elif op == "exec" and src.is_file() and not src.is_symlink():
        src.chmod(0o755 if c % 2 else 0o644)


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(ops=st.lists(st.lists(OP, min_size=1, max_size=5), min_size=2, max_size=4))
def test_tree_delta_answers_as_diff(tmp_path_factory: pytest.TempPathFactory,
                                    ops: list[list[tuple[str, int, int, int]]]) -> None:
    root = tmp_path_factory.mktemp("delta")
    git = GitRepo.init(root)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x"}
    commits: list[str] = []
    for batch in ops:
        for op in batch:
            _apply(root, *op)
        subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, env=env)
        subprocess.run(["git", "-C", str(root), "commit", "-q", "--allow-empty", "-m", "c"], check=True, env=env)
        commits.append(GitRepo.discover(root).head_sha() or "")
    git = GitRepo.discover(root)
    for a in commits:
        for b in commits:
            want = sorted(git.diff(a, b), key=lambda c: (c.path, c.status))
            assert git.tree_delta(a, b) == want


def test_the_sleep_reindex_between_phases_projects_only_what_the_phase_changed(repo: Repo, tmp_path: Path,
                                                                              embedder: FakeEmbedder) -> None:
    """The runner's own reindex step (``sleep.engine.run._open_env``) after a phase commit that rewrote k of n files:
    exactly k rows are projected again (their ``indexed_at`` is the run's instant), the others keep theirs."""
    paths = _corpus(repo, 120)
    base = repo.git.head_sha()
    assert base is not None
    with IndexDB.for_repo(repo.git) as user:
        indexer.update(repo.git, user, embedder, now=NOW)
        repo.git.create_branch("sleep/test", base)
        tree = repo.git.add_worktree("run", tmp_path / "run", "sleep/test")
        env, reindex = _open_env(repo.git, tree, run_id="r1", base_sha=base, date="2026-03-01", dry_run=False,
                                 deep=False, embedder=embedder, seed=user)
        try:
            reindex()
            stamped = "SELECT path FROM files WHERE indexed_at = ? ORDER BY path"
            assert env.db.query(stamped, (env.at,)) == []  # the seeded copy was already at the base
            rewritten = paths[10:15]
            for i, path in enumerate(rewritten):
                (tree.root / path).write_text(memory_html(f"Memory {10 + i}", f"Fact number {10 + i} holds.",
                                                          extra_metas=(("confidence", "0.5"),)), encoding="utf-8")
            tree.stage(rewritten)
            tree.commit("phase: rewrite five heads")
            reindex()
            assert [r[0] for r in env.db.query(stamped, (env.at,))] == sorted(rewritten)
        finally:
            env.db.close()


class Failing(Counting):
    """``parse_memory`` that dies on its ``at``-th call (a crash, or a bug, in the middle of a pass)."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at = at

    def __call__(self, data: bytes, *, path: str, **options: Any) -> MemoryDocument:
        if len(self.paths) + 1 == self.at:
            raise RuntimeError("killed mid-pass")
        return super().__call__(data, path=path, **options)


@pytest.mark.parametrize("at", [1, 3, 5])
def test_an_update_that_dies_mid_pass_leaves_the_index_as_it_was(repo: Repo, db: IndexDB, embedder: FakeEmbedder,
                                                                 at: int) -> None:
    """One transaction per pass: a reader (the writer's dedupe, docs/store.md §5.1) never sees rows of a pass
    without its watermark and work-tree overlay, and a pass that dies changes nothing."""
    paths = _corpus(repo, 30)
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    before = plane(db)
    for i, path in enumerate(paths[:4]):
        repo.write(path, memory_html(f"Edited {i}", f"Edited fact {i} holds now."))
    repo.commit("edit four", *paths[:4])
    (repo.root / paths[10]).unlink()  # and the work tree: one deletion, one edit
    repo.write(paths[11], memory_html("Dirty", "Uncommitted fact."))
    with pytest.raises(RuntimeError, match="killed mid-pass"):
        indexer.update(repo.git, db, embedder, now=NOW, parse=Failing(at))
    assert plane(db) == before
    indexer.update(repo.git, db, embedder, now=NOW)
    _same_as_rebuild(repo, db, embedder)
