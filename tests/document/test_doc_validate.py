"""Every validation rule (docs/format.md §1.2, §1.3, §1.7) with a failing case; all violations in one pass."""

from __future__ import annotations

import pytest

from git_memhtml.document.parse import parse_memory
from git_memhtml.document.validate import check_document, is_root_relative_href, is_valid_datetime
from git_memhtml.errors import InvalidMemory
from tests.document.memdoc_helpers import HEAD_METAS, MINIMAL_ARTICLE, memory_file


def violations_of(html: str) -> list[str]:
    return check_document(html)[0]


def warnings_of(html: str) -> list[str]:
    return check_document(html)[1]


def test_valid_file_has_no_violations() -> None:
    assert check_document(memory_file()) == ([], [])


@pytest.mark.parametrize(
    ("html", "needle"),
    [
        (memory_file().replace("<article>\n", "").replace("\n</article>", ""), "no <article>"),
        (memory_file(MINIMAL_ARTICLE + "</article><article><p>x</p>"), "2 <article>"),
        (memory_file("<p>No claim here.</p>"), "no <mark>"),
        (memory_file("<p><mark>a</mark> <mark>b</mark></p>"), "2 <mark>"),
        (memory_file("<p><mark> <code>make</code>&nbsp;</mark></p>"), "empty <mark>"),
        (memory_file("<p>Lead.</p><p><mark>Late claim.</mark></p>"), "not in the first <p>"),
        (memory_file("<ul><li>x</li><li><mark>Claim.</mark></li></ul>"), "not in the first <li>"),
        (memory_file("<section><mark>Loose claim.</mark></section>"), "not in a <p> or <li>"),
        (memory_file("<details><p><mark>Hidden.</mark></p></details>"), "inside <details>"),
        (memory_file("<aside><p><mark>Aside.</mark></p></aside>"), "inside <aside>"),
        (memory_file(MINIMAL_ARTICLE + '<p><time datetime="2026-13-45">x</time></p>'), '"2026-13-45"'),
        (memory_file(MINIMAL_ARTICLE + "<p><time>soon</time></p>"), "<time> without datetime"),
        (memory_file('<p class="x"><mark>Claim.</mark></p>'), "class attribute on <p>"),
        (memory_file('<p style="color:red"><mark>Claim.</mark></p>'), "style attribute on <p>"),
        (memory_file('<p onclick="x()"><mark>Claim.</mark></p>'), "onclick handler on <p>"),
        (memory_file(MINIMAL_ARTICLE + "<script>alert(1)</script>"), "<script> is forbidden"),
        (memory_file(extra_head="<style>p{}</style>\n"), "<style> is forbidden"),
        (memory_file('<p><mark>Claim.</mark> <a href=" JavaScript:alert(1)">x</a></p>'), "javascript: URL"),
        (memory_file('<p><mark>Claim.</mark> <q cite="java\tscript:x">q</q></p>'), "javascript: URL"),
        (memory_file(extra_head='<link rel="memhtml-relates-to" href="../x.html">\n'), "not root-relative"),
        (memory_file(extra_head='<link rel="memhtml-relates-to" href="//host/x.html">\n'), "not root-relative"),
        (memory_file(extra_head='<link rel="memhtml-relates-to" href="/a//b.html">\n'), "not root-relative"),
        (memory_file(extra_head='<link rel="memhtml-relates-to" href="/a/./b.html">\n'), "not root-relative"),
        (memory_file(extra_head='<link rel="memhtml-relates-to">\n'), "has no href"),
        (memory_file(extra_head='<link rel="memhtml-likes" href="/a.html">\n'), "closed link vocabulary"),
        (memory_file(title=""), "0 <title>"),
        (memory_file(title="<title>  </title>\n"), "empty <title>"),
        (memory_file(title="<title>a</title><title>b</title>\n"), "2 <title>"),
        (memory_file(metas=HEAD_METAS.replace('<meta name="memhtml-status" content="active">\n', "")),
         'missing required <meta name="memhtml-status">'),
        (memory_file(extra_head='<meta name="memhtml-colour" content="red">\n'), "closed meta vocabulary"),
        (memory_file(extra_head='<meta name="memhtml-type" content="semantic">\n'),
         '"memhtml-type"> appears 2 times'),
        (memory_file(metas=HEAD_METAS.replace('"semantic"', '"rumour"')), 'memhtml-type "rumour"'),
        (memory_file(metas=HEAD_METAS.replace('"active"', '"deleted"')), "neither active nor archived"),
        (memory_file(metas=HEAD_METAS.replace('"semantic"', '"task"')), "a task needs"),
        (memory_file(extra_head='<meta name="memhtml-task-status" content="todo">\n'), "only a task has one"),
        (memory_file(metas=HEAD_METAS.replace('"semantic"', '"task"'),
                     extra_head='<meta name="memhtml-task-status" content="someday">\n'), '"someday" is not one of'),
        (memory_file(extra_head='<meta name="memhtml-due" content="next week">\n'), 'memhtml-due "next week"'),
    ],
)
def test_each_rule_has_a_one_line_violation(html: str, needle: str) -> None:
    found = violations_of(html)
    assert any(needle in violation for violation in found), found
    assert all("\n" not in violation for violation in found)
    with pytest.raises(InvalidMemory) as caught:
        parse_memory(html, path="areas/x.html")
    assert caught.value.message.startswith("areas/x.html: ")
    assert "\n" not in caught.value.message
    assert caught.value.hint


def test_all_violations_collected_in_one_pass() -> None:
    html = memory_file(
        '<p class="c"><mark></mark></p><p><time datetime="2026-02-30">x</time></p>',
        metas=HEAD_METAS.replace('"semantic"', '"rumour"'),
        extra_head='<link rel="memhtml-supports" href="x.html">\n',
    )
    with pytest.raises(InvalidMemory) as caught:
        parse_memory(html)
    joined = " | ".join(caught.value.violations)
    for needle in ("empty <mark>", "2026-02-30", "class attribute", "not root-relative", "rumour"):
        assert needle in joined
    assert len(caught.value.violations) == 5


def test_mark_outside_article_is_not_counted() -> None:
    html = memory_file().replace("<body>\n", "<body>\n<p><mark>outside</mark></p>\n")
    assert violations_of(html) == []


def test_fold_violation_suppresses_position_message() -> None:
    found = violations_of(memory_file("<p>lead</p><details><p><mark>x</mark></p></details>"))
    assert found == ["<mark> inside <details>: the claim must not be behind a fold"]


def test_non_prefixed_and_body_metas_are_ignored() -> None:
    html = memory_file(extra_head='<meta name="description" content="x">\n<meta name="description" content="y">\n')
    assert violations_of(html) == []


@pytest.mark.parametrize(
    "value",
    ["2026-01-02", "2026-01-02T03:04", "2026-01-02 03:04:05", "2026-01-02T23:59:60.123Z", "2024-02-29",
     "2026-01-02T03:04:05+05:30", "2026-01-02T03:04-0800"],
)
def test_valid_datetimes(value: str) -> None:
    assert is_valid_datetime(value)


@pytest.mark.parametrize(
    "value",
    ["2026-13-45", "2026-02-29", "2026-04-31", "2026-01-02T24:00", "2026-01-02T03:60", "2026-01-02T03:04:61",
     "26-01-02", "2026-1-2", "2026-01-02T03", "yesterday", "2026-01-02T03:04:05+24:00", ""],
)
def test_invalid_datetimes(value: str) -> None:
    assert not is_valid_datetime(value)


@pytest.mark.parametrize(
    ("href", "ok"),
    [("/areas/x.html", True), ("/areas/x.html?y=1#z", True), ("/a/../b.html?x=/../", False),
     ("/a/b/", False), ("areas/x.html", False), ("//x", False), ("/", False), ("/a/b.html#../..", True)],
)
def test_root_relative_hrefs(href: str, ok: bool) -> None:
    assert is_root_relative_href(href) is ok


def test_optional_bad_values_are_dropped_with_warnings() -> None:
    html = memory_file(
        extra_head=(
            '<meta name="memhtml-confidence" content="1.5">\n'
            '<meta name="memhtml-importance" content="3.5">\n'
            '<meta name="memhtml-reprieves" content="-1">\n'
        )
    )
    doc = parse_memory(html)
    assert (doc.confidence, doc.importance, doc.reprieves) == (None, None, None)
    assert [w.split(" ")[0] for w in doc.warnings] == ["memhtml-confidence", "memhtml-importance", "memhtml-reprieves"]


def test_optional_good_values_are_read() -> None:
    html = memory_file(
        extra_head=(
            '<meta name="memhtml-confidence" content="0.25">\n'
            '<meta name="memhtml-importance" content="10">\n'
            '<meta name="memhtml-reprieves" content="0">\n'
            '<meta name="memhtml-needs-revision" content="Yes">\n'
        )
    )
    doc = parse_memory(html)
    assert (doc.confidence, doc.importance, doc.reprieves, doc.needs_revision) == (0.25, 10, 0, True)
    assert doc.warnings == ()


def test_unknown_elements_warn_once_each() -> None:
    extra = "<b>x</b><b>y</b><i>z</i><div>d</div><figure><div>ok</div><span>s</span></figure>"
    html = memory_file(MINIMAL_ARTICLE + extra)
    warnings = warnings_of(html)
    assert warnings == [
        "<b> is not in the closed element vocabulary",
        "<i> is not in the closed element vocabulary",
        "<div> outside a <figure>: use a semantic element",
    ]
    assert violations_of(html) == []


def test_bad_data_lang_warns() -> None:
    html = memory_file(MINIMAL_ARTICLE + '<figure><pre><code data-lang="c sharp">x</code></pre></figure>')
    assert warnings_of(html) == ['data-lang="c sharp" is not a language token']
    assert parse_memory(html).langs == ()


@pytest.mark.parametrize(
    "href",
    ["/areas/%2e%2e/x.html", "/areas/%2E%2E/x.html", "/areas/.%2e/x.html", "/areas/%2e./x.html",
     "/areas/%2e/x.html", "/%2E%2e/etc/x.html"],
)
def test_percent_encoded_dot_segments_are_dot_segments(href: str) -> None:
    assert not is_root_relative_href(href)
    html = memory_file(extra_head=f'<link rel="memhtml-relates-to" href="{href}">\n')
    assert f'<link rel="memhtml-relates-to" href="{href}"> is not root-relative ("/path")' in violations_of(html)


@pytest.mark.parametrize("href", ["/areas/%252e%252e/x.html", "/areas/a%2eb/x.html", "/areas/x.html#%2e%2e"])
def test_encoded_dots_inside_a_name_are_fine(href: str) -> None:
    assert is_root_relative_href(href)
