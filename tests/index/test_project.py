"""Pure projection (docs/index.md §3.5) and chunking (docs/index.md §3.8)."""

from __future__ import annotations

import hashlib

from git_memhtml.document.model import Citation, Facet, Link, MemoryDocument
from git_memhtml.index.project import chunk_id_of, chunk_text, entity_row, is_indexable, path_facts, project


def _doc(**kw: object) -> MemoryDocument:
    base: dict[str, object] = {
        "title": "Deploy window", "memory_type": "semantic", "status": "active", "created": "2026-01-01T00:00:00Z",
        "updated": "2026-01-02T00:00:00Z", "article_html": "<p><mark>x</mark></p>",
        "content_hash": "sha256:" + "a" * 64, "gist": "The deploy window of checkout-api is 10 minutes.",
        "body_text": "The deploy window of checkout-api is 10 minutes. Use blue-green.",
    }
    base.update(kw)
    return MemoryDocument(**base)  # type: ignore[arg-type]


def test_rows_from_one_document() -> None:
    doc = _doc(
        entities=("project:checkout", "noColon", "project:checkout"),
        concepts=("blue-green",), langs=(" Bash ", "bad lang!"), tags=("ops", "ops", "deploy"),
        facets=(Facet("window", "10 min", 10.0), Facet("window", "10 min", 10.0)),
        citations=(Citation("runbook", "/x"), Citation("runbook"), Citation("  ")),
        summaries=("Details",),
        links=(Link("relates_to", "/areas/b.html"), Link("relates_to", "/areas/b.html#frag"),
               Link("supersedes", "/projects/web/old.html"), Link("relates_to", "/projects/web/a.html"),
               Link("about_person", "/resources/people/ann.html")),
        confidence=None, importance=None,
    )
    proj = project(doc, path="projects/web/a.html", blob_sha="b" * 40, now="2026-02-01T00:00:00Z")
    row = proj.file
    assert row.fts_text == "Deploy window\nThe deploy window of checkout-api is 10 minutes.\n" + doc.body_text
    assert row.disclosure_text == f"{doc.gist}\nDetails\nwindow: 10 min\nrunbook"
    assert row.word_count == 10
    assert (row.para, row.workspace, row.archived, row.origin_path) == ("projects", "web", 0, "projects/web/a.html")
    assert (row.confidence, row.importance, row.author) == (1.0, 5, "agent")
    assert row.frame_key == "the deploy window of checkout-api is"
    assert proj.tags == ("ops", "deploy")
    assert proj.entities == (("project", "checkout"), ("unknown", "noColon"), ("concept", "blue-green"),
                             ("lang", "bash"))
    assert proj.facets == (("window", "10 min", 10.0),)
    assert proj.citations == (("runbook", "/x"),)
    assert [(e.rel, e.dst_path, e.edge_class) for e in proj.edges] == [
        ("relates_to", "areas/b.html", "memory"), ("supersedes", "projects/web/old.html", "memory"),
        ("about_person", "resources/people/ann.html", "person")]
    assert proj.chunks[0].chunk_id == hashlib.sha256(f"{doc.content_hash}:0".encode()).hexdigest()


def test_archived_comes_from_the_path_not_the_meta() -> None:
    live = project(_doc(status="archived", archived_at="2026-01-05T00:00:00Z"), path="areas/x/a.html",
                   blob_sha="b", now="n")
    assert live.file.archived == 0
    arch = project(_doc(), path="archive/2026/projects/web/a.html", blob_sha="b", now="n")
    assert (arch.file.archived, arch.file.para, arch.file.workspace) == (1, "archive", "web")
    assert arch.file.origin_path == "projects/web/a.html"


def test_chunking_packs_sentences_up_to_1800_chars() -> None:
    assert chunk_text("  short text  ") == ["short text"]
    sentence = "word " * 59 + "end."  # 299 chars
    body = " ".join([sentence] * 13)
    chunks = chunk_text(body)
    assert all(len(c) <= 1800 for c in chunks)
    assert len(chunks) == 3 and chunks[0].count("end.") == 6
    assert " ".join(chunks) == body
    giant = "x" * 4000
    assert [len(c) for c in chunk_text(giant)] == [1800, 1800, 400]


def test_helpers() -> None:
    assert chunk_id_of("sha256:ab", 2) == hashlib.sha256(b"sha256:ab:2").hexdigest()
    assert entity_row("person:ann:lee") == ("person", "ann:lee")
    assert entity_row(":x") == ("unknown", ":x") and entity_row("x:") == ("unknown", "x:")
    assert is_indexable("areas/inbox/a.html") and not is_indexable("areas/index.html")
    assert not is_indexable("README.html") and not is_indexable("areas/a.txt")
    assert path_facts("projects/a.html").workspace is None
