"""The fast parser (Lexbor) against html5lib (docs/format.md "Two parsers", issue 12 item 2).

Every document of every corpus goes through :func:`fast_helpers.agree`: the same verdict (valid or not, the same
violation list and message), the same :class:`MemoryDocument` (every field, the content hash included) and, where
the fast parser vouched for its tree, the same tree. Corpora: the repository's fixture files, the eval fixture
corpus, the 3,435 LoCoMo turns (read from ../shared/data, converted by bench/locomo.py and rendered), a seeded
generator, and hostile markup.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from git_memhtml.document.fast import fast_tree
from git_memhtml.document.parse import decode_memory, parse_memory
from git_memhtml.document.template import render_memory
from git_memhtml.eval.corpus import build_corpus
from git_memhtml.store.ops import parse_op_stream
from tests.conftest import SHARED_DATA
from tests.document.fast_helpers import agree
from tests.document.memdoc_helpers import HEAD_METAS, MINIMAL_ARTICLE, memory_file

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = SHARED_DATA / "locomo" / "locomo-dev.json"
NOW = "2026-02-01T00:00:00Z"


def test_repository_fixture_files_agree() -> None:
    files = sorted(p for p in (ROOT / "tests").rglob("*.html"))
    assert files
    fast = sum(agree(p.read_bytes()) for p in files)
    assert fast >= 1


def test_eval_fixture_corpus_agrees_and_takes_the_fast_path() -> None:
    corpus = build_corpus()
    assert len(corpus.files) >= 200
    fast = sum(agree(text) for text in corpus.files.values())
    assert fast == len(corpus.files)  # generated canonical files: Lexbor builds every tree


@pytest.mark.slow
def test_locomo_turns_agree_and_take_the_fast_path(tmp_path: Path) -> None:
    if not LOCOMO.is_file():
        pytest.fail(f"{LOCOMO} is missing: the shared data must lie beside the project")
    stream = tmp_path / "turns.jsonl"
    subprocess.run([sys.executable, str(ROOT / "bench" / "locomo.py"), "convert", "--conversation", "all",
                    "--units", "turns", "--data", str(LOCOMO), "--out", str(stream)], check=True, capture_output=True)
    ops = parse_op_stream(stream.read_text(encoding="utf-8"))
    assert len(ops) == 3435
    fast = sum(agree(render_memory(op.draft, now=NOW)) for op in ops)
    assert fast == len(ops)


# -- generated documents --------------------------------------------------------------------------------------------

WORDS = ("deploy", "rollback", "ALB", "café", "naïve", "中文", "😀", "x", "Ünïcödé", "minutes", "42", "—", "ß")
TEXT_ODDITIES = (
    " ", "  ", "\t", "\n", "\f", "\r\n", "\r", "\x00", "&amp;", "&lt;", "&gt;", "&nbsp;", "&copy;", "&#x41;", "&#128;",
    "&notin", "&amp", "<!-- c -->", "<!-->", "<!-- a --!> b -->", "<![CDATA[x<y]]>", "<?pi?>", " < ", " & ", "\u00a0",
    "\u2028", "\ufeff",
)
SAFE_ODDITIES = (" ", "  ", "\t", "\n", "\f", "&amp;", "&lt;", "&gt;", "&nbsp;", "\u00a0", "\u2028", "&quot;")
"""What a canonical file can hold: the clean half of the seeds draws only these."""
INLINE = ("em", "strong", "b", "i", "span", "abbr", "dfn", "cite", "kbd", "samp", "var", "small", "sub", "sup",
          "bdi", "ins", "del", "u", "s")
BLOCKS = ("p", "section", "aside", "blockquote", "details", "h2", "address", "div", "header", "footer", "nav")
ATTRIBUTES = ('title="t"', 'TITLE="T"', 'Title=x', "title", 'data-x="1"', 'DATA-LANG="Py"', 'lang="fr"',
              'id="a"', 'title="a" title="b"', "title='<p>'", 'dir="rtl"')
MUTATIONS = ("</p>", "</b>", "<p>", "<li>", "</article>", "<br>", "</br>", "<hr>", "<table><tr><td>t</td></tr></table>",
             "<select><option>o</option></select>", "<template><p>t</p></template>", "<svg><title>s</title></svg>",
             "<math><mi>x</mi></math>", "<search>s</search>", "<hgroup><h1>h</h1></hgroup>", "<img src=/a.png>",
             "<a href=/x><a href=/y>z</a></a>", "<b><i>x</b>y</i>", "<p><div>d</div></p>", "<textarea>t",
             "<noscript><p>n</p></noscript>", "<ruby>r<rt>t</rt></ruby>", "<menu><li>m</li></menu>", "<title>t</title>",
             "<meta name=memhtml-tag content=late>", "<body class=x>", "<frameset>", "<plaintext>",
             "<!doctype html>", "<html lang=fr>", "<style>p{}</style>", "<script>1</script>", "<xmp>x</xmp>")


class _Rng(random.Random):
    """A seeded stream that knows whether its document is from the hostile half."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.hostile = seed % 2 == 1


def _text(rng: _Rng) -> str:
    parts = []
    oddities = TEXT_ODDITIES if rng.hostile else SAFE_ODDITIES
    for _ in range(rng.randint(1, 6)):
        parts.append(rng.choice(WORDS))
        if rng.random() < 0.25:
            parts.append(rng.choice(oddities))
        else:
            parts.append(" ")
    return "".join(parts)


def _inline(rng: _Rng, depth: int) -> str:
    roll = rng.random()
    if depth > 3 or roll < 0.4:
        return _text(rng)
    if roll < 0.5:
        return f'<time datetime="2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}">{_text(rng)}</time>'
    if roll < 0.55:
        return f'<data value="{rng.choice(["3.5", "1e3", "-0", "x", "Infinity"])}">{_text(rng)}</data>'
    if roll < 0.6:
        return f'<q cite="/areas/{rng.randint(0, 9)}.html">{_text(rng)}</q>'
    if roll < 0.65:
        lang = rng.choice(["py", "Rust", "c++", "", " js ", "-bad"])
        return f'<code data-lang="{lang}">{_text(rng)}</code>'
    if roll < 0.7:
        return f'<a href="/areas/{rng.randint(0, 9)}.html">{_text(rng)}</a>'
    tag = rng.choice(INLINE)
    attrs = f" {rng.choice(ATTRIBUTES)}" if rng.random() < 0.3 else ""
    inner = "".join(_inline(rng, depth + 1) for _ in range(rng.randint(1, 3)))
    return f"<{tag}{attrs}>{inner}</{tag}>"


def _block(rng: _Rng, depth: int) -> str:
    roll = rng.random()
    if roll < 0.12:
        items = "".join(f"<li>{_inline(rng, depth + 1)}</li>" for _ in range(rng.randint(1, 3)))
        return f"<{rng.choice(['ul', 'ol'])}>{items}</{'ul' if roll < 0.06 else 'ol'}>".replace(
            "<ol>" if roll < 0.06 else "<ul>", "<ol>" if roll >= 0.06 else "<ul>")
    if roll < 0.2:
        pairs = "".join(f"<dt>{_text(rng)}</dt><dd>{_inline(rng, depth + 1)}</dd>" for _ in range(rng.randint(1, 3)))
        return f"<dl>{pairs}</dl>"
    if roll < 0.26:
        lead = "\n" if rng.random() < 0.5 else ""
        return f'<figure><pre><code data-lang="py">{lead}{_text(rng)}\n  {_text(rng)}</code></pre></figure>'
    if roll < 0.32:
        return f"<details><summary>{_text(rng)}</summary><p>{_inline(rng, depth + 1)}</p></details>"
    if roll < 0.36 and depth < 3:
        return f"<section>{_block(rng, depth + 1)}{_block(rng, depth + 1)}</section>"
    tag = rng.choice(BLOCKS)
    return f"<{tag}>{''.join(_inline(rng, depth + 1) for _ in range(rng.randint(1, 3)))}</{tag}>"


def _article_markup(rng: _Rng) -> str:
    claim = _text(rng).replace("\x00", "").strip() or "claim"
    first = f"<p><mark>{claim}</mark> {_inline(rng, 1)}</p>"
    blocks = [first, *(_block(rng, 1) for _ in range(rng.randint(0, 5)))]
    separator = rng.choice(["\n", "", " ", "\n\n", "\r\n"])
    return separator.join(blocks)


def generated_article(seed: int) -> str:
    """The article markup of :func:`generated_document` ``(seed)`` before any mutation."""
    return _article_markup(_Rng(seed))


def generated_document(seed: int) -> str:
    """One seeded memory file: a valid skeleton with random article markup, head extras and, for a third of the
    seeds, one hostile mutation spliced in at a random place. Even seeds draw text oddities a canonical file can
    hold, odd seeds any (NUL, CR, comments, CDATA, legacy entities …)."""
    rng = _Rng(seed)
    article = _article_markup(rng)
    head = "".join(rng.choice([
        '<meta name="memhtml-entity" content="person:Priya">\n', '<meta name="memhtml-tag" content="ops">\n',
        '<META NAME="memhtml-tag" CONTENT="caps">\n', '<meta name="MEMHTML-tag" content="near">\n',
        '<link rel="memhtml-relates-to" href="/areas/b.html">\n', '<meta name="memhtml-confidence" content="0.7">\n',
        '<meta name="memhtml-importance" content="11">\n', '<link rel="stylesheet" href="/x.css">\n',
        '<meta name="memhtml-entity" content="concept:">\n', "<!-- head note -->\n",
    ]) for _ in range(rng.randint(0, 4)))
    text = memory_file(article, extra_head=head)
    if rng.random() < 0.33:
        at = rng.randint(text.index("<head>"), len(text))
        text = text[:at] + rng.choice(MUTATIONS) + text[at:]
    return text


GENERATED = 1500


def test_generated_documents_agree() -> None:
    fast = sum(agree(generated_document(seed)) for seed in range(GENERATED))
    # the generator exercises both paths: many clean documents take the fast one, hostile ones fall back
    assert GENERATED // 5 < fast < GENERATED // 2


# -- hostile markup ---------------------------------------------------------------------------------------------------

HOSTILE: list[tuple[str, str | bytes]] = [
    ("canonical", memory_file()),
    ("template in article", memory_file("<p><mark>c</mark></p><template><p>hidden</p></template>")),
    ("template in head", memory_file(extra_head="<template><p>x</p></template>\n")),
    ("unclosed title swallows the article", memory_file(title="<title>Deploy rollbacks\n")),
    ("unclosed title after the metas", memory_file(extra_head="<title>second\n")),
    ("unclosed noscript in head", memory_file(extra_head="<noscript>\n")),
    ("unclosed style in head", memory_file(extra_head="<style>\n")),
    ("unclosed textarea in head", memory_file(extra_head="<textarea>\n")),
    ("unclosed script in head", memory_file(extra_head="<script>\n")),
    ("unclosed xmp in head", memory_file(extra_head="<xmp>\n")),
    ("plaintext in head", memory_file(extra_head="<plaintext>\n")),
    ("unclosed comment in head", memory_file(extra_head="<!--\n")),
    ("comment closed by --!>", memory_file("<p><mark>c</mark><!-- a --!> b --></p>")),
    ("abrupt comment", memory_file("<p><mark>c</mark><!--> x <!---> y</p>")),
    ("cdata in html", memory_file("<p><mark>c</mark><![CDATA[ x ]]></p>")),
    ("cdata in svg", memory_file("<p><mark>c</mark><svg><![CDATA[ <p>x</p> ]]></svg></p>")),
    ("svg title", memory_file("<p><mark>c</mark></p><svg><title>t</title></svg>")),
    ("math", memory_file("<p><mark>c</mark><math><mi>x</mi><mglyph/></math></p>")),
    ("table foster parenting", memory_file("<p><mark>c</mark></p><table>stray<tr><td>t</td></tr></table>")),
    ("table in p", memory_file("<p><mark>c</mark><table><tr><td>t</td></tr></table></p>")),
    ("select", memory_file("<p><mark>c</mark><select><option><p>o</p></option></select></p>")),
    ("select with div", memory_file("<p><mark>c</mark></p><select><div>x</div></select>")),
    ("search element", memory_file("<p><mark>c</mark>a<search>s</search>b</p>")),
    ("hgroup", memory_file("<p><mark>c</mark></p><hgroup><p>x</p></hgroup>")),
    ("menu", memory_file("<p><mark>c</mark></p><menu><li>m</li></menu>")),
    ("image", memory_file("<p><mark>c</mark><image src=/a.png></p>")),
    ("ruby", memory_file("<p><mark>c</mark><ruby>a<rb>b<rtc>c</ruby></p>")),
    ("misnested formatting", memory_file("<p><mark>c</mark> <b><i>x</b>y</i></p>")),
    ("nested anchors", memory_file('<p><mark>c</mark> <a href="/a"><a href="/b">x</a></a></p>')),
    ("div in p", memory_file("<p><mark>c</mark><div>d</div></p>")),
    ("stray end tags", memory_file("<p><mark>c</mark></p></p></div></span></br>")),
    ("implied li", memory_file("<ul><li><mark>c</mark><li>b</ul>")),
    ("implied dd", memory_file("<p><mark>c</mark></p><dl><dt>a<dd>b<dt>c<dd>d</dl>")),
    ("nul in text", memory_file("<p><mark>c</mark> a\x00b</p>")),
    ("nul in attribute", memory_file('<p title="a\x00b"><mark>c</mark></p>')),
    ("nul in tag name", memory_file("<p><mark>c</mark><b\x00>x</b\x00></p>")),
    ("cr lf", memory_file("<p><mark>c\r\nd</mark>\r e\r\n</p>").replace("\n", "\r\n")),
    ("lone cr", memory_file("<p><mark>c\rd</mark></p>")),
    ("no doctype (quirks)", memory_file().replace("<!doctype html>\n", "")),
    ("legacy doctype", memory_file().replace("<!doctype html>", '<!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.01//EN">')),
    ("quirks table", memory_file("<p><mark>c</mark><table><tr><td>t</td></tr></table>").replace("<!doctype html>", "")),
    ("second body", memory_file("<p><mark>c</mark></p><body title=x>")),
    ("second html", memory_file("<p><mark>c</mark></p><html lang=fr>")),
    ("meta in body", memory_file('<p><mark>c</mark></p><meta name="memhtml-tag" content="late">')),
    ("article in head", memory_file(extra_head="<article><p><mark>h</mark></p></article>\n")),
    ("text in head", memory_file(extra_head="stray text\n")),
    ("two articles", memory_file("<p><mark>c</mark></p></article><article><p><mark>d</mark></p>")),
    ("article in p", memory_file("<p><mark>c</mark><article>x</article></p>")),
    ("entities", memory_file("<p><mark>c &notin &amp &#0; &#x110000; &#128; &nbsp &copy; &#xD800;</mark></p>")),
    ("entity in attribute", memory_file('<p title="&notit; &amp=x"><mark>c</mark></p>')),
    ("upper-case tags", memory_file("<P><MARK>c</MARK> <EM>e</EM></P>")),
    ("odd-case attributes", memory_file('<p TITLE="t" Data-Lang="x" title="dup"><mark>c</mark></p>')),
    ("valueless attribute", memory_file("<p title><mark>c</mark></p>")),
    ("bom", b"\xef\xbb\xbf" + memory_file().encode()),
    ("invalid utf-8", memory_file().encode() + b"\xff\xfe"),
    ("overlong utf-8", memory_file("<p><mark>\xc0\xaf</mark></p>").encode("latin-1")),
    ("pre leading newline", memory_file("<p><mark>c</mark></p><pre>\n\nx</pre>")),
    ("frameset", memory_file("<p><mark>c</mark></p><frameset><frame></frameset>")),
    ("deep nesting", memory_file("<p><mark>c</mark></p>" + "<section>" * 60 + "x" + "</section>" * 60)),
    ("deep inline nesting", memory_file("<p><mark>c</mark>" + "<em>" * 30 + "x" + "</em>" * 30 + "</p>")),
    ("tag-like title text", memory_file(title="<title>a <p> b</title>\n")),
    ("attribute with markup", memory_file('<p title="<mark>x</mark>"><mark>c</mark></p>')),
    ("self-closing p", memory_file("<p/><p><mark>c</mark></p>")),
    ("void with end tag", memory_file("<p><mark>c</mark><br></br><wbr></wbr></p>")),
    ("empty", ""),
    ("whitespace only", " \n\t"),
    ("not html", "hello"),
    ("head only", '<!doctype html><html><head><meta charset="utf-8"><title>t</title>' + HEAD_METAS),
    ("eof inside tag", memory_file().rstrip("\n>")),
    ("eof inside attribute", memory_file(MINIMAL_ARTICLE + '<p title="x')),
    ("processing instruction", memory_file("<p><mark>c</mark><?xml x?></p>")),
    ("noscript in body", memory_file("<p><mark>c</mark></p><noscript><p>n</p></noscript>")),
    ("iframe", memory_file("<p><mark>c</mark></p><iframe><p>i</p></iframe>")),
]


@pytest.mark.parametrize(("name", "data"), HOSTILE, ids=[name for name, _ in HOSTILE])
def test_hostile_markup_agrees(name: str, data: str | bytes) -> None:
    agree(data)


def test_canonical_file_takes_the_fast_path() -> None:
    assert fast_tree(decode_memory(memory_file())) is not None


@pytest.mark.parametrize("name", ["unclosed title swallows the article", "template in article", "cr lf",
                                  "table foster parenting", "misnested formatting", "comment closed by --!>",
                                  "no doctype (quirks)", "entities", "select", "search element"])
def test_markup_the_parsers_may_build_differently_falls_back(name: str) -> None:
    data = dict(HOSTILE)[name]
    text = decode_memory(data)
    assert fast_tree(text) is None


def test_a_head_edit_that_swallows_the_article_is_refused_as_html5lib_refuses() -> None:
    with pytest.raises(Exception) as fast:
        parse_memory(memory_file(title="<title>Deploy rollbacks\n"))
    with pytest.raises(Exception) as reference:
        parse_memory(memory_file(title="<title>Deploy rollbacks\n"), fast=False)
    assert str(fast.value) == str(reference.value)


def test_generator_is_seeded() -> None:
    assert generated_document(7) == generated_document(7)
    assert json.dumps(generated_document(8)) != json.dumps(generated_document(9))
