"""Docs that stand alone (issue 9 item 8): the package cites pages of ``docs/``, never documents outside the
repository, and every ``docs/<page>.md §<n>`` it cites names a page that has a heading numbered ``<n>``.

:func:`citation_problems` does the checking on any text, so the same function is tested on planted bad
citations and run over every source file of the package and the benchmarks.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SCANNED_SUFFIXES = (".py", ".md", ".sql")

OUTSIDE: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("docs/format.md §", re.compile(r"\bcore\s+§")),
    ("sleep-eval §", re.compile(r"\bsleep-eval\b", re.IGNORECASE)),
    ("memhtml-core", re.compile(r"memhtml-core\b")),
    ("memhtml-sleep-eval", re.compile(r"memhtml-sleep-eval")),
    ("spec/", re.compile(r"(?<![\w-])spec/[\w.-]+")),
    ("seeds/", re.compile(r"(?<![\w-])seeds/\d")),
    ("seed 000", re.compile(r"\bseeds?\s+00\d\b", re.IGNORECASE)),
    ("../shared", re.compile(r"\.\./shared(?!/data\b(?![\w/.-]*README))")),
    ("/work/shared", re.compile(r"/work/shared")),
    ("DESIGN §", re.compile(r"\bDESIGN\s+§")),
    ("git-ecosystem", re.compile(r"\bgit-ecosystem\b")),
    ("style-anchors", re.compile(r"\bstyle-anchors\b")),
    ("deps-measured", re.compile(r"\bdeps-measured\b")),
    ("docs/retrieval-tuning.md §1", re.compile(r"\bretrieval-baselines\b")),
)
"""Citation forms of documents outside the repository. ``../shared/data/…`` (but not its README) is allowed: it is
where the benchmarks read their data set, a location and not a citation (docs/locomo.md)."""

_NUM = r"\d+(?:\.\d+)*"
_GAP = r"[ \t]*(?:\n[ \t]*(?:#|--)?[ \t]*)?"
PAGE_CITATION = re.compile(
    rf"docs/(?P<page>[\w.-]+?)\.md(?P<refs>{_GAP}§[ \t]?{_NUM}"
    rf"(?:{_GAP}[-–]{_GAP}§?{_NUM}|{_GAP}(?:,|and){_GAP}§[ \t]?{_NUM})*)?"
)
"""``docs/<page>.md``, optionally followed by ``§<n>`` and a chain of further sections of the same page (``§1.2,
§1.7``, ``§4.1-4.4``, ``§3.6–3.7``), across a line break too. Every ``<n>`` must be a numbered heading of the page."""

HEADING_NUMBER = re.compile(r"^#{1,6}\s+(?P<num>\d+(?:\.\d+)*)\.?(?:\s|$)", re.MULTILINE)


@cache
def page_sections(page: str) -> frozenset[str] | None:
    """The section numbers of ``docs/<page>.md`` headings (``## 1.6 Content hash`` → ``1.6``), or ``None`` when
    the page does not exist."""
    path = DOCS / f"{page}.md"
    if not path.is_file():
        return None
    return frozenset(m.group("num") for m in HEADING_NUMBER.finditer(path.read_text(encoding="utf-8")))


def citation_problems(text: str, where: str = "<text>") -> list[str]:
    """Every problem with the citations in ``text``: an outside document named, a ``docs/`` page that does not
    exist, or a section number the page has no heading for. Each problem names ``where`` and the line."""
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        for name, pattern in OUTSIDE:
            if pattern.search(line):
                problems.append(f"{where}:{number}: cites a document outside the repository ({name}): {line.strip()}")
    for match in PAGE_CITATION.finditer(text):
        number = text.count("\n", 0, match.start()) + 1
        page = match.group("page")
        sections = page_sections(page)
        if sections is None:
            problems.append(f"{where}:{number}: docs/{page}.md does not exist")
            continue
        for section in re.findall(_NUM, match.group("refs") or ""):
            if section not in sections:
                problems.append(f"{where}:{number}: docs/{page}.md has no heading numbered {section}")
    return problems


PLANTED: tuple[str, ...] = (
    '"""Content hash (core §1.6)."""',
    "# see sleep-eval §4.2 for the weights",
    "(``spec/memhtml-core.md`` §1)",
    "(seed 000 §5)",
    "see ../shared/spec/retrieval-baselines.md and ../shared/data/README.md",
    "(DESIGN §3.13)",
    "(docs/format.md §9.9)",
    "(docs/no-such-page.md §1)",
    "(docs/no-such-page.md)",
    "(docs/format.md §1.2, §1.77)",
    "(docs/format.md\n    §7.7)",
)
"""One bad citation per line (line 11 is split across two lines, as docstrings wrap)."""

GOOD: tuple[str, ...] = (
    '"""Content hash (docs/format.md §1.6)."""',
    "(docs/retention.md §4.2; docs/phases.md §0.4)",
    "(docs/retention.md §4.1-4.4, docs/index.md §3.6–3.7, docs/gate.md §8.1, 2 probes)",
    "(docs/format.md §1.2,\n    §1.7)",
    "(docs/store.md, \"The write lock\")",
    "default data: ../shared/data/locomo/locomo-dev.json, read from `../shared/data/` (../shared/data)",
    "the core of the index; a spec of the format",
)
"""Citations and mentions the checker must accept."""


def _sources() -> list[Path]:
    """The package's and the benchmarks' sources and docs, and the tests (this file plants bad citations on
    purpose, so it is left out)."""
    files = [p for p in (ROOT / "git_memhtml").rglob("*") if p.suffix in SCANNED_SUFFIXES and p.is_file()]
    files += [p for p in (ROOT / "bench").glob("*") if p.suffix in SCANNED_SUFFIXES and p.is_file()]
    files += [p for p in (ROOT / "tests").rglob("*.py") if p.resolve() != Path(__file__).resolve()]
    return sorted(files)


def test_the_checker_sees_every_planted_bad_citation() -> None:
    planted = "\n".join(PLANTED)
    problems = citation_problems(planted, "planted.py")
    assert [p.split(":")[1] for p in problems].count("1") == 1
    lines = {int(p.split(":")[1]) for p in problems}
    assert lines == set(range(1, 12)), problems
    assert any("no heading numbered 9.9" in p for p in problems)
    assert any("no-such-page.md does not exist" in p for p in problems)
    assert any("no heading numbered 1.77" in p for p in problems)
    assert any("no heading numbered 7.7" in p for p in problems)


def test_the_checker_accepts_good_citations_and_the_data_location() -> None:
    good = "\n".join(GOOD)
    assert citation_problems(good) == []


def test_every_numbered_citation_form_used_has_its_heading() -> None:
    assert page_sections("format") is not None
    assert {"1.1", "1.6", "1.10"} <= page_sections("format")  # type: ignore[operator]
    assert {"4.1", "4.8"} <= page_sections("retrieval")  # type: ignore[operator]


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_sources_cite_only_pages_of_this_repository(path: Path) -> None:
    assert citation_problems(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT))) == []


def test_docs_pages_cite_only_pages_of_this_repository() -> None:
    problems = []
    for page in sorted(DOCS.glob("*.md")):
        problems += citation_problems(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT)))
    assert problems == []
