"""parse_memory: extraction (docs/format.md §1.4), typed metas (§1.2), task files (§1.8), bad inputs (speed:
bench/validate_bench.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memhtml.document.hash import content_hash
from git_memhtml.document.model import Citation, Facet, Link
from git_memhtml.document.parse import MAX_FILE_BYTES, parse_memory
from git_memhtml.errors import InvalidMemory
from tests.document.memdoc_helpers import memory_file

GOLDEN = Path(__file__).parent / "golden"


def test_example_memory_extraction() -> None:
    raw = (GOLDEN / "example_memory.html").read_bytes()
    doc = parse_memory(raw, path="areas/oncall/rollbacks.html")
    assert doc.title == "Prod rollbacks"
    assert (doc.memory_type, doc.status) == ("procedural", "active")
    assert (doc.created, doc.updated) == ("2026-01-02T03:04:05Z", "2026-01-03T00:00:00Z")
    assert (doc.confidence, doc.importance, doc.author) == (0.85, 7, "agent:claude")
    assert doc.gist == "Prod rollbacks take two minutes."
    assert doc.body_text == (
        "Prod rollbacks take two minutes. Use kubectl rollout undo. Applies to checkout-api Duration two minutes "
        "$ kubectl rollout undo deploy/checkout Seen on 2 Jan; see Runbook\u00a07."
    )
    assert doc.event_at == "2026-01-02"
    assert doc.facets == (
        Facet("Applies to", "checkout-api", None),
        Facet("Duration", "two minutes", 120.0),
    )
    assert doc.citations == (Citation("Runbook\u00a07", None),)
    assert doc.entities == ("service:checkout-api", "tool:kubectl")
    assert doc.tags == ("oncall",)
    assert doc.aliases == ("rollback runbook",)
    assert doc.links == (
        Link("relates_to", "/areas/oncall/paging.html"),
        Link("about_person", "/resources/people/ada.html"),
    )
    assert doc.metas[0] == ("type", "procedural") and doc.meta("tag") == "oncall"
    assert doc.content_hash == content_hash(raw.decode())
    assert doc.warnings == ()


def test_example_task() -> None:
    doc = parse_memory((GOLDEN / "example_task.html").read_text(encoding="utf-8"))
    assert (doc.memory_type, doc.task_status, doc.due) == ("task", "doing", "2026-02-01")
    assert doc.gist == "Rotate the staging TLS cert."
    assert doc.summaries == ("Notes",)
    assert doc.links == (Link("blocks", "/projects/tls/tasks/deploy.html"),)


def test_concepts_langs_quotes_and_empty_repeatables() -> None:
    html = memory_file(
        '<p><mark>A <dfn>canary</dfn> is a <abbr title="x">slice</abbr>.</mark></p>'
        '<p><q cite="https://example.org/q">Ship it</q> <cite> </cite> <dfn>canary</dfn></p>'
        '<figure><pre><code data-lang=" Python ">x</code></pre></figure><p><code data-lang="RUST">y</code></p>'
        '<dl><dt>a</dt><dd>1</dd><dd><data value="">blank</data><data value="2.5">n</data></dd><dt>b</dt></dl>',
        extra_head='<meta name="memhtml-entity" content="">\n<meta name="memhtml-tag" content="t">\n',
    )
    doc = parse_memory(html)
    assert doc.concepts == ("canary",)
    assert doc.langs == ("python", "rust")
    assert doc.citations == (Citation("Ship it", "https://example.org/q"),)
    assert doc.entities == () and doc.tags == ("t",)
    # JS Number("") is 0, a finite value: the first <data value> wins (docs/format.md §1.4)
    assert doc.facets == (Facet("a", "1", None), Facet("a", "blankn", 0.0))  # <data> is inline: no word gap
    assert doc.gist == "A canary is a slice."


def test_event_at_is_first_time_verbatim_and_gist_skips_code() -> None:
    html = memory_file(
        '<p><mark>Ran <code>make deploy</code> at <time datetime="2026-01-02 10:00">ten</time>.</mark></p>'
        '<p><time datetime="2025-12-31">later</time></p>'
    )
    doc = parse_memory(html)
    assert doc.event_at == "2026-01-02 10:00"
    assert doc.gist == "Ran at ten."


def test_str_and_bytes_agree_and_bom_is_ignored() -> None:
    html = memory_file()
    assert parse_memory(html) == parse_memory(b"\xef\xbb\xbf" + html.encode())


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b"", "empty file"),
        (b"  \n", "empty file"),
        (memory_file().encode().replace(b"Deploy", b"D\xffploy"), "not UTF-8"),
        (b"<p>" + b"x" * (5 * 1024 * 1024) + b"</p>", "over the 1048576-byte limit"),
        (memory_file("<details><p><mark>Only here.</mark></p></details>").encode(), "inside <details>"),
        (memory_file('<p><mark>x</mark> <a href="javascript:alert(1)">y</a></p>').encode(), "javascript: URL"),
        (memory_file(extra_head='<link rel="memhtml-supports" href="../x.html">\n').encode(), "not root-relative"),
        (memory_file(extra_head='<meta name="memhtml-type" content="episodic">\n').encode(), "appears 2 times"),
        (memory_file('<p><mark>x</mark> <time datetime="2026-13-45">y</time></p>').encode(), "2026-13-45"),
    ],
    ids=["empty", "blank", "non-utf8", "5MB", "mark-in-details", "javascript", "dotdot-href", "dup-type", "bad-time"],
)
def test_bad_inputs_give_one_line_invalid_memory(data: bytes, needle: str) -> None:
    with pytest.raises(InvalidMemory) as caught:
        parse_memory(data, path="areas/bad.html")
    error = caught.value
    assert len(error.violations) == 1 and needle in error.violations[0]
    assert error.message == f"areas/bad.html: {error.violations[0]}"
    assert "\n" not in error.message and error.hint and error.path == "areas/bad.html"
    assert error.code == "ERR_INVALID_MEMORY"


def test_size_limit_boundary() -> None:
    html = memory_file()
    padded = html.replace("</body>", "<!--" + "x" * (MAX_FILE_BYTES - len(html) - 7) + "--></body>")
    assert len(padded.encode()) == MAX_FILE_BYTES
    parse_memory(padded.encode())
    with pytest.raises(InvalidMemory):
        parse_memory((padded + " ").encode())
