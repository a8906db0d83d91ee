"""``identifier_phrases`` and ``identifier_first`` (docs/retrieval.md §4.3 "Identifiers"): which words of a query
are identifiers, the FTS token sequence each must match, and the stable reorder of a fused list."""

from __future__ import annotations

import pytest

from git_memhtml.domain.rrf import IDENTIFIER_MAX, identifier_first, identifier_phrases

PHRASES = [
    ("release 1.2.1 shipped", [("1", "2", "1")]),
    ("web01 server port", [("web01",)]),
    ("parallel zq2 knob", [("zq2",)]),
    ("INC-10423 outage", [("inc", "10423")]),
    ("freeze on 2024-03-15, then (v2.0)", [("2024", "03", "15"), ("v2", "0")]),
    ("ticket #4521?", [("4521",)]),
    ("web01 and WEB01 again", [("web01",)]),
    ("release shipped on time", []),
    ("", []),
    ("build ٣a, arabic-indic digit", [("٣a",)]),
    ("a_1 snake", [("a", "1")]),
    ("what happened in 2023 on day 9, 13, or 7?", []),
    ("room 101 and #101", [("101",)]),
    ("at 10:30 with v2", [("10", "30"), ("v2",)]),
]


@pytest.mark.parametrize(("query", "want"), PHRASES, ids=[p[0] or "empty" for p in PHRASES])
def test_identifier_phrases(query: str, want: list[tuple[str, ...]]) -> None:
    assert identifier_phrases(query) == want


def test_identifiers_are_bounded() -> None:
    query = " ".join(f"id{i}" for i in range(IDENTIFIER_MAX + 5))
    assert identifier_phrases(query) == [(f"id{i}",) for i in range(IDENTIFIER_MAX)]


ORDERS = [
    ("none held: unchanged", {}, ["a", "b", "c", "d"]),
    ("one holder moves first", {"c": 1}, ["c", "a", "b", "d"]),
    ("ties keep fusion order", {"d": 1, "b": 1}, ["b", "d", "a", "c"]),
    ("more identifiers first", {"d": 2, "a": 1, "c": 1}, ["d", "a", "c", "b"]),
    ("unknown paths ignored", {"z": 3}, ["a", "b", "c", "d"]),
]


@pytest.mark.parametrize(("case", "held", "want"), ORDERS, ids=[o[0] for o in ORDERS])
def test_identifier_first(case: str, held: dict[str, int], want: list[str]) -> None:
    fused = [("a", 0.04), ("b", 0.03), ("c", 0.02), ("d", 0.01)]
    got = identifier_first(fused, held)
    assert [p for p, _ in got] == want, case
    assert dict(got) == dict(fused)  # scores kept
