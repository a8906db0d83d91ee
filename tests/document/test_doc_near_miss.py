"""A head meta name or link rel that is almost a format one is ignored by the parser and the index, so it is
named in a warning (issue 3 review, item 6)."""

from __future__ import annotations

import pytest

from git_memhtml.document.parse import parse_memory
from git_memhtml.document.validate import check_document
from tests.document.memdoc_helpers import memory_file


@pytest.mark.parametrize(
    ("line", "warning"),
    [
        ('<meta name="MEMHTML-IMPORTANCE" content="5">',
         '<meta name="MEMHTML-IMPORTANCE"> is ignored: format meta names are lower-case "memhtml-…" exactly'),
        ('<meta name="Memhtml-tag" content="x">',
         '<meta name="Memhtml-tag"> is ignored: format meta names are lower-case "memhtml-…" exactly'),
        ('<link rel="MEMHTML-relates-to" href="/areas/x.html">',
         '<link rel="MEMHTML-relates-to"> is ignored: a format link rel is one lower-case "memhtml-…" token'),
        ('<link rel="author memhtml-supersedes" href="/areas/x.html">',
         '<link rel="author memhtml-supersedes"> is ignored: a format link rel is one lower-case "memhtml-…" token'),
    ],
)
def test_near_miss_is_a_named_warning(line: str, warning: str) -> None:
    html = memory_file(extra_head=line + "\n")
    violations, warnings = check_document(html)
    assert violations == [] and warnings == [warning]
    assert warning in parse_memory(html).warnings


def test_near_miss_type_is_named_even_beside_the_real_one() -> None:
    _, warnings = check_document(memory_file(extra_head='<meta name="MEMHTML-TYPE" content="task">\n'))
    assert warnings == ['<meta name="MEMHTML-TYPE"> is ignored: format meta names are lower-case "memhtml-…" exactly']


@pytest.mark.parametrize(
    "line",
    ['<meta name="description" content="x">', '<link rel="author" href="/people.html">',
     '<link rel="memhtml-relates-to" href="/areas/x.html">', '<meta name="xmemhtml-type" content="x">'],
)
def test_exact_and_unrelated_names_do_not_warn(line: str) -> None:
    assert check_document(memory_file(extra_head=line + "\n"))[1] == []
