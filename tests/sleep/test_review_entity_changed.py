"""``sleep review`` shows an entity rewrite as its own class, ``entity-changed``, never inside ``meta-only``
(issue 8 item 4): in the classification, the JSON summary and the markdown body."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memhtml.document import editors
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.presentation.review import CLASSES, classify, modified_class, review_run
from git_memhtml.sleep.presentation.review_markdown import render_markdown
from tests.sleep.sleep_corpus_helpers import git, memory

RUN = "sleep/2026-03-10"
AT = "2026-03-10T00:00:00Z"
ENTITY = "areas/inbox/entity.html"
STAMP = "areas/inbox/stamp.html"
BODY = "areas/inbox/body.html"
BOTH = "areas/inbox/both.html"


def _rewrite_entity(html: str, old: str, new: str) -> str:
    return editors.set_meta(editors.add_meta(editors.remove_meta(html, "entity", old), "entity", new), "updated", AT)


@pytest.fixture
def run_repo(tmp_path: Path) -> GitRepo:
    root = tmp_path / "mem"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    files = {
        ENTITY: memory("Service 1 answers on port 8001.", entities=["service:svc1"]),
        STAMP: memory("The cache TTL is 60 seconds.", entities=["service:cache"]),
        BODY: memory("Deploys happen on tuesday.", entities=["service:deploy"]),
        BOTH: memory("Node ten is a replica.", entities=["host:node-10"]),
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "seed")
    git(root, "checkout", "-q", "-b", RUN)
    (root / ENTITY).write_text(_rewrite_entity(files[ENTITY], "service:svc1", "service:svc10"))
    (root / STAMP).write_text(editors.set_meta(files[STAMP], "updated", AT))
    (root / BODY).write_text(memory("Deploys happen on wednesday.", entities=["service:deploy"]))
    (root / BOTH).write_text(
        _rewrite_entity(memory("Node ten is a replica now.", entities=["host:node-10"]), "host:node-10", "host:node-1")
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "memhtml(sleep(entity-resolution)): night", "-m",
        f"Memhtml-Run: {RUN}\nMemhtml-Phase: entity-resolution\nMemhtml-Counts: {{}}")
    git(root, "commit", "-q", "--allow-empty", "-m", "memhtml(sleep(report)): the run's report", "-m",
        f"Memhtml-Run: {RUN}\nMemhtml-Phase: report\nMemhtml-Counts: {{}}")  # a finished run ends in its report
    git(root, "checkout", "-q", "main")
    return GitRepo.discover(root)


def test_entity_rewrite_is_its_own_class(run_repo: GitRepo) -> None:
    base = run_repo.branch_sha("main")
    tip = run_repo.branch_sha(RUN)
    assert base is not None and tip is not None
    classes = {f.path: f for f in classify(run_repo, base, tip)}
    assert classes[ENTITY].classification == "entity-changed"
    assert (classes[ENTITY].entities_removed == ("service:svc1",)
            and classes[ENTITY].entities_added == ("service:svc10",))
    assert classes[STAMP].classification == "meta-only"
    assert classes[BODY].classification == "body-changed"
    assert classes[BOTH].classification == "body-changed"  # a text change outranks the entity change
    order = [f.path for f in classify(run_repo, base, tip)]
    assert order.index(BODY) < order.index(ENTITY) < order.index(STAMP)  # read text, then entities, stamps last


def test_modified_class_table() -> None:
    before = memory("Alpha holds.", entities=["org:DGIA"]).encode()
    rows = [
        (editors.set_meta(before.decode(), "updated", AT), "meta-only"),
        (_rewrite_entity(before.decode(), "org:DGIA", "org:dgia"), "entity-changed"),  # a case rewrite is one too
        (editors.add_meta(before.decode(), "entity", "person:Anna"), "entity-changed"),
        (memory("Alpha no longer holds.", entities=["org:DGIA"]), "body-changed"),
    ]
    for after, expected in rows:
        assert modified_class("a.html", before, after.encode()) == expected, expected
    assert modified_class("notes.txt", b"a", b"b") == "body-changed"


def test_review_json_and_markdown_show_entity_changes(run_repo: GitRepo) -> None:
    with IndexDB.for_repo(run_repo) as db:
        review = review_run(run_repo, db, RUN)
    assert "entity-changed" in CLASSES
    assert review["summary"]["entity-changed"] == 1 and review["summary"]["meta-only"] == 1
    entry = next(f for f in review["files"] if f["path"] == ENTITY)
    assert entry["entities"] == {"removed": ["service:svc1"], "added": ["service:svc10"]}
    assert next(f for f in review["files"] if f["path"] == STAMP)["entities"] is None
    text = render_markdown(run_repo, review).text
    section = text[text.index("### Entity-changed memories (1)"):text.index("### Detected tasks")]
    assert f"`{ENTITY}`: `service:svc1` → `service:svc10`" in section
    assert STAMP not in section
    assert "1 entity-changed" in text
    other = text[text.index("### Other changed files"):]
    assert "meta-only (1)" in other and ENTITY not in other
