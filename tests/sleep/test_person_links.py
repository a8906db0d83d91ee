"""person-links: person files minted from the tree, never rewritten, claimants linked once."""

from __future__ import annotations

import json
from pathlib import Path

from git_memhtml.cli.common import init_memory as init_repo
from git_memhtml.document.editors import get_links, get_meta
from git_memhtml.document.model import Link
from git_memhtml.document.parse import parse_memory
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.sleep.phases import dedup_merge, entity_resolution, person_links
from git_memhtml.store.ops import parse_op_stream
from git_memhtml.store.writer import apply_batch
from tests.sleep.sleep_corpus_helpers import AT, EMBEDDER, commit_and_reindex, make_env, make_repo, memory, tree_files


def _files() -> dict[str, str]:
    return {
        "areas/inbox/a.html": memory("Sam approved the budget.", entities=["person:Sam Ortiz"]),
        "areas/inbox/b.html": memory("Sam owns the roadmap.", entities=["person:Sam Ortiz", "person:Dana"]),
        "resources/people/dana.html": memory("Dana is a contractor.", title="Dana", entities=["person:Dana"]),
        "areas/inbox/tasks/t.html": memory("Ask Sam.", memory_type="task", entities=["person:Task Only"]),
    }


def test_person_files_created_and_claimants_linked(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, _files()))
    dana_before = (env.repo.root / "resources/people/dana.html").read_bytes()
    outcome = person_links.run(env)
    assert outcome.counts.wire() == {"people": 2, "filesCreated": 1, "linksAdded": 3}
    assert outcome.subject == "link 2 memories to 2 people"
    root = env.repo.root
    sam = parse_memory((root / "resources/people/sam-ortiz.html").read_bytes())
    assert sam.title == "Sam Ortiz" and sam.gist == "Sam Ortiz appears in this agent's memory."
    assert sam.author == "agent:sleep" and sam.entities == ("person:Sam Ortiz",) and sam.created == AT
    assert (root / "resources/people/dana.html").read_bytes() == dana_before  # never rewritten, no self link
    assert not (root / "resources/people/task-only.html").exists()  # tasks are excluded
    b = (root / "areas/inbox/b.html").read_text()
    assert Link("about_person", "/resources/people/sam-ortiz.html") in get_links(b)
    assert Link("about_person", "/resources/people/dana.html") in get_links(b)
    assert get_meta(b, "updated") == AT


def test_second_run_adds_nothing(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, _files()))
    person_links.run(env)
    commit_and_reindex(env)
    before = tree_files(env.repo)
    assert person_links.run(env).counts.wire() == {"people": 2, "filesCreated": 0, "linksAdded": 0}
    assert tree_files(env.repo) == before


def test_reads_names_from_the_tree_after_entity_resolution_without_reindex(tmp_path: Path) -> None:
    files = {
        "areas/inbox/a.html": memory("Kim approved.", entities=["person:Kim Lee"]),
        "areas/inbox/b.html": memory("Kim asked.", entities=["person:Kim  LEE"]),
    }
    env = make_env(make_repo(tmp_path, files))
    entity_resolution.run(env)  # rewrites both to person:kim lee; index not refreshed
    counts = person_links.run(env).counts.wire()
    assert counts["people"] == 1 and counts["filesCreated"] == 1
    assert (env.repo.root / "resources/people/kim-lee.html").exists()


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, _files()), dry_run=True)
    before = tree_files(env.repo)
    assert person_links.run(env).counts.wire()["filesCreated"] == 1
    assert tree_files(env.repo) == before


def test_demo_corpus_two_nights_of_the_three_deterministic_phases(tmp_path: Path) -> None:
    """git_memhtml/resources/demo: 5 folds, 3 vetoes, Priya merged by the alias oracle, storefront deferred; night
    two is quiet."""
    demo = Path(__file__).resolve().parents[2] / "git_memhtml" / "resources" / "demo" / "memories.jsonl"
    root = tmp_path / "demo"
    init_repo(root)
    repo = GitRepo.discover(root)
    apply_batch(repo, parse_op_stream(demo.read_text()), now="2026-01-10T00:00:00Z", dedupe=lambda _h: None)
    db = IndexDB.for_repo(repo)
    indexer.rebuild(repo, db, EMBEDDER, now=AT)
    head = repo.head_sha()
    assert head is not None
    env = PhaseEnv(repo=repo, db=db, embedder=EMBEDDER, run_id="sleep/2026-03-10", base_sha=head,
                   date="2026-03-10", at=AT)
    nights: list[dict[str, dict[str, int]]] = []
    for _ in range(2):
        night: dict[str, dict[str, int]] = {}
        for phase in (dedup_merge, entity_resolution, person_links):
            outcome = phase.run(env)
            night[phase.__name__] = outcome.counts.wire()
            repo.commit(outcome.subject, outcome.body)
            indexer.update(repo, db, EMBEDDER, now=AT)
        nights.append(night)
    first, second = (json.loads(json.dumps(n)) for n in nights)
    dedup = first["git_memhtml.sleep.phases.dedup_merge"]
    assert (dedup["merged"], dedup["vetoed"], dedup["tasksMinted"]) == (5, 3, 3)
    entity = first["git_memhtml.sleep.phases.entity_resolution"]
    assert entity["aliasMerges"] == 1 and entity["reviewCandidates"] == 1 and entity["tasksMinted"] == 1
    assert second["git_memhtml.sleep.phases.dedup_merge"]["merged"] == 0
    assert second["git_memhtml.sleep.phases.dedup_merge"]["tasksRefreshed"] == 3
    assert second["git_memhtml.sleep.phases.entity_resolution"]["filesRewritten"] == 0
    assert second["git_memhtml.sleep.phases.person_links"]["linksAdded"] == 0
    assert repo.commit("nothing left") is None
    people = sorted(p.name for p in (root / "resources/people").glob("*.html"))
    assert "priya-raman.html" in people and "priya.html" not in people


def test_a_person_file_is_found_by_what_it_is_wherever_it_is_filed(tmp_path: Path) -> None:
    """Dana's file lives under an explicit path, and a fact about Sam sits under ``resources/people/`` (the original
    placement): Dana gets no second file and her claimants link to hers; the fact about Sam is a claimant like any
    other, and Sam gets a minted file (issue 27)."""
    files = {
        "areas/team/dana.html": memory("Dana is a contractor.", title="Dana", entities=["person:Dana"]),
        "resources/people/sam-approved-the-budget.html": memory("Sam approved the budget.",
                                                                entities=["person:Sam"]),
        "areas/inbox/b.html": memory("Sam and Dana own the roadmap.", entities=["person:Sam", "person:Dana"]),
    }
    env = make_env(make_repo(tmp_path, files))
    outcome = person_links.run(env)
    assert outcome.counts.wire() == {"people": 2, "filesCreated": 1, "linksAdded": 3}
    root = env.repo.root
    assert sorted(p.name for p in (root / "resources/people").glob("*.html")) == [
        "sam-approved-the-budget.html", "sam.html"]
    fact = (root / "resources/people/sam-approved-the-budget.html").read_text()
    assert get_links(fact) == [Link("about_person", "/resources/people/sam.html")]
    b = (root / "areas/inbox/b.html").read_text()
    assert set(get_links(b)) == {Link("about_person", "/areas/team/dana.html"),
                                 Link("about_person", "/resources/people/sam.html")}
    assert get_links((root / "areas/team/dana.html").read_text()) == []  # never rewritten, no self link


def test_two_people_whose_names_share_a_slug_get_two_files(tmp_path: Path) -> None:
    files = {
        "areas/inbox/a.html": memory("Kim Lee approved.", entities=["person:Kim Lee"]),
        "areas/inbox/b.html": memory("Kim-Lee asked.", entities=["person:Kim-Lee"]),
    }
    env = make_env(make_repo(tmp_path, files))
    assert person_links.run(env).counts.wire()["filesCreated"] == 2
    root = env.repo.root
    titles = {parse_memory((root / "resources/people" / n).read_bytes()).title for n in ("kim-lee.html",
                                                                                         "kim-lee-2.html")}
    assert titles == {"Kim Lee", "Kim-Lee"}
    assert Link("about_person", "/resources/people/kim-lee-2.html") in get_links(
        (root / "areas/inbox/b.html").read_text())
