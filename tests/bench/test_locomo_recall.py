"""bench/locomo.py recall: scoring rule, turn context in the importer, DRAGON pins, an end-to-end run."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from git_memhtml.document.parse import parse_memory
from tests.bench.bench_support import LOCOMO_JSON, PROJECT_ROOT, SHARED_DATA, load_locomo_module, render_op

locomo = load_locomo_module()
sys.path.insert(0, str(PROJECT_ROOT / "bench"))
locomo_recall: ModuleType = importlib.import_module("locomo_recall")


@pytest.fixture(scope="module")
def data() -> list[dict[str, Any]]:
    if not LOCOMO_JSON.exists():
        pytest.skip(f"LoCoMo data absent: {SHARED_DATA} (see docs/locomo.md)")
    loaded: list[dict[str, Any]] = locomo.load_data(LOCOMO_JSON)
    return loaded


def test_recall_is_the_covered_share_of_evidence_and_mrr_the_first_relevant_rank() -> None:
    hits = [frozenset({"D1:1"}), frozenset({"D2:2"}), frozenset(), frozenset(), frozenset({"D3:3"})]
    hits += [frozenset()] * 20 + [frozenset({"D4:4"})]
    recall, first = locomo_recall.score_question(["D2:2", "D3:3", "D4:4", "D9:9"], hits)
    assert recall == {5: 0.5, 10: 0.5, 25: 0.5, 50: 0.75}
    assert first == 2
    none, absent = locomo_recall.score_question(["D7:7"], hits[:3])
    assert none == {5: 0.0, 10: 0.0, 25: 0.0, 50: 0.0} and absent is None
    summary = locomo_recall.summarise([
        locomo_recall.QuestionResult("c", "q", 1, ("a",), {5: 1.0, 10: 1.0, 25: 1.0, 50: 1.0}, 2),
        locomo_recall.QuestionResult("c", "q", 1, ("a",), {5: 0.0, 10: 0.5, 25: 1.0, 50: 1.0}, None),
    ])
    assert summary.recall[10] == 0.75 and summary.mrr == 0.25


def test_dragon_reference_points_are_pinned() -> None:
    assert locomo_recall.DRAGON["turns"] == {5: 0.588, 10: 0.675, 25: 0.799, 50: 0.848}
    assert locomo_recall.DRAGON["observations"] == {5: 0.496, 10: 0.571, 25: 0.660, 50: 0.711}
    assert locomo_recall.KS == (5, 10, 25, 50) and locomo_recall.SEARCH_LIMIT == 50


def test_turns_carry_preceding_turns_of_the_same_session_in_an_aside(data: list[dict[str, Any]]) -> None:
    item = locomo.find_conversation(data, "conv-26")
    ops = locomo.turn_ops(item, 2)
    first, second, third = (parse_memory(render_op(op)) for op in ops[:3])
    assert "<aside>" not in ops[0]["article_html"]
    assert third.gist == item["conversation"]["session_1"][2]["text"].strip()
    asides = re.findall(r"<p>Earlier, ([^:]+) said: ", ops[2]["article_html"])
    assert asides == ["Caroline", "Melanie"]
    assert first.gist in third.body_text and second.gist in third.body_text
    assert ops[3]["article_html"].count("Earlier, ") == 2
    session_two = next(i for i, op in enumerate(ops) if op["title"].endswith(", D2:1"))
    assert "<aside>" not in ops[session_two]["article_html"]
    bare = locomo.turn_ops(item, 0)
    assert all("<aside>" not in op["article_html"] for op in bare)
    assert [op["title"] for op in bare] == [op["title"] for op in ops]
    assert locomo.DEFAULT_CONTEXT == 2


def test_negative_context_is_a_usage_error(data: list[dict[str, Any]]) -> None:
    with pytest.raises(locomo.UsageError, match="--context"):
        locomo.run(["convert", "--conversation", "conv-26", "--units", "turns", "--context", "-1",
                    "--data", str(LOCOMO_JSON)])


@pytest.mark.slow
def test_recall_on_conv26_beats_dragon_through_store_indexer_and_search(
    data: list[dict[str, Any]], tmp_path: Path
) -> None:
    report = locomo_recall.run_recall(locomo, data, ["conv-26"], units="turns", embed="off", context=2,
                                      weights=None, workdir=tmp_path)
    assert report.memories == 419 and len(report.questions) == 197
    assert set(report.by_category()) == set(locomo.CATEGORIES)
    overall = report.overall()
    assert overall.recall[5] > 0.588 and overall.recall[10] > 0.675
    assert overall.recall[5] <= overall.recall[10] <= overall.recall[25] <= overall.recall[50]
    assert report.weights.recency == 0.05
    table = locomo_recall.render_report(report, locomo.CATEGORIES)
    assert "DRAGON (paper)" in table and "5 adversarial" in table and "context=2" in table
