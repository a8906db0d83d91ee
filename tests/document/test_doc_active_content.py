"""No script in a memory file (issue 8 item 5): a table of hostile snippets, one row per element, attribute,
URL-scheme or obfuscation class, each refused by every door that shares ``document/`` checks:

- ``git memhtml validate`` without ``--strict`` (and with file arguments, which is what the pre-commit hook runs);
- the render gate (``render_memory`` and ``git memhtml write --article-html``);
- the indexer's parse (the file is reported and never reaches the index).

A row is ``(id, where, snippet, needle)``: ``where`` is ``"body"`` (appended to the article), ``"head"`` (an extra
head line) or ``"file"`` (the whole file); ``needle`` is a substring of one violation.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from git_memhtml.cli.common import init_memory as init_repo
from git_memhtml.cli.main import main
from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.parse import parse_memory
from git_memhtml.document.template import render_memory
from git_memhtml.document.validate import check_document
from git_memhtml.errors import InvalidMemory
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.index.indexer import update
from tests.document.memdoc_helpers import MINIMAL_ARTICLE, memory_file

NOT_ALLOWED = "is not allowed"
SVG = "(SVG) is not allowed"

HEAD_ONLY = (
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>T</title>\n'
    '<meta name="memhtml-type" content="semantic">\n<meta name="memhtml-status" content="active">\n'
    '<meta name="memhtml-created" content="2026-01-02T03:04:05Z">\n'
    '<meta name="memhtml-updated" content="2026-01-02T03:04:05Z">\n</head>\n'
)

HOSTILE: list[tuple[str, str, str, str]] = [
    # embedding and framing elements
    ("iframe-srcdoc", "body", '<iframe srcdoc="&lt;script&gt;fetch(1)&lt;/script&gt;"></iframe>',
     "<iframe> is not allowed"),
    ("iframe-src", "body", '<iframe src="/x.html"></iframe>', "<iframe> is not allowed"),
    ("object-data-url", "body", '<object data="data:text/html,&lt;script&gt;x()&lt;/script&gt;"></object>',
     "on <object> is a data: URL"),
    ("object", "body", '<object data="/movie.swf"></object>', "<object> is not allowed"),
    ("embed", "body", '<embed src="/x.swf">', "<embed> is not allowed"),
    ("applet", "body", '<applet code="X.class"></applet>', "<applet> is not allowed"),
    ("frameset", "file", HEAD_ONLY + '<frameset><frame src="/x.html"></frameset>\n</html>\n',
     "<frameset> is not allowed"),
    ("portal", "body", '<portal src="/x.html"></portal>', "<portal> is not allowed"),
    ("video", "body", '<video src="/v.mp4"></video>', "<video> is not allowed"),
    ("audio", "body", '<audio src="/a.ogg"></audio>', "<audio> is not allowed"),
    ("canvas", "body", "<canvas></canvas>", "<canvas> is not allowed"),
    # navigation and submission
    ("base-head", "head", '<base href="https://evil.example/">', "<base> is not allowed"),
    ("base-body", "body", '<base href="https://evil.example/">', "<base> is not allowed"),
    ("form", "body", '<form action="/x"><input name="q"></form>', "<form> is not allowed"),
    ("button-formaction", "body", '<button formaction="javascript:x()">b</button>', "<button> is not allowed"),
    ("input-formaction", "body", '<input type="submit" formaction="/steal">', "<input> is not allowed"),
    ("textarea", "body", "<textarea>x</textarea>", "<textarea> is not allowed"),
    ("select", "body", "<select><option>x</option></select>", "<select> is not allowed"),
    # scripting-dependent parsing and inert containers
    ("noscript-body", "body", '<noscript><p title="</noscript><img src=x onerror=fetch(1)>"></p></noscript>',
     "<noscript> is not allowed"),
    ("noscript-img-handler", "body", '<noscript><p title="</noscript><img src=x onerror=fetch(1)>"></p></noscript>',
     "onerror handler on <img>"),
    ("noscript-head", "head", "<noscript><style>p{}</style></noscript>", "<noscript> is not allowed"),
    ("template", "body", "<template><script>x()</script></template>", "<template> is not allowed"),
    ("custom-element", "body", "<x-widget>t</x-widget>", "<x-widget> is not allowed"),
    ("marquee", "body", "<marquee>t</marquee>", "<marquee> is not allowed"),
    ("dialog", "body", "<dialog open>t</dialog>", "<dialog> is not allowed"),
    ("slot", "body", "<slot>t</slot>", "<slot> is not allowed"),
    # script and style
    ("script", "body", "<script>fetch('/beacon')</script>", "<script> is forbidden"),
    ("script-head", "head", '<script src="/x.js"></script>', "<script> is forbidden"),
    ("style-import", "head", "<style>@import url(/x.css);</style>", "<style> is forbidden"),
    ("style-attr-expression", "body", '<p style="width:expression(alert(1))">x</p>', "style attribute on <p>"),
    ("class-attr", "body", '<p class="x">x</p>', "class attribute on <p>"),
    ("link-stylesheet", "head", '<link rel="stylesheet" href="/x.css">', '<link rel="stylesheet"> is not allowed'),
    ("link-import", "head", '<link rel="import" href="/x.html">', "is not allowed"),
    ("link-modulepreload", "head", '<link rel="modulepreload" href="/x.js">', "is not allowed"),
    ("link-preload-mixed-case", "head", '<link rel="PreLoad" href="/x.js">', "is not allowed"),
    ("link-icon-beside-memhtml", "head", '<link rel="icon memhtml-relates-to" href="/areas/x.html">',
     "is not allowed"),
    ("link-in-body", "body", '<link rel="stylesheet" href="/x.css">', "is not allowed"),
    ("meta-refresh", "head", '<meta http-equiv="refresh" content="0;url=javascript:x()">', "does not redirect"),
    ("meta-refresh-body", "body", '<meta http-equiv="REFRESH" content="0">', "does not redirect"),
    ("meta-set-cookie", "head", '<meta http-equiv="set-cookie" content="a=b">', "is not allowed"),
    ("meta-default-style", "head", '<meta http-equiv="default-style" content="x">', "is not allowed"),
    # event handlers in any case and namespace
    ("onclick", "body", '<p onclick="x()">x</p>', "onclick handler on <p>"),
    ("onclick-upper", "body", '<p ONCLICK="x()">x</p>', "onclick handler on <p>"),
    ("onmouseover-mixed", "body", '<strong OnMouseOver="x()">x</strong>', "onmouseover handler on <strong>"),
    ("ontoggle-details", "body", '<details open ontoggle="x()"><summary>s</summary>b</details>',
     "ontoggle handler on <details>"),
    ("onfocus-autofocus", "body", '<p id="a" onfocus="x()" autofocus>x</p>', "onfocus handler on <p>"),
    ("onload-body", "file", HEAD_ONLY + '<body onload="x()">\n<article>\n' + MINIMAL_ARTICLE + "\n</article>\n"
     "</body>\n</html>\n", "onload handler on <body>"),
    ("svg-onload", "body", '<svg onload="x()"></svg>', "onload handler on <svg>"),
    ("math-onclick", "body", '<math><mi onclick="x()">x</mi></math>', "onclick handler on <mi>"),
    # SVG and MathML
    ("svg", "body", "<svg><title>t</title></svg>", SVG),
    ("svg-script", "body", "<svg><script>x()</script></svg>", SVG),
    ("svg-animate", "body", '<svg><a><animate attributeName="href" values="javascript:x()"/></a></svg>', SVG),
    ("svg-animate-transform", "body", '<svg><animateTransform attributeName="transform"/></svg>', SVG),
    ("svg-animate-motion", "body", "<svg><animateMotion/></svg>", SVG),
    ("svg-set", "body", '<svg><a><set attributeName="href" to="javascript:x()"/></a></svg>', SVG),
    ("svg-discard", "body", "<svg><discard/></svg>", SVG),
    ("svg-foreign-object", "body", "<svg><foreignObject><p>x</p></foreignObject></svg>", SVG),
    ("svg-use-external", "body", '<svg><use href="https://evil.example/x.svg#a"/></svg>', SVG),
    ("svg-xlink-javascript", "body", '<svg><a xlink:href="javascript:x()"><text>t</text></a></svg>',
     'href="javascript:x()" on <a> is a javascript: URL'),
    ("math", "body", "<math><mi>x</mi></math>", "(MathML) is not allowed"),
    ("math-href", "body", '<math href="javascript:x()"><mi>x</mi></math>', "is a javascript: URL"),
    # URL schemes with browser URL-parsing obfuscations
    ("js-url", "body", '<p><a href="javascript:x()">a</a></p>', "is a javascript: URL"),
    ("js-url-mixed-case", "body", '<p><a href="JaVaScRiPt:x()">a</a></p>', "is a javascript: URL"),
    ("js-url-decimal-entity", "body", '<p><a href="&#106;avascript:x()">a</a></p>', "is a javascript: URL"),
    ("js-url-hex-entity", "body", '<p><a href="&#x6A;&#x61;vascript:x()">a</a></p>', "is a javascript: URL"),
    ("js-url-colon-entity", "body", '<p><a href="javascript&colon;x()">a</a></p>', "is a javascript: URL"),
    ("js-url-numeric-colon", "body", '<p><a href="javascript&#58;x()">a</a></p>', "is a javascript: URL"),
    ("js-url-tab-entity", "body", '<p><a href="java&Tab;script:x()">a</a></p>', "is a javascript: URL"),
    ("js-url-newline-entity", "body", '<p><a href="&NewLine;java&NewLine;script:x()">a</a></p>',
     "is a javascript: URL"),
    ("js-url-raw-whitespace", "body", '<p><a href=" \n\tjava\tscr\nipt:x() ">a</a></p>', "is a javascript: URL"),
    ("js-url-leading-c0", "body", '<p><a href="&#x1;&#x1f; javascript:x()">a</a></p>', "is a javascript: URL"),
    ("vbscript-url", "body", '<p><a href="VBScript:msgbox(1)">a</a></p>', "is a vbscript: URL"),
    ("data-url-href", "body", '<p><a href="data:text/html,&lt;script&gt;x()&lt;/script&gt;">a</a></p>',
     "is a data: URL"),
    ("data-url-img", "body", '<img src="data:image/svg+xml,&lt;svg onload=x()&gt;" alt="">', "is a data: URL"),
    ("data-url-srcset", "body", '<img srcset="/a.png 1x, Data:image/svg+xml,x 2x" alt="">', "is a data: URL"),
    ("data-url-cite", "body", '<blockquote cite="data:text/html,x">q</blockquote>', "is a data: URL"),
    ("js-url-q-cite", "body", '<p><q cite="javascript:x()">q</q></p>', "is a javascript: URL"),
    ("js-url-link-href", "head", '<link rel="memhtml-relates-to" href="javascript:x()">', "is a javascript: URL"),
    # attributes outside the closed list
    ("a-ping", "body", '<p><a href="/x.html" ping="/beacon">a</a></p>', "ping attribute on <a> is not allowed"),
    ("a-target", "body", '<p><a href="/x.html" target="_blank">a</a></p>', "target attribute on <a> is not allowed"),
    ("contenteditable", "body", '<p contenteditable="true">x</p>', "contenteditable attribute on <p> is not allowed"),
    ("is-attr", "body", '<p is="x-widget">x</p>', "is attribute on <p> is not allowed"),
    ("popover", "body", '<p popover id="p">x</p>', "popover attribute on <p> is not allowed"),
    ("xlink-on-html", "body", '<p><a xlink:href="/x.html">a</a></p>', "xlink:href attribute on <a> is not allowed"),
    ("img-onerror", "body", '<img src="/x.png" alt="" onerror="x()">', "onerror handler on <img>"),
]


def _file_of(where: str, snippet: str) -> str:
    if where == "file":
        return snippet
    if where == "head":
        return memory_file(extra_head=snippet + "\n")
    return memory_file(MINIMAL_ARTICLE + snippet)


ROWS = [pytest.param(where, snippet, needle, id=row_id) for row_id, where, snippet, needle in HOSTILE]


@pytest.mark.parametrize(("where", "snippet", "needle"), ROWS)
def test_validate_refuses(where: str, snippet: str, needle: str) -> None:
    violations, _ = check_document(_file_of(where, snippet))
    assert any(needle in violation for violation in violations), violations


@pytest.mark.parametrize(("where", "snippet", "needle"), ROWS)
def test_indexer_parse_refuses(where: str, snippet: str, needle: str) -> None:
    with pytest.raises(InvalidMemory) as caught:
        parse_memory(_file_of(where, snippet))
    assert any(needle in violation for violation in caught.value.violations), caught.value.violations


@pytest.mark.parametrize(
    ("where", "snippet", "needle"), [row for row in ROWS if row.values[0] != "file"]
)
def test_render_gate_refuses(where: str, snippet: str, needle: str) -> None:
    with pytest.raises(InvalidMemory):
        render_memory(MemoryDraft(title="T", memory_type="semantic", article_html=MINIMAL_ARTICLE + snippet),
                      now="2026-01-02T03:04:05Z")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "mem"
    init_repo(root)
    monkeypatch.chdir(root)
    return root


def test_every_door_of_a_real_repository_refuses_the_table(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """validate (non-strict, with the file names the hook passes), write --article-html, and the indexer."""
    paths: dict[str, str] = {}
    for index, (row_id, where, snippet, _needle) in enumerate(HOSTILE):
        rel = f"areas/hostile/h{index:03d}.html"
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(_file_of(where, snippet), encoding="utf-8")
        paths[rel] = row_id
    capsys.readouterr()
    assert main(["validate", *paths]) == 1
    *out, summary = capsys.readouterr().out.splitlines()  # the finding lines, then the summary (docs/cli.md)
    assert summary.startswith("validate failed: "), summary
    failing = {line.split(": ", 1)[0] for line in out if ": warning: " not in line}
    assert failing == set(paths), sorted(set(paths) - failing)

    git = GitRepo.discover(repo)
    with IndexDB.for_repo(git) as db:
        report = update(git, db, None, now="2026-01-02T03:04:05Z")
        indexed = {row[0] for row in db.query("SELECT path FROM files")}
    assert not indexed & set(paths)
    assert {path for path, _ in report.errors} >= set(paths)

    # The write door alone from here: without the hostile files in the work tree (each write's index catch-up
    # would re-parse all of them), a refusal can only come from the snippet the write was given.
    shutil.rmtree(repo / "areas" / "hostile")
    head = git.run_git(["rev-parse", "HEAD"]).strip()
    snippet_file = repo.parent / "article.html"
    for row_id, where, snippet, _needle in HOSTILE:
        if where == "file":
            continue
        snippet_file.write_text(MINIMAL_ARTICLE + snippet, encoding="utf-8")
        code = main(["write", "--type", "semantic", "--title", row_id, "--article-html", str(snippet_file), "--json"])
        envelope = json.loads(capsys.readouterr().out)
        assert code == 1 and envelope["code"] == "ERR_INVALID_MEMORY", (row_id, envelope)
    assert git.run_git(["rev-parse", "HEAD"]).strip() == head


ACCEPTED = [
    '<p>see <a href="/areas/x.html" rel="next" hreflang="en">x</a> and <a href="https://example.com/javascript:x">y</a></p>',
    '<p><b>bold</b> <i>it</i> <sub>2</sub><br><img src="/x.png" alt="x" width="2" srcset="/a.png 1x, /b.png 2x"></p>',
    '<h2 id="s">Section</h2><blockquote cite="https://example.com/">q</blockquote>',
    '<table><colgroup><col span="2"></colgroup><tr><th scope="col" abbr="a">h</th><td colspan="2">c</td></tr></table>',
    '<ol start="3" reversed><li value="4">x</li></ol><p data-note="javascript:x" title="t" lang="fr" dir="rtl">x</p>',
    '<figure><pre><code data-lang="js">onclick="x()" &lt;script&gt;</code></pre></figure>',
]


@pytest.mark.parametrize("fragment", ACCEPTED)
def test_inert_markup_stays_accepted(fragment: str) -> None:
    html = memory_file(MINIMAL_ARTICLE + fragment)
    assert check_document(html)[0] == []
    parse_memory(html)


@pytest.mark.parametrize(
    "line",
    ['<meta http-equiv="content-type" content="text/html; charset=utf-8">', '<link rel="author" href="/people/a.html">',
     '<meta http-equiv=" Content-Language " content="en">'],
)
def test_inert_head_lines_stay_accepted(line: str) -> None:
    assert check_document(memory_file(extra_head=line + "\n"))[0] == []


def test_untrusted_names_are_quoted_in_one_line_messages() -> None:
    violations, _ = check_document(memory_file(MINIMAL_ARTICLE + '<x\x1b[31m on\x1bclick="1">t</x\x1b[31m>'))
    assert violations == [
        '<"x\\u001b[31m"> is not allowed: a memory file holds no active, embedded or unknown element',
        '"on\\u001bclick" handler on <"x\\u001b[31m">: a memory file does not execute',
    ]
