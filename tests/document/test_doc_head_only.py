"""Head-only rewrites never re-extract the article (issue 12 item 3, docs/index.md "Head-only rewrites").

The indexer hands the stored article (``files.article_digest``/``article_facts``) to the parser; the article is
extracted again only when its source bytes changed or the fast parser cannot vouch for the tree. Each test counts
real extractions through a wrapped :func:`extract_article` and compares the incremental index with a rebuild.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from xml.etree.ElementTree import Element

import pytest

from git_memhtml.document.editors import add_link, add_meta, remove_link, remove_meta, set_meta
from git_memhtml.document.model import ArticleFacts, MemoryDocument
from git_memhtml.document.parse import extract_article, parse_memory
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB, open_index
from tests.index.index_helpers import NOW, Repo, memory_html
from tests.index.test_incremental_property import PLANE, fts_paths, plane

PATH = "areas/inbox/a.html"
ARTICLE_EXTRA = (
    "\n<dl><dt>latency</dt><dd><data value=\"120\">120 ms</data></dd></dl>"
    "\n<p>Per <cite>the runbook</cite>, <q cite=\"/areas/inbox/b.html\">roll back first</q>; a "
    "<dfn>canary</dfn> runs <code data-lang=\"py\">deploy()</code> on <time datetime=\"2026-01-05\">Monday</time>.</p>"
    "\n<details><summary>Why two minutes</summary><p>The ALB drains fast.</p></details>"
)


class Counting:
    """A parser for the indexer whose article extractions are counted (real parse, real extraction)."""

    def __init__(self) -> None:
        self.extractions = 0

    def extract(self, article: Element) -> ArticleFacts:
        self.extractions += 1
        return extract_article(article)

    def parse(self, data: bytes, *, path: str, reuse: ArticleFacts | None = None) -> MemoryDocument:
        return parse_memory(data, path=path, reuse=reuse, extract=self.extract)


def _seed(repo: Repo) -> str:
    html = memory_html("A", "Deploys roll back in two minutes.", body="Measured on the ALB.", tags=("cache",),
                       entities=("service:web",), links=(("relates_to", "/areas/inbox/b.html"),),
                       article_extra=ARTICLE_EXTRA)
    repo.write(PATH, html)
    repo.write("areas/inbox/b.html", memory_html("B", "Beta caches pages for an hour."))
    repo.commit("seed", PATH, "areas/inbox/b.html")
    return html


HEAD_EDITS: list[tuple[str, Callable[[str], str]]] = [
    ("confidence", lambda h: set_meta(h, "confidence", "0.42")),
    ("updated stamp", lambda h: set_meta(h, "updated", "2026-03-01T00:00:00Z")),
    ("importance", lambda h: set_meta(h, "importance", "9")),
    ("entity added", lambda h: add_meta(h, "entity", "person:Priya")),
    ("concept entity added", lambda h: add_meta(h, "entity", "concept:canary")),
    ("entity removed", lambda h: remove_meta(h, "entity", "service:web")),
    ("tag removed", lambda h: remove_meta(h, "tag", "cache")),
    ("tag added", lambda h: add_meta(h, "tag", "deploys")),
    ("link added", lambda h: add_link(h, "supports", "/areas/inbox/b.html")),
    ("link removed", lambda h: remove_link(h, "relates_to")),
    ("archived", lambda h: set_meta(set_meta(h, "status", "archived"), "archived", "2026-03-01T00:00:00Z")),
    ("needs revision", lambda h: set_meta(h, "needs-revision", "true")),
    ("valid-until", lambda h: set_meta(h, "valid-until", "2026-06-01T00:00:00Z")),
]


def _rebuilt(repo: Repo, embedder: FakeEmbedder) -> IndexDB:
    fresh = open_index(":memory:", ":memory:")
    indexer.rebuild(repo.git, fresh, embedder, now=NOW)
    return fresh


@pytest.mark.parametrize(("name", "edit"), HEAD_EDITS, ids=[name for name, _ in HEAD_EDITS])
def test_a_head_only_edit_reuses_the_article_and_equals_a_rebuild(tmp_path: Path, name: str,
                                                                  edit: Callable[[str], str]) -> None:
    repo, embedder = Repo(tmp_path / "mem"), FakeEmbedder(dim=64)
    html = _seed(repo)
    db = open_index(":memory:", ":memory:")
    counting = Counting()
    indexer.rebuild(repo.git, db, embedder, now=NOW, parse=counting.parse)
    assert counting.extractions == 2  # one per file on a rebuild
    assert db.query_one("SELECT article_digest FROM files WHERE path = ?", (PATH,)) != (None,)
    edited = edit(html)
    assert edited != html
    repo.write(PATH, edited)
    repo.commit(name, PATH)
    counting.extractions = 0
    fts_before = db.query_one("SELECT count(*) FROM files_fts_docsize")
    report = indexer.update(repo.git, db, embedder, now=NOW, parse=counting.parse)
    assert report.modified == 1 and report.errors == ()
    assert counting.extractions == 0  # the article was not extracted again
    assert report.embeddings_written == 0  # nor embedded again
    assert db.query_one("SELECT count(*) FROM files_fts_docsize") == fts_before
    fresh = _rebuilt(repo, embedder)
    got, want = plane(db), plane(fresh)
    for table in PLANE:
        assert got[table] == want[table], f"{table} differs from a rebuild after {name}"
    for word in ("roll", "canary", "runbook", "alb"):
        assert fts_paths(db, word) == fts_paths(fresh, word)
    db.execute("INSERT INTO files_fts(files_fts, rank) VALUES ('integrity-check', 1)")


def test_an_article_edit_is_extracted_again(tmp_path: Path) -> None:
    repo, embedder = Repo(tmp_path / "mem"), FakeEmbedder(dim=64)
    html = _seed(repo)
    db = open_index(":memory:", ":memory:")
    counting = Counting()
    indexer.rebuild(repo.git, db, embedder, now=NOW, parse=counting.parse)
    repo.write(PATH, html.replace("two minutes", "three minutes"))
    repo.commit("article", PATH)
    counting.extractions = 0
    report = indexer.update(repo.git, db, embedder, now=NOW, parse=counting.parse)
    assert counting.extractions == 1 and report.embeddings_written >= 1
    assert plane(db) == plane(_rebuilt(repo, embedder))


@pytest.mark.parametrize(("name", "edit"), [
    ("unclosed title swallows the article", lambda h: h.replace("</title>", "", 1)),
    ("unclosed template in head", lambda h: h.replace("</head>", "<template>\n</head>", 1)),
    ("unclosed b in head wraps the article", lambda h: h.replace("</head>", "<b>\n</head>", 1)),
    ("unclosed noscript in head", lambda h: h.replace("</head>", "<noscript>\n</head>", 1)),
    ("comment opened in head", lambda h: h.replace("</head>", "<!--\n</head>", 1)),
])
def test_a_head_edit_that_changes_the_article_parse_is_caught(tmp_path: Path, name: str,
                                                              edit: Callable[[str], str]) -> None:
    repo, embedder = Repo(tmp_path / "mem"), FakeEmbedder(dim=64)
    html = _seed(repo)
    db = open_index(":memory:", ":memory:")
    counting = Counting()
    indexer.rebuild(repo.git, db, embedder, now=NOW, parse=counting.parse)
    repo.write(PATH, edit(html))
    repo.commit(name, PATH)
    counting.extractions = 0
    report = indexer.update(repo.git, db, embedder, now=NOW, parse=counting.parse)
    fresh = open_index(":memory:", ":memory:")
    reference = indexer.rebuild(repo.git, fresh, embedder, now=NOW)
    assert report.errors == reference.errors  # html5lib's verdict, whatever it is
    if not report.errors:
        assert counting.extractions == 1  # valid but parsed differently: extracted from html5lib's tree
    assert plane(db) == plane(fresh)
