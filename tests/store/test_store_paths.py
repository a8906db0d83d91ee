"""The resolver's typed result and the writes it guards (``git_memhtml.tree.paths``; docs/store.md).

The CLI rows live in ``tests/trust/test_trust_paths.py``; here the library entry points: the per-verb needs,
the ``MemoryPath`` fields, and writes that would follow a linked folder (placement, archive destination).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_memhtml.cli.common import init_memory as init_repo
from git_memhtml.errors import PathNotFound, PathRefused
from git_memhtml.gitrepo import GitRepo
from git_memhtml.store.ops import WriteOp
from git_memhtml.store.writer import apply_batch, archive_memory
from git_memhtml.tree.paths import MemoryPath, Need, read_tree_file, resolve_memory_path

NOW = "2026-11-30T10:00:00Z"


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    init_repo(tmp_path / "memory")
    repo = GitRepo.discover(tmp_path / "memory")
    result = apply_batch(repo, [WriteOp.from_json({"title": "A", "type": "semantic", "body": "Alpha holds.",
                                                        "path": "areas/inbox/a.html"})],
                         now=NOW, dedupe=lambda _: None)
    assert result.commit_sha
    return repo


def test_typed_result_for_each_need(repo: GitRepo) -> None:
    root = repo.root
    assert resolve_memory_path(root, "areas/inbox/a.html", need=Need.LIVE) == MemoryPath(
        "areas/inbox/a.html", root / "areas/inbox/a.html", archived=False, exists=True)
    fresh = resolve_memory_path(root, "x.html", need=Need.NEW, base=root / "areas" / "inbox")
    assert (fresh.path, fresh.exists, fresh.archived) == ("areas/inbox/x.html", False, False)
    with pytest.raises(PathNotFound):
        resolve_memory_path(root, "areas/inbox/x.html", need=Need.EXISTING)


def test_archive_is_only_for_reading(repo: GitRepo) -> None:
    moved = archive_memory(repo, "areas/inbox/a.html", reason="old", now=NOW)
    assert resolve_memory_path(repo.root, moved.archive_path, need=Need.EXISTING).archived
    for need in (Need.LIVE, Need.NEW):
        with pytest.raises(PathRefused, match="inside archive/"):
            resolve_memory_path(repo.root, moved.archive_path, need=need)


def test_a_live_path_that_was_archived_names_its_archived_copy(repo: GitRepo) -> None:
    moved = archive_memory(repo, "areas/inbox/a.html", reason="done", now=NOW)
    for need in (Need.LIVE, Need.EXISTING):
        with pytest.raises(PathNotFound) as caught:
            resolve_memory_path(repo.root, "areas/inbox/a.html", need=need)
        assert caught.value.message == ("PATH areas/inbox/a.html: no such memory: it was archived to "
                                        f"{moved.archive_path}")
        assert caught.value.hint == f"it is read-only there: git memhtml read {moved.archive_path}"
    with pytest.raises(PathNotFound) as never:  # another name is plainly absent
        resolve_memory_path(repo.root, "areas/inbox/b.html", need=Need.LIVE)
    assert never.value.message == "PATH areas/inbox/b.html: no such memory"


def test_the_newest_archived_copy_is_named_and_no_link_is_followed(repo: GitRepo, tmp_path: Path) -> None:
    for year in ("2024", "2025"):
        (repo.root / "archive" / year / "areas" / "inbox").mkdir(parents=True)
        (repo.root / "archive" / year / "areas" / "inbox" / "gone.html").write_text("<!doctype html>")
    outside = tmp_path / "outside"
    (outside / "areas" / "inbox").mkdir(parents=True)
    (outside / "areas" / "inbox" / "gone.html").write_text("<!doctype html>")
    os.symlink(outside, repo.root / "archive" / "2026")  # a later year, through a link: never named
    with pytest.raises(PathNotFound, match=r"archived to archive/2025/areas/inbox/gone\.html$"):
        resolve_memory_path(repo.root, "areas/inbox/gone.html", need=Need.LIVE)


def test_refusal_names_the_argument_and_is_a_usage_error(repo: GitRepo) -> None:
    with pytest.raises(PathRefused) as caught:
        resolve_memory_path(repo.root, "areas/../.git/config", need=Need.EXISTING, name="DST")
    assert caught.value.exit_code == 2 and caught.value.message.startswith("DST .git/config: ")
    assert caught.value.hint


def test_placed_write_never_follows_a_linked_folder(repo: GitRepo, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, repo.root / "resources" / "ops")
    result = apply_batch(repo, [WriteOp.from_json({"title": "Ops", "type": "semantic", "tag": "ops",
                                                        "body": "Ops pages at night."})],
                         now=NOW, dedupe=lambda _: None)
    assert result.commit_sha is None and result.results[0].code == "ERR_INVALID_FLAG"
    assert "goes through the symlink ops" in (result.results[0].error or "")
    assert list(outside.iterdir()) == []


def test_archive_never_moves_into_a_linked_archive(repo: GitRepo, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, repo.root / "archive" / "2026")
    head = repo.head_sha()
    with pytest.raises(PathRefused, match="symlink"):
        archive_memory(repo, "areas/inbox/a.html", reason="old", now=NOW)
    assert list(outside.iterdir()) == [] and repo.head_sha() == head
    assert (repo.root / "areas/inbox/a.html").is_file()


def test_read_tree_file_refuses_links(repo: GitRepo) -> None:
    os.symlink("a.html", repo.root / "areas/inbox/b.html")
    with pytest.raises(PathRefused, match="is a symlink"):
        read_tree_file(repo.root, "areas/inbox/b.html")
    assert read_tree_file(repo.root, "areas/inbox/a.html").startswith(b"<!doctype html>")


@pytest.mark.parametrize("hostile", [".git/config", "../escape.html", "areas/inbox/.x.html", "archive/2026/a.html"])
def test_apply_refuses_a_hostile_path_even_when_the_content_dedupes(repo: GitRepo, hostile: str) -> None:
    """The path is resolved before the dedupe lookup: a duplicate body never launders a hostile path."""
    duplicate = WriteOp.from_json({"title": "A", "type": "semantic", "body": "Alpha holds.", "path": hostile})
    result = apply_batch(repo, [duplicate], now=NOW, dedupe=lambda _: "areas/inbox/a.html")
    assert result.commit_sha is None and not result.results[0].deduped
    assert result.results[0].code == "ERR_INVALID_FLAG"


def test_continue_on_error_commits_the_others_and_never_the_hostile_path(repo: GitRepo) -> None:
    ops = [WriteOp.from_json({"title": "Evil", "type": "semantic", "body": "Evil.", "path": ".git/hooks/x.html"}),
           WriteOp.from_json({"title": "Fine", "type": "semantic", "body": "Fine holds.",
                                   "path": "areas/inbox/fine.html"})]
    result = apply_batch(repo, ops, now=NOW, dedupe=lambda _: None, continue_on_error=True)
    assert result.commit_sha and result.written == ("areas/inbox/fine.html",)
    assert result.results[0].code == "ERR_INVALID_FLAG" and not (repo.git_dir / "hooks" / "x.html").exists()


def test_a_stamp_never_writes_through_a_hard_link(repo: GitRepo, tmp_path: Path) -> None:
    """A hand-made hard link (git never checks one out) shares its bytes with an outside file: a stamp replaces
    the name instead of writing into the shared inode."""
    outside = tmp_path / "outside.html"
    target = repo.root / "areas/inbox/a.html"
    os.link(target, outside)
    before = outside.read_bytes()
    from git_memhtml.store.writer import link_memories

    other = apply_batch(repo, [WriteOp.from_json({"title": "B", "type": "semantic", "body": "Beta holds.",
                                                       "path": "areas/inbox/b.html"})], now=NOW,
                        dedupe=lambda _: None)
    assert other.commit_sha
    assert link_memories(repo, "areas/inbox/a.html", "relates_to", "areas/inbox/b.html")
    assert outside.read_bytes() == before and target.read_bytes() != before
    assert [p.name for p in target.parent.iterdir() if p.name.endswith(".memhtml-tmp")] == []
