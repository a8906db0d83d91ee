"""The indexer never reads through a symlink (issue 8 item 1): a link, committed or not, to a file inside or
outside the repository, or a linked folder, is reported by name and never projected. Before the fix an
uncommitted link made an outside file searchable."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB
from git_memhtml.index.overlay import COMMITTED_LINK
from tests.index.index_helpers import NOW, Repo, memory_html

LINK_ERROR = "is a symlink: refused, symlinks are never followed"


def _paths(db: IndexDB) -> list[str]:
    return [r[0] for r in db.query("SELECT path FROM files ORDER BY path")]


def _titles(db: IndexDB) -> list[str]:
    return [r[0] for r in db.query("SELECT title FROM files ORDER BY path")]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.html").write_text(memory_html("Outside secret", "The secret is zebracorn."), encoding="utf-8")
    return folder


def _seed(repo: Repo) -> None:
    repo.write("areas/inbox/a.html", memory_html("A", "Alpha deploys on Mondays."))
    repo.commit("seed", "areas/inbox/a.html")


@pytest.mark.parametrize("target", ["outside", "inside"])
def test_uncommitted_file_link_is_reported_not_indexed(repo: Repo, db: IndexDB, embedder: FakeEmbedder,
                                                       outside: Path, target: str) -> None:
    _seed(repo)
    link = repo.root / "areas/inbox/link.html"
    os.symlink(outside / "secret.html" if target == "outside" else "a.html", link)
    for report in (indexer.rebuild(repo.git, db, embedder, now=NOW), indexer.update(repo.git, db, embedder, now=NOW)):
        assert report.errors == (("areas/inbox/link.html", LINK_ERROR),)
        assert _paths(db) == ["areas/inbox/a.html"] and "Outside secret" not in _titles(db)


def test_folder_link_is_reported_and_never_entered(repo: Repo, db: IndexDB, embedder: FakeEmbedder,
                                                  outside: Path) -> None:
    _seed(repo)
    (outside / "inner").mkdir()
    (outside / "inner" / "deep.html").write_text(memory_html("Deep", "Deep outside."), encoding="utf-8")
    os.symlink(outside, repo.root / "areas" / "linked")
    report = indexer.update(repo.git, db, embedder, now=NOW)
    assert report.errors == (("areas/linked", LINK_ERROR),)
    assert _paths(db) == ["areas/inbox/a.html"]
    subprocess.run(["git", "-C", str(repo.root), "add", "--", "areas/linked"], check=True)
    repo.git.commit("a linked folder")
    for report in (indexer.update(repo.git, db, embedder, now=NOW), indexer.rebuild(repo.git, db, embedder, now=NOW)):
        assert report.errors == (("areas/linked", COMMITTED_LINK),)
        assert _paths(db) == ["areas/inbox/a.html"]


def test_committed_link_is_reported_and_a_file_turned_link_loses_its_rows(repo: Repo, db: IndexDB,
                                                                          embedder: FakeEmbedder,
                                                                          outside: Path) -> None:
    _seed(repo)
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    target = repo.root / "areas/inbox/a.html"
    target.unlink()
    os.symlink(outside / "secret.html", target)
    subprocess.run(["git", "-C", str(repo.root), "add", "--", "areas/inbox/a.html"], check=True)
    repo.git.commit("a becomes a link")
    report = indexer.update(repo.git, db, embedder, now=NOW)
    assert report.errors == (("areas/inbox/a.html", COMMITTED_LINK),)
    assert _paths(db) == []
    report = indexer.rebuild(repo.git, db, embedder, now=NOW)
    assert report.errors == (("areas/inbox/a.html", COMMITTED_LINK),) and _paths(db) == []
