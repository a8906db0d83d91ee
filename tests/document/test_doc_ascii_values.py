"""Dates and numbers are read from ASCII digits only, and nothing may trail them (issue 3 review, item 3).

Python's ``\\d`` matches any Unicode decimal digit and ``$`` matches before a final newline; ``float`` reads
``"٠.٥"``. None of these is a sortable ISO date or an ECMAScript number, so each is refused (a date) or dropped
(an optional number), exactly like any other bad value.
"""

from __future__ import annotations

import pytest

from git_memhtml.document.parse import parse_memory
from git_memhtml.document.validate import check_document, is_valid_datetime, js_number
from tests.document.memdoc_helpers import HEAD_METAS, MINIMAL_ARTICLE, memory_file

FULLWIDTH = "２０２６-０１-０１"
ARABIC_INDIC = "٢٠٢٦-٠١-٠١"


@pytest.mark.parametrize(
    "value",
    [FULLWIDTH, ARABIC_INDIC, "2026-01-01\n", "2026-01-01T10:00Z\n", "2026-0١-01", "2026-01-01T1０:00"],
)
def test_non_ascii_digits_and_trailing_newline_are_not_dates(value: str) -> None:
    assert not is_valid_datetime(value)


@pytest.mark.parametrize("value", [FULLWIDTH, ARABIC_INDIC, "2026-01-01&#10;"])
def test_time_datetime_with_such_a_value_is_refused(value: str) -> None:
    violations, _ = check_document(memory_file(MINIMAL_ARTICLE + f'<p><time datetime="{value}">x</time></p>'))
    assert any("is not a valid ISO date or datetime" in v for v in violations), violations


def test_due_with_unicode_digits_is_refused() -> None:
    metas = HEAD_METAS.replace('"semantic"', '"task"')
    html = memory_file(
        metas=metas,
        extra_head=(f'<meta name="memhtml-task-status" content="todo">\n'
                    f'<meta name="memhtml-due" content="{FULLWIDTH}">\n'),
    )
    violations, _ = check_document(html)
    assert violations == [f'memhtml-due "{FULLWIDTH}" is not a valid ISO date or datetime']


@pytest.mark.parametrize("value", ["５", "٠.٥", "1٠", "0x١", "٣e2", "5\u0660"])
def test_non_ascii_digits_are_not_numbers(value: str) -> None:
    assert js_number(value) is None


def test_ascii_numbers_still_read() -> None:
    assert (js_number(" 0.5\n"), js_number("0x1F"), js_number("1e1"), js_number("")) == (0.5, 31.0, 10.0, 0.0)


def test_optional_metas_with_unicode_digits_are_dropped() -> None:
    html = memory_file(
        extra_head=(
            '<meta name="memhtml-confidence" content="٠.٥">\n'
            '<meta name="memhtml-importance" content="５">\n'
            '<meta name="memhtml-reprieves" content="٣">\n'
        )
    )
    doc = parse_memory(html)
    assert (doc.confidence, doc.importance, doc.reprieves) == (None, None, None)
    assert [w.split(" ")[0] for w in doc.warnings] == ["memhtml-confidence", "memhtml-importance", "memhtml-reprieves"]


def test_data_value_with_unicode_digits_is_not_numeric() -> None:
    doc = parse_memory(memory_file(MINIMAL_ARTICLE + '<dl><dt>p99</dt><dd><data value="٥">five</data></dd></dl>'))
    assert [(f.name, f.numeric_value) for f in doc.facets] == [("p99", None)]
