"""Generated artifacts: deterministic bytes, every memory value escaped, memory-shaped listings, sitemap order."""

from __future__ import annotations

from pathlib import Path

from git_memhtml.artifacts.listings import (
    PublishRow,
    listing_dirs,
    publish,
    publish_rows,
    render_artifacts,
    render_sitemap,
    scan_tree,
)
from git_memhtml.document.parse import parse_memory
from tests.sleep.sleep_corpus_helpers import make_env, make_repo, memory

EVIL = PublishRow(
    path="areas/inbox/evil.html",
    title='Quote " & <b>bold</b>',
    memory_type="semantic",
    updated_at="2026-02-01T00:00:00Z",
    gist="<script>alert(1)</script>",
)
PLAIN = PublishRow("areas/notes/plain.html", "Plain", "episodic", "2026-01-01T00:00:00Z", "A plain gist.")


def test_listings_escape_every_value_and_parse_as_memories() -> None:
    artifacts = render_artifacts([PLAIN, EVIL])
    assert set(artifacts) == {"index.html", "areas/index.html", "areas/inbox/index.html",
                              "areas/notes/index.html", "sitemap.xml"}
    inbox = artifacts["areas/inbox/index.html"].decode()
    assert "<script>" not in inbox and "&lt;script&gt;alert(1)&lt;/script&gt;" in inbox
    assert "<b>" not in inbox and "Quote &quot; &amp; &lt;b&gt;bold&lt;/b&gt;" in inbox
    assert '<a href="/areas/inbox/evil.html">' in inbox
    doc = parse_memory(inbox)
    assert doc.title == "areas/inbox" and doc.gist == "areas/inbox holds 1 memories."
    assert doc.updated == "2026-02-01T00:00:00Z"
    root = parse_memory(artifacts["index.html"].decode())
    assert root.gist == "/ holds 2 memories."
    areas = artifacts["areas/index.html"].decode()
    assert '<a href="/areas/inbox/index.html">inbox/</a>' in areas and "notes/" in areas
    assert parse_memory(areas).updated == "2026-02-01T00:00:00Z"  # newest stamp of the subtree


def test_bytes_are_deterministic_whatever_the_row_order() -> None:
    assert render_artifacts([PLAIN, EVIL]) == render_artifacts([EVIL, PLAIN])


def test_sitemap_lists_rows_in_path_order_escaped() -> None:
    odd = PublishRow("areas/x/a&b.html", "t", "semantic", "2026-01-02T00:00:00Z", "g")
    text = render_sitemap([PLAIN, odd, EVIL])
    assert text.splitlines()[2:5] == [
        "<url><loc>/areas/inbox/evil.html</loc><lastmod>2026-02-01T00:00:00Z</lastmod></url>",
        "<url><loc>/areas/notes/plain.html</loc><lastmod>2026-01-01T00:00:00Z</lastmod></url>",
        "<url><loc>/areas/x/a%26b.html</loc><lastmod>2026-01-02T00:00:00Z</lastmod></url>",
    ]
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<urlset ')


def test_listing_dirs_include_ancestors_and_root() -> None:
    assert listing_dirs([PLAIN]) == ["", "areas", "areas/notes"]


def test_publish_reads_the_index_and_removes_stale_listings(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, {
        "areas/inbox/a.html": memory("Alpha <script>x</script> fact."),
        "resources/old/index.html": "stale listing\n",
    }))
    rows = publish_rows(env.db, scan_tree(env.repo.root))
    assert [r.path for r in rows] == ["areas/inbox/a.html"]
    first = publish(env.repo, env.db)
    assert "resources/old/index.html" in first.paths and not (env.repo.root / "resources/old/index.html").exists()
    assert "&lt;script&gt;" in (env.repo.root / "areas/inbox/index.html").read_text()
    env.repo.commit("publish")
    assert publish(env.repo, env.db).regenerated == 0
