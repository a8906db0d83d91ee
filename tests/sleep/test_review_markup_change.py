"""``sleep review`` never calls a markup change ``meta-only`` (issue 8 item 1).

The content hash is of the article's canonical *text*, so markup added without text (an ``<iframe>``, an
``<a href>``, an attribute) leaves it unchanged. Only a change of the ``memhtml-`` metas and links (what the head
editors write) may be ``meta-only`` or ``entity-changed``; every other byte change is ``body-changed``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memhtml.document import editors
from git_memhtml.document.hash import content_hash
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.presentation.review import classify, modified_class, review_run
from git_memhtml.sleep.presentation.review_markdown import render_markdown
from tests.sleep.sleep_corpus_helpers import git, memory

RUN = "sleep/2026-03-11"
AT = "2026-03-11T00:00:00Z"
BEFORE = memory("Alpha holds.", entities=["org:DGIA"])
IFRAME = '<iframe src="https://evil.example/x"></iframe>'


def _in_article(html: str, old: str, new: str) -> str:
    head, _, rest = html.partition("<article>")
    return head + "<article>" + rest.replace(old, new, 1)


MARKUP_ONLY = [
    ("iframe-in-article", _in_article(BEFORE, "</mark></p>", f"</mark></p>\n{IFRAME}")),
    ("anchor-around-text", _in_article(BEFORE, "<mark>Alpha holds.</mark>",
                                       '<mark><a href="https://evil.example/">Alpha holds.</a></mark>')),
    ("attribute-on-article", BEFORE.replace("<article>", '<article data-x="payload">')),
    ("element-after-article", BEFORE.replace("</article>", "</article>\n<img src=\"https://evil.example/p.png\">")),
    ("non-format-head-tag", BEFORE.replace("</head>", '<base href="https://evil.example/">\n</head>')),
    ("title-changed", BEFORE.replace("<title>Alpha holds.</title>", "<title>Something else</title>")),
    ("with-a-stamp-too", editors.set_meta(_in_article(BEFORE, "</mark></p>", f"</mark></p>\n{IFRAME}"),
                                          "updated", AT)),
    ("with-an-entity-rewrite-too", editors.add_meta(_in_article(BEFORE, "</mark></p>", f"</mark></p>\n{IFRAME}"),
                                                    "entity", "person:Anna")),
]
"""Changes the article's canonical text does not see (asserted), each to be ``body-changed``."""

HEAD_ONLY = [
    ("stamp", editors.set_meta(BEFORE, "updated", AT), "meta-only"),
    ("link-added", editors.add_link(BEFORE, "relates_to", "/areas/inbox/other.html"), "meta-only"),
    ("confidence-dropped", editors.set_meta(BEFORE, "confidence", "0.8"), "meta-only"),
    ("entity-added", editors.add_meta(BEFORE, "entity", "person:Anna"), "entity-changed"),
]


@pytest.mark.parametrize(("label", "after"), MARKUP_ONLY, ids=[row[0] for row in MARKUP_ONLY])
def test_markup_change_with_the_same_text_is_body_changed(label: str, after: str) -> None:
    assert after != BEFORE and content_hash(after) == content_hash(BEFORE), label  # the hash cannot see it
    assert modified_class("areas/inbox/a.html", BEFORE.encode(), after.encode()) == "body-changed"


@pytest.mark.parametrize(("label", "after", "expected"), HEAD_ONLY, ids=[row[0] for row in HEAD_ONLY])
def test_format_head_changes_keep_their_classes(label: str, after: str, expected: str) -> None:
    assert modified_class("areas/inbox/a.html", BEFORE.encode(), after.encode()) == expected, label


def test_a_run_that_slips_an_iframe_into_an_article_is_reviewed_as_body_changed(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    payload, stamp = "areas/inbox/payload.html", "areas/inbox/stamp.html"
    stamped = memory("The cache TTL is 60 seconds.")
    for path, text in ((payload, BEFORE), (stamp, stamped)):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "seed")
    git(root, "checkout", "-q", "-b", RUN)
    (root / payload).write_text(editors.set_meta(_in_article(BEFORE, "</mark></p>", f"</mark></p>\n{IFRAME}"),
                                                 "updated", AT), encoding="utf-8")
    (root / stamp).write_text(editors.set_meta(stamped, "updated", AT), encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "memhtml(sleep(decay)): night", "-m",
        f"Memhtml-Run: {RUN}\nMemhtml-Phase: decay\nMemhtml-Counts: {{}}")
    git(root, "commit", "-q", "--allow-empty", "-m", "memhtml(sleep(report)): the run's report", "-m",
        f"Memhtml-Run: {RUN}\nMemhtml-Phase: report\nMemhtml-Counts: {{}}")
    git(root, "checkout", "-q", "main")
    repo = GitRepo.discover(root)
    base, tip = repo.branch_sha("main"), repo.branch_sha(RUN)
    assert base is not None and tip is not None
    assert {f.path: f.classification for f in classify(repo, base, tip)} == {payload: "body-changed",
                                                                              stamp: "meta-only"}
    with IndexDB.for_repo(repo) as db:
        review = review_run(repo, db, RUN)
    assert review["summary"]["body-changed"] == 1 and review["summary"]["meta-only"] == 1
    text = render_markdown(repo, review).text
    assert payload in text and "1 body-changed" in text
