"""Sleep never reads or writes through a symlink (issue 8 item 1). The listings generator reports a linked memory
or folder by name and leaves it out of every listing, and never writes a linked listing through; entity
resolution never reads a linked person file. Before the fix a committed link published the outside file's title
into ``index.html`` and ``sitemap.xml``."""

from __future__ import annotations

import os
from pathlib import Path

from git_memhtml.artifacts.listings import PublishResult, publish, scan_tree
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import open_index
from tests.sleep.sleep_corpus_helpers import make_repo, memory

REFUSED = "is a symlink: refused, symlinks are never followed"


def _publish(repo: GitRepo) -> PublishResult:
    """The listings and sitemap regenerated from an empty throwaway index (every file is re-read from the tree)."""
    db = open_index(":memory:", ":memory:")
    try:
        return publish(repo, db)
    finally:
        db.close()


def _outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.html").write_text(memory("The secret is zebracorn.", title="Outside secret zebracorn"),
                                        encoding="utf-8")
    return folder


def test_linked_files_and_folders_are_reported_and_never_listed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"areas/inbox/a.html": memory("Alpha deploys on Mondays.", title="Alpha")})
    outside = _outside(tmp_path)
    os.symlink(outside / "secret.html", repo.root / "areas/inbox/link.html")
    os.symlink(outside, repo.root / "areas/linked")
    refused: list[tuple[str, str]] = []
    tree = scan_tree(repo.root, refused=refused)
    assert sorted(tree) == ["areas/inbox/a.html"]
    assert sorted(refused) == [("areas/inbox/link.html", REFUSED), ("areas/linked", REFUSED)]
    result = _publish(repo)
    assert ("areas/inbox/link.html", REFUSED) in result.refused
    for path in result.paths:
        if (repo.root / path).is_file():
            assert "zebracorn" not in (repo.root / path).read_text(encoding="utf-8")


def test_a_linked_listing_is_not_written_through(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"areas/inbox/a.html": memory("Alpha deploys on Mondays.", title="Alpha")})
    outside = _outside(tmp_path)
    victim = outside / "victim.html"
    victim.write_text("untouched", encoding="utf-8")
    os.symlink(victim, repo.root / "areas/inbox/index.html")
    result = _publish(repo)
    assert victim.read_text(encoding="utf-8") == "untouched"
    assert ("areas/inbox/index.html", REFUSED) in result.refused
    assert (repo.root / "areas/index.html").is_file()  # the other listings are still regenerated


def test_a_linked_person_file_is_never_read_by_entity_resolution(tmp_path: Path) -> None:
    from git_memhtml.sleep.phases.entity_resolution import alias_file_paths

    ada = memory("Ada runs payments.", title="Ada", entities=["person:Ada"], aliases=["Ada L."])
    repo = make_repo(tmp_path, {"resources/people/ada.html": ada, "areas/inbox/x.html": memory("Payments run.")})
    outside = _outside(tmp_path)
    (outside / "secret.html").write_text(ada.replace("Ada L.", "Eve"), encoding="utf-8")
    (outside / "deep").mkdir()
    (outside / "deep" / "mallory.html").write_text(ada.replace("Ada L.", "Mallory"), encoding="utf-8")
    os.symlink(outside / "secret.html", repo.root / "resources/people/eve.html")
    os.symlink(outside, repo.root / "resources/people/linked")
    os.symlink(outside / "deep", repo.root / "areas/linked")
    assert alias_file_paths(repo) == ["resources/people/ada.html"]


def test_a_hard_linked_listing_is_replaced_not_written_through(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"areas/inbox/a.html": memory("Alpha deploys on Mondays.", title="Alpha")})
    victim = _outside(tmp_path) / "victim.html"
    victim.write_text("untouched", encoding="utf-8")
    os.link(victim, repo.root / "areas/inbox/index.html")
    result = _publish(repo)
    assert victim.read_text(encoding="utf-8") == "untouched"
    assert "areas/inbox/index.html" in result.paths
    assert "Alpha" in (repo.root / "areas/inbox/index.html").read_text(encoding="utf-8")
