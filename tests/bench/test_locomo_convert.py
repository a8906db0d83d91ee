"""bench/locomo.py: LoCoMo JSON → apply stream, evidence normalisation, category pinning."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from typing import Any

import pytest

from git_memhtml.document.parse import parse_memory
from git_memhtml.errors import UsageError
from tests.bench.bench_support import LOCOMO_JSON, PROJECT_ROOT, SHARED_DATA, load_locomo_module, render_op

locomo = load_locomo_module()
needs_data = pytest.mark.skipif(
    not LOCOMO_JSON.exists(), reason=f"LoCoMo data absent: {SHARED_DATA} (see docs/locomo.md)"
)
OP_FIELDS = {"op", "title", "type", "article_html", "workspace", "tags", "entities", "turn_uuid"}


@pytest.fixture(scope="module")
def data() -> list[dict[str, Any]]:
    if not LOCOMO_JSON.exists():
        pytest.skip(f"LoCoMo data absent: {SHARED_DATA} (see docs/locomo.md)")
    loaded: list[dict[str, Any]] = locomo.load_data(LOCOMO_JSON)
    return loaded


@pytest.fixture(scope="module")
def conv26_observations(data: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = locomo.convert(data, "conv-26", "observations")
    return ops


# --- pure pieces (no data needed) ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "iso"),
    [
        ("1:56 pm on 8 May, 2023", "2023-05-08T13:56:00Z"),
        ("10:04 am on 19 December, 2023", "2023-12-19T10:04:00Z"),
        ("12:09 am on 13 September, 2023", "2023-09-13T00:09:00Z"),
        ("12:30 pm on 1 January, 2024", "2024-01-01T12:30:00Z"),
    ],
)
def test_session_date_becomes_an_iso_instant(raw: str, iso: str) -> None:
    assert locomo.parse_session_date(raw) == iso


@pytest.mark.parametrize("raw", ["yesterday", "13:10 pm on 8 May, 2023", "1:56 pm on 31 February, 2023"])
def test_unreadable_session_date_is_refused_with_a_hint(raw: str) -> None:
    with pytest.raises(UsageError) as info:
        locomo.parse_session_date(raw)
    assert info.value.hint


def test_malformed_evidence_is_split_repaired_or_skipped() -> None:
    assert locomo.normalise_dia_ids("D8:6; D9:17") == ["D8:6", "D9:17"]
    assert locomo.normalise_dia_ids("D26:14, D26:34, D26:42") == ["D26:14", "D26:34", "D26:42"]
    assert locomo.normalise_dia_ids("D:11:26") == ["D11:26"]
    assert locomo.normalise_dia_ids("D") == []
    assert locomo.normalise_dia_ids(["D1:18", "D", "D1:20", "D1:18"]) == ["D1:18", "D1:20"]
    assert locomo.normalise_dia_ids(["D1:1", "D10:19"], known=["D1:1"]) == ["D1:1"]


def test_category_mapping_is_pinned_to_the_scorer() -> None:
    assert locomo.CATEGORIES == {
        1: "multi-hop",
        2: "temporal",
        3: "open-domain",
        4: "single-hop",
        5: "adversarial",
    }


def test_text_is_html_escaped_in_the_article() -> None:
    item = {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "A",
            "speaker_b": "B",
            "session_1_date_time": "1:00 pm on 2 May, 2023",
            "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "Tom & Jerry <script>x</script> \"hi\""}],
        },
        "observation": {"session_1_observation": {"A": [["A likes <b>bold</b> & co.", "D1:1"]]}},
    }
    for op in locomo.turn_ops(item) + locomo.observation_ops(item):
        assert "<script>" not in op["article_html"] and "<b>" not in op["article_html"]
        doc = parse_memory(render_op(op))
        assert "&" in doc.gist and "<" in doc.gist
        assert doc.event_at == "2023-05-02T13:00:00Z"


# --- on the real data ---------------------------------------------------------------------------


@needs_data
def test_conv26_observations_give_184_ops_with_the_required_fields(conv26_observations: list[dict[str, Any]]) -> None:
    ops = conv26_observations
    assert len(ops) == 184
    assert len({op["title"] for op in ops}) == 184
    for op in ops:
        assert set(op) == OP_FIELDS
        assert op["op"] == "write" and op["type"] == "episodic"
        assert op["workspace"] == "conv-26" and op["tags"] == ["locomo", "conv-26"]
        assert op["entities"] in (["person:Caroline"], ["person:Melanie"])
        ids = re.findall(r"<dd>(D\d+:\d+)</dd>", op["article_html"])
        assert ids and op["turn_uuid"] == f"conv-26:{ids[0]}"
        assert re.search(r'<time datetime="\d{4}-\d\d-\d\dT\d\d:\d\d:00Z">', op["article_html"])


@needs_data
def test_observations_render_validate_and_keep_date_and_dia_ids(conv26_observations: list[dict[str, Any]]) -> None:
    first = parse_memory(render_op(conv26_observations[0]))
    assert first.event_at == "2023-05-08T13:56:00Z"
    assert [(f.name, f.value) for f in first.facets] == [("dia_id", "D1:3")]
    assert first.gist.startswith("Caroline attended an LGBTQ support group")
    for op in conv26_observations:
        doc = parse_memory(render_op(op))
        assert doc.memory_type == "episodic" and doc.event_at is not None
        assert doc.facets and all(f.name == "dia_id" for f in doc.facets)


@needs_data
def test_observation_with_a_comma_list_of_ids_keeps_one_dd_each(data: list[dict[str, Any]]) -> None:
    ops = locomo.convert(data, "conv-44", "observations")
    multi = [op for op in ops if "<dd>D26:14</dd><dd>D26:34</dd><dd>D26:42</dd>" in op["article_html"]]
    assert len(multi) == 1 and multi[0]["turn_uuid"] == "conv-44:D26:14"


@needs_data
def test_turns_of_all_six_give_3435_unique_titled_ops(data: list[dict[str, Any]]) -> None:
    ops = locomo.convert(data, "all", "turns")
    assert len(ops) == 3435
    per_conversation = Counter(op["workspace"] for op in ops)
    assert per_conversation == {
        "conv-26": 419, "conv-30": 369, "conv-41": 663, "conv-42": 629, "conv-43": 680, "conv-44": 675,
    }
    titles = Counter((op["workspace"], op["title"]) for op in ops)
    assert max(titles.values()) == 1
    assert len(locomo.convert(data, "all", "observations")) == 1487


@needs_data
def test_turn_claims_are_the_dialogue_text(data: list[dict[str, Any]]) -> None:
    ops = locomo.convert(data, "conv-26", "turns")
    doc = parse_memory(render_op(ops[0]))
    assert doc.gist == "Hey Mel! Good to see you! How have you been?"
    assert doc.turn_uuid == "conv-26:D1:1"
    image = next(op for op in ops if "shared an image" in op["article_html"])
    assert "shared an image: " in parse_memory(render_op(image)).body_text


@needs_data
def test_questions_normalise_evidence_and_skip_questions_without_any(data: list[dict[str, Any]]) -> None:
    conv26 = locomo.load_questions(data, "conv-26")
    assert len(conv26) == 197
    assert ("What did Melanie paint recently?", ["D8:6", "D9:17"], 1) in conv26
    conv42 = {q: ev for q, ev, _ in locomo.load_questions(data, "conv-42")}
    assert conv42["What is one of Joanna's favorite movies?"] == ["D1:18", "D1:20"]
    conv43 = {q: ev for q, ev, _ in locomo.load_questions(data, "conv-43")}
    assert "D11:26" in conv43["What authors has Tim read books from?"]
    everything = [q for item in data for q in locomo.load_questions(data, item["sample_id"])]
    assert len(everything) == 1155
    assert {cat for _, _, cat in everything} == set(locomo.CATEGORIES)
    assert all(re.fullmatch(r"D\d+:\d+", d) for _, ev, _ in everything for d in ev)


@needs_data
def test_script_output_is_deterministic_jsonl(data: list[dict[str, Any]], tmp_path: Any) -> None:
    out = tmp_path / "conv26.jsonl"
    cmd = [sys.executable, str(PROJECT_ROOT / "bench" / "locomo.py"), "convert", "--conversation", "conv-26",
           "--units", "observations", "--data", str(LOCOMO_JSON), "--out", str(out)]
    subprocess.run(cmd, check=True, capture_output=True)
    text = out.read_text(encoding="utf-8")
    assert text == locomo.dumps_jsonl(locomo.convert(data, "conv-26", "observations"))
    assert [json.loads(line)["title"] for line in text.splitlines()][:2] == [
        "Caroline, session 1, observation 1", "Caroline, session 1, observation 2",
    ]
    assert locomo.run(["all", "--units", "turns", "--data", str(LOCOMO_JSON)]) == locomo.run(
        ["convert", "--conversation", "all", "--units", "turns", "--data", str(LOCOMO_JSON)]
    )


@needs_data
def test_unknown_conversation_exits_2_with_a_hint(tmp_path: Any) -> None:
    cmd = [sys.executable, str(PROJECT_ROOT / "bench" / "locomo.py"), "convert", "--conversation", "conv-99",
           "--data", str(LOCOMO_JSON)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert "hint: use one of: conv-26" in done.stderr
