"""Content hash and canonical text (docs/format.md §1.6): golden cases reasoned by hand, invariances, sensitivities."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_memhtml.document.hash import canonical_text, content_hash, is_content_hash
from tests.document.memdoc_helpers import memory_file

GOLDEN = Path(__file__).parent / "golden"
CASES = json.loads((GOLDEN / "hash_cases.json").read_text(encoding="utf-8"))


def _input(case: dict[str, str]) -> str:
    return (GOLDEN / case["file"]).read_text(encoding="utf-8") if "file" in case else case["html"]


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_golden_canonical_text_and_hash(case: dict[str, str]) -> None:
    html = _input(case)
    assert canonical_text(html) == case["canonical"]
    assert content_hash(html) == case["hash"]


def test_hash_shape() -> None:
    value = content_hash("<p><mark>x</mark></p>")
    assert is_content_hash(value)
    assert not is_content_hash("sha256:ABC")


def test_whole_file_and_fragment_agree_and_head_is_out_of_scope() -> None:
    article = "<p><mark>Same claim.</mark> body</p><pre> x</pre>"
    one = memory_file(article, extra_head='<meta name="memhtml-confidence" content="0.10">\n')
    two = memory_file(article, title="<title>Other title</title>\n")
    assert content_hash(one) == content_hash(two) == content_hash(article)


def test_first_article_only() -> None:
    html = "<html><body><article><p><mark>a</mark></p></article><article>b</article></body></html>"
    assert canonical_text(html) == "a"


def test_text_change_moves_hash() -> None:
    assert content_hash("<p><mark>Retry three times.</mark></p>") != content_hash(
        "<p><mark>Retry thirteen times.</mark></p>"
    )


def test_pre_interior_whitespace_is_content() -> None:
    assert content_hash("<pre>a  b</pre>") != content_hash("<pre>a b</pre>")
    assert content_hash("<pre>a\nb</pre>") != content_hash("<pre>a b</pre>")


def test_nbsp_is_not_collapsed() -> None:
    assert content_hash("<p>a&nbsp;b</p>") != content_hash("<p>a b</p>")
    assert canonical_text("<p>a \u00a0 b</p>") == "a \u00a0 b"


def test_inline_elements_do_not_split_words_but_blocks_do() -> None:
    assert canonical_text("<p>re<em>try</em></p>") == "retry"
    assert canonical_text("<p>re</p><p>try</p>") == "re try"
    assert canonical_text("<p>re<b>try</b></p>") == "re try"  # <b> is not in the inline set


def test_skip_code_drops_pre_and_code() -> None:
    html = "<p><mark>Run <code>make</code> then wait.</mark></p><pre>x</pre>"
    assert canonical_text(html, skip_code=True) == "Run then wait."
    assert canonical_text(html) == "Run make then wait. x"


WORDS = st.text(alphabet="abcdef", min_size=1, max_size=5)
SPACE = st.sampled_from(["", " ", "\n", "\n  ", "\t", "\r\n    "])


@settings(max_examples=60, deadline=None, database=None)
@given(items=st.lists(WORDS, min_size=1, max_size=5), pads=st.lists(SPACE, min_size=8, max_size=8))
def test_reindenting_block_markup_keeps_hash(items: list[str], pads: list[str]) -> None:
    flat = "<p><mark>Claim.</mark></p><ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>"
    pretty = (
        f"{pads[0]}<p>{pads[1]}<mark>Claim.</mark>{pads[2]}</p>{pads[3]}<ul>"
        + "".join(f"{pads[4]}<li>{pads[5]}{item}{pads[6]}</li>" for item in items)
        + f"{pads[7]}</ul>\n"
    )
    assert content_hash(pretty) == content_hash(flat)


@settings(max_examples=40, deadline=None, database=None)
@given(text=st.text(alphabet=" \t\nab\u00a0", max_size=20))
def test_collapsible_text_has_no_ascii_whitespace_runs(text: str) -> None:
    out = canonical_text(f"<p>{text}</p>")
    assert not re.search(r"[ \t\n\r\f]{2}", out)
    assert not out.startswith(" ") and not out.endswith(" ")
    assert out.count("\u00a0") == text.count("\u00a0")
