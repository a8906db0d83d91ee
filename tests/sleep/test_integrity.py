"""integrity: a link to an archived target is rewritten to the newest archive year, one to nothing is dropped."""

from __future__ import annotations

from pathlib import Path

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.editors import get_links, get_meta
from git_memhtml.document.model import Link
from git_memhtml.document.template import render_memory
from git_memhtml.sleep.phases import integrity
from git_memhtml.sleep.phases.integrity import archived_location
from tests.sleep.sleep_corpus_helpers import AT, commit_and_reindex, make_env, make_repo, tree_files

OLD = "2026-01-01T00:00:00Z"


def _mem(claim: str, *, links: list[Link] | None = None, status: str = "active") -> str:
    return render_memory(MemoryDraft(title=claim[:20], memory_type="semantic", claim=claim, links=links or [],
                         status=status), now=OLD)


def _files() -> dict[str, str]:
    return {
        "areas/inbox/src.html": _mem(
            "The release train leaves on Tuesdays.",
            links=[
                Link("supports", "/areas/inbox/moved.html"),
                Link("relates_to", "/areas/inbox/gone.html"),
                Link("relates_to", "/areas/inbox/alive.html"),
                Link("from_session", "/sessions/abc"),
            ],
        ),
        "areas/inbox/alive.html": _mem("The release manager is Dana."),
        "archive/2025/areas/inbox/moved.html": _mem("The train used to leave on Mondays.", status="archived"),
        "archive/2023/areas/inbox/moved.html": _mem("The train once left on Fridays.", status="archived"),
    }


def test_dangling_links_rewritten_or_dropped_and_artifacts_generated(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, _files()))
    outcome = integrity.run(env)
    counts = outcome.counts.wire()
    assert counts["dangling"] == 2 and counts["rewritten"] == 1 and counts["dropped"] == 1
    root = env.repo.root
    src = (root / "areas/inbox/src.html").read_text()
    links = {(lk.rel, lk.href) for lk in get_links(src)}
    assert ("supports", "/archive/2025/areas/inbox/moved.html") in links  # newest year wins
    assert ("supports", "/areas/inbox/moved.html") not in links
    assert ("relates_to", "/areas/inbox/gone.html") not in links
    assert ("relates_to", "/areas/inbox/alive.html") in links
    assert ("from_session", "/sessions/abc") in links  # not a memory path: never judged
    assert get_meta(src, "updated") == AT
    assert "warning: drop areas/inbox/src.html relates_to /areas/inbox/gone.html" in (outcome.body or "")
    expected = {"index.html", "areas/index.html", "areas/inbox/index.html", "archive/index.html",
                "archive/2023/index.html", "archive/2023/areas/index.html", "archive/2023/areas/inbox/index.html",
                "archive/2025/index.html", "archive/2025/areas/index.html", "archive/2025/areas/inbox/index.html",
                "sitemap.xml"}
    assert {p for p in expected if (root / p).is_file()} == expected
    assert counts["artifacts"] == len(expected) and counts["regenerated"] == len(expected)
    assert outcome.subject == f"repair 2 dangling links, regenerate {len(expected)} artifacts"
    # the listing shows the repaired file's new stamp, and a second night over the committed result is quiet
    assert AT in (root / "sitemap.xml").read_text()
    commit_and_reindex(env)
    again = integrity.run(env)
    assert again.counts.wire() == {"dangling": 0, "rewritten": 0, "dropped": 0, "artifacts": len(expected),
                            "regenerated": 0}
    assert env.repo.commit("nothing") is None


def test_tree_wins_over_a_stale_index(tmp_path: Path) -> None:
    files = _files()
    env = make_env(make_repo(tmp_path, files))
    # an earlier phase archived alive.html after the index was refreshed: the link is now dangling-but-archived
    env.repo.move("areas/inbox/alive.html", "archive/2026/areas/inbox/alive.html")
    integrity.run(env)
    links = {(lk.rel, lk.href) for lk in get_links((env.repo.root / "areas/inbox/src.html").read_text())}
    assert ("relates_to", "/archive/2026/areas/inbox/alive.html") in links
    assert "areas/inbox/alive.html</loc>" not in (env.repo.root / "sitemap.xml").read_text().replace(
        "archive/2026/areas/inbox/alive.html</loc>", "")


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, _files()), dry_run=True)
    before = tree_files(env.repo)
    outcome = integrity.run(env)
    assert outcome.counts.wire()["dangling"] == 2 and outcome.counts.wire()["regenerated"] > 0
    assert tree_files(env.repo) == before
    assert not (env.repo.root / "sitemap.xml").exists()


def test_archived_location_window() -> None:
    exists = {"archive/2016/a/b.html": 1, "archive/2015/a/c.html": 1}
    assert archived_location("a/b.html", 2026, exists) == "archive/2016/a/b.html"
    assert archived_location("a/c.html", 2026, exists) is None  # eleven years back is outside the window


def _folded(claim: str, keeper: str) -> str:
    """An archived member as a fold leaves it: ``superseded-by`` → ``keeper``."""
    from git_memhtml.store.edits import apply_edits, set_meta

    return apply_edits(_mem(claim, status="archived"), [set_meta("superseded-by", "/" + keeper)])


def test_a_link_to_a_folded_memory_reaches_the_memory_that_superseded_it(tmp_path: Path) -> None:
    """A careful night (issue 27): a fold archived the file other memories linked to, and integrity pointed their
    links at the archive, not at the keeper that now states the fact. The keeper's own link to its member keeps the
    archive path (a memory never links to itself); a superseding file that is itself archived is no target."""
    files = {
        "areas/inbox/reader.html": _mem("The queue backlog delays the confirmation emails.",
                                        links=[Link("relates_to", "/areas/ops/backlog.html"),
                                               Link("relates_to", "/areas/ops/twice.html")]),
        "areas/inbox/keeper.html": _mem("The notification queue backs up under load.",
                                        links=[Link("relates_to", "/areas/ops/backlog.html")]),
        "archive/2026/areas/ops/backlog.html": _folded("The notification queue backlogs at peak.",
                                                       "areas/inbox/keeper.html"),
        "archive/2026/areas/ops/twice.html": _folded("The queue was slow once.", "archive/2026/areas/ops/gone.html"),
        "archive/2026/areas/ops/gone.html": _mem("The queue is slow.", status="archived"),
    }
    env = make_env(make_repo(tmp_path, files))
    counts = integrity.run(env).counts.wire()
    assert counts["dangling"] == 3 and counts["rewritten"] == 3 and counts["dropped"] == 0
    root = env.repo.root
    reader = {(lk.rel, lk.href) for lk in get_links((root / "areas/inbox/reader.html").read_text())}
    assert reader == {("relates_to", "/areas/inbox/keeper.html"), ("relates_to", "/archive/2026/areas/ops/twice.html")}
    keeper = {(lk.rel, lk.href) for lk in get_links((root / "areas/inbox/keeper.html").read_text())}
    assert keeper == {("relates_to", "/archive/2026/areas/ops/backlog.html")}
