"""Script and ``data:`` URLs are refused in every URL-bearing attribute, and a refresh meta anywhere (issue 3
review, item 4; issue 8 item 5 widened ``data:`` from href/src/cite to every URL attribute)."""

from __future__ import annotations

import pytest

from git_memhtml.document.validate import check_document
from git_memhtml.document.wellformed import check_memory_bytes
from tests.document.memdoc_helpers import MINIMAL_ARTICLE, memory_file


def violations_of(html: str) -> list[str]:
    return check_document(html)[0]


@pytest.mark.parametrize(
    ("fragment", "needle"),
    [
        ('<a href="vbscript:msgbox(1)">x</a>', 'href="vbscript:msgbox(1)" on <a> is a vbscript: URL'),
        ('<a href=" VB&#9;Script:x">x</a>', "is a vbscript: URL"),
        ('<img srcset="/a.png 1x, javascript:alert(1) 2x" alt="">',
         "srcset=\"/a.png 1x, javascript:alert(1) 2x\" on <img> is a javascript: URL"),
        ('<img srcset=" JAVA&#10;script:x 1x" alt="">', "on <img> is a javascript: URL"),
        ('<button formaction="javascript:x()">b</button>',
         "formaction=\"javascript:x()\" on <button> is a javascript: URL"),
        ('<form action="javascript:x()"></form>', "action=\"javascript:x()\" on <form> is a javascript: URL"),
        ('<object data="javascript:x()"></object>', "data=\"javascript:x()\" on <object> is a javascript: URL"),
        ('<video poster="javascript:x()"></video>', "poster=\"javascript:x()\" on <video> is a javascript: URL"),
        ('<table background="vbscript:x"><tr><td>c</td></tr></table>',
         "background=\"vbscript:x\" on <table> is a vbscript: URL"),
        ('<a xlink:href="javascript:x()">x</a>', "xlink:href=\"javascript:x()\" on <a> is a javascript: URL"),
        ('<svg><a xlink:href="javascript:x()"><text>t</text></a></svg>',
         "href=\"javascript:x()\" on <a> is a javascript: URL"),
        ('<a href="/x.html" ping="/ok javascript:x()">x</a>',
         "ping=\"/ok javascript:x()\" on <a> is a javascript: URL"),
        ('<a href="data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;">x</a>', "on <a> is a data: URL"),
        ('<a href=" DATA:text/html;base64,PHNjcmlwdD4=">x</a>', "on <a> is a data: URL"),
        ('<img src="data:image/svg+xml,&lt;svg/&gt;" alt="">', "on <img> is a data: URL"),
        ('<q cite="data:text/html,x">q</q>', "on <q> is a data: URL"),
        ('<img srcset="data:image/png;base64,iVBOR 1x" alt="">', "on <img> is a data: URL"),  # every URL attribute
    ],
)
def test_refused_url_schemes(fragment: str, needle: str) -> None:
    found = violations_of(memory_file(MINIMAL_ARTICLE + f"<p>{fragment}</p>"))
    assert any(needle in violation for violation in found), found


@pytest.mark.parametrize(
    "fragment",
    [
        '<a href="https://example.com/javascript:x">x</a>',
        '<img srcset="/a.png 1x, /b.png 2x" src="/a.png" alt="">',
        '<a href="/x.html" ping="/p https://example.com/p">x</a>',
        '<a href="/a.html" data-note="javascript:x">x</a>',  # data-* is not a URL attribute
        '<object data="/movie.bin"></object>',
    ],
)
def test_harmless_urls_pass(fragment: str) -> None:
    found = violations_of(memory_file(MINIMAL_ARTICLE + f"<p>{fragment}</p>"))
    assert not any("URL" in violation for violation in found), found


@pytest.mark.parametrize(
    "meta",
    ['<meta http-equiv="refresh" content="0;url=https://example.com">', '<meta http-equiv=" Refresh " content="5">'],
)
def test_refresh_meta_is_refused_in_head_and_body(meta: str) -> None:
    message = '<meta http-equiv="refresh"> is forbidden: a memory file does not redirect'
    assert message in violations_of(memory_file(extra_head=meta + "\n"))
    body = check_memory_bytes(memory_file(MINIMAL_ARTICLE + meta).encode("utf-8"))
    assert message in body.violations


def test_other_http_equiv_is_not_a_refresh() -> None:
    html = memory_file(extra_head='<meta http-equiv="content-language" content="en">\n')
    assert not any("refresh" in violation for violation in violations_of(html))
