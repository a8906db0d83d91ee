"""A repository file name that is not UTF-8 is skipped by rebuild/update with one error entry, never a crash."""

from __future__ import annotations

import os
import subprocess

from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB
from tests.index.index_helpers import NOW, Repo, memory_html

BAD = b"areas/inbox/bad\xfename.html"
SHOWN = "areas/inbox/bad\\xfename.html"


def _write_bad(repo: Repo, name: bytes, text: str) -> None:
    target = os.fsencode(repo.root) + b"/" + name
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "wb") as handle:
        handle.write(text.encode("utf-8"))


def _git(repo: Repo, *args: bytes | str) -> None:
    subprocess.run(["git", "-C", str(repo.root), *args], check=True, capture_output=True)


def _paths(db: IndexDB) -> list[str]:
    return [r[0] for r in db.query("SELECT path FROM files ORDER BY path")]


def test_rebuild_skips_a_committed_non_utf8_name(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    repo.write("areas/inbox/a.html", memory_html("A", "Alpha deploys on Mondays."))
    _write_bad(repo, BAD, memory_html("Bad", "Bad name but good content."))
    _git(repo, "add", "--", "areas/inbox/a.html", os.fsdecode(BAD))
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "seed")
    report = indexer.rebuild(repo.git, db, embedder, now=NOW)
    assert report.errors == ((SHOWN, "file name is not UTF-8"),)
    assert (report.added, report.skipped) == (1, 1)
    assert _paths(db) == ["areas/inbox/a.html"]


def test_update_skips_new_and_renamed_non_utf8_names(repo: Repo, db: IndexDB, embedder: FakeEmbedder) -> None:
    repo.write("areas/inbox/a.html", memory_html("A", "Alpha deploys on Mondays."))
    repo.commit("seed", "areas/inbox/a.html")
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    _write_bad(repo, BAD, memory_html("Bad", "Bad name but good content."))
    report = indexer.update(repo.git, db, embedder, now=NOW)  # untracked: the dirty work tree
    assert report.errors == ((SHOWN, "file name is not UTF-8"),)
    _git(repo, "add", "--", os.fsdecode(BAD))
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "add")
    report = indexer.update(repo.git, db, embedder, now=NOW)  # committed: the diff
    assert report.errors == ((SHOWN, "file name is not UTF-8"),)
    _git(repo, "mv", os.fsdecode(BAD), "areas/inbox/good.html")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "rename")
    report = indexer.update(repo.git, db, embedder, now=NOW)  # renamed to a good name: indexed
    assert report.errors == () and _paths(db) == ["areas/inbox/a.html", "areas/inbox/good.html"]
