"""bench/curation.py: the curation benchmark runs on a small slice of real memory and reports well-formed figures."""

from __future__ import annotations

import contextlib
import html
import importlib.util
import io
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from git_memhtml.sleep.engine.contract import SLEEP_PHASES
from tests.bench.bench_support import LOCOMO_JSON, PROJECT_ROOT, SHARED_DATA, load_locomo_module

locomo = load_locomo_module()


def _load_bench() -> ModuleType:
    """Import ``bench/curation.py`` (a script, not a package) by path, as ``bench/timing.py`` names it."""
    path = PROJECT_ROOT / "bench" / "curation.py"
    spec = importlib.util.spec_from_file_location("bench_curation", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = _load_bench()
SESSIONS = 3
CONVERSATION = "conv-26"


def _data() -> list[dict[str, Any]]:
    if not LOCOMO_JSON.exists():
        pytest.skip(f"LoCoMo data absent: {SHARED_DATA} (see docs/locomo.md)")
    data: list[dict[str, Any]] = locomo.load_data(LOCOMO_JSON)
    return data


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], str, Path]:
    """conv-26's first three sessions, both shapes, fake embedder; repositories kept, JSON to --out."""
    _data()
    base = tmp_path_factory.mktemp("curation")
    out, workdir = base / "figures.json", base / "work"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = bench.main(["--conversation", CONVERSATION, "--sessions", str(SESSIONS), "--embed", "fake",
                           "--data", str(LOCOMO_JSON), "--workdir", str(workdir), "--out", str(out),
                           "--per-question"])
    return code, json.loads(out.read_text(encoding="utf-8")), printed.getvalue(), workdir


def _in_unit(value: float) -> bool:
    return 0.0 <= value <= 1.0


@pytest.mark.slow
def test_every_run_reports_well_formed_figures(smoke: tuple[int, dict[str, Any], str, Path]) -> None:
    code, result, _, _ = smoke
    assert code == 0
    item = bench.limit_sessions(locomo, locomo.find_conversation(_data(), CONVERSATION), SESSIONS)
    questions = locomo.load_questions([item], CONVERSATION)
    observations = len(locomo.observation_ops(item))
    assert [(r["conversation"], r["shape"]) for r in result["runs"]] == [(CONVERSATION, "agent"),
                                                                         (CONVERSATION, "converter")]
    for run in result["runs"]:
        assert run["sessions"] == SESSIONS
        assert run["memories"] + run["deduplicatedAtImport"] == observations
        assert run["questions"] == len(questions) == len(run["perQuestion"]) > 0
        assert run["failedPhases"] == []
        assert [p["phase"] for p in run["phases"]] == list(SLEEP_PHASES)
        for side in ("recallBefore", "recallAfter"):
            assert _in_unit(run[side]["@5"]) and _in_unit(run[side]["@10"])
            assert run[side]["@5"] <= run[side]["@10"]
        per_q = run["perQuestion"]
        assert run["recallBefore"]["@10"] == pytest.approx(sum(q["recall@10Before"] for q in per_q) / len(per_q),
                                                           abs=1e-4)
        assert run["questionsWorse@10"] == sum(q["recall@10After"] < q["recall@10Before"] for q in per_q)
        assert run["questionsBetter@10"] == sum(q["recall@10After"] > q["recall@10Before"] for q in per_q)
        assert all(len(q["top10Before"]) <= 10 and len(q["top10After"]) <= 10 for q in per_q)
        merge = run["merge"]
        assert isinstance(merge["landed"], bool)
        if merge["landed"]:
            assert merge["refusal"] is None and merge["lostCount"] == 0 and merge["lost"] == []
        else:
            assert merge["refusal"] and merge["reason"] and merge["measuredAfterSkipGate"] is True
        night = run["night"]
        for key in ("filesChanged", "folds", "crossSubjectFolds", "evicted", "arcs", "links", "tasks",
                    "personFiles", "created"):
            assert isinstance(night[key], int) and night[key] >= 0, key
        assert night["folds"] == len(night["foldList"]) >= night["crossSubjectFolds"]
        assert night["links"] == sum(night["linksByRel"].values())
        assert night["created"] == len(night["createdList"]) >= night["personFiles"] + night["arcs"]
        # the night made the two speakers' person files, and linked every memory naming them
        assert night["personFiles"] == 2 and night["linksByRel"]["about_person"] >= run["memories"] - night["folds"]
        generated = run["generatedInTop10"]
        top1, top3, top10 = (generated[f"questionsTop{k}"] for k in (1, 3, 10))
        assert top1 <= top3 <= top10 <= run["questions"]
        assert generated["slots"] == sum(generated["byKind"].values()) >= generated["questionsTop10"]
        assert len(generated["worst"]) <= bench.EXAMPLES
        assert all(w["rank"] <= 10 and any(w["path"] in c for c in night["createdList"]) for w in generated["worst"])
        counted = sum(any(p in c for c in night["createdList"] for p in q["top10After"]) for q in per_q)
        assert generated["questionsTop10"] == counted


@pytest.mark.slow
def test_table_names_every_run(smoke: tuple[int, dict[str, Any], str, Path]) -> None:
    _, result, printed, _ = smoke
    rows = [line for line in printed.splitlines() if line.startswith(CONVERSATION)]
    assert [line.split()[1] for line in rows[:2]] == ["agent", "converter"]
    for run, row in zip(result["runs"], rows):
        before, after = run["recallBefore"]["@10"], run["recallAfter"]["@10"]
        assert f"{before:.3f}→{after:.3f}" in row
    assert result["config"]["embed"] == "fake" and result["gate"]["discrimination"] is not None


@pytest.mark.slow
def test_agent_shape_keeps_dialogue_ids_out_of_what_is_searched(
        smoke: tuple[int, dict[str, Any], str, Path]) -> None:
    """The agent shape's memory is the claim and its day, nothing else: its dialogue ids ride in the ``turn``
    meta, which neither the FTS text nor the embedded chunks hold, and the benchmark still reads them."""
    from git_memhtml.gitrepo import GitRepo
    from git_memhtml.index.db import IndexDB

    _, result, _, workdir = smoke
    repo = GitRepo.discover(workdir / f"{CONVERSATION}-agent")
    db = IndexDB.for_repo(repo)
    try:
        rows = db.query("SELECT path, title, gist, fts_text, turn_uuid FROM files WHERE archived = 0 "
                        "AND path LIKE 'areas/inbox/%'", {})
        chunks = [str(t) for (t,) in db.query("SELECT text FROM chunks", {})]
    finally:
        db.close()
    assert rows
    dia_id = re.compile(r"D\d+:\d+")
    for _path, title, gist, fts_text, turn in rows:
        assert title == gist
        assert dia_id.fullmatch(str(turn).split(":", 1)[1].split(",")[0])
        rest = str(fts_text).replace(str(gist), "").split()  # title and claim are the gist: only the day is left
        assert re.fullmatch(r"\d{1,2} [A-Z][a-z]+ \d{4}", " ".join(rest)), fts_text
    assert chunks and not any(dia_id.search(c) or "Observed of" in c for c in chunks)
    agent = result["runs"][0]
    assert agent["recallBefore"]["@10"] > 0  # the ids were read back from the meta


def test_agent_ops_are_claim_subject_and_day_only() -> None:
    item = locomo.find_conversation(_data(), CONVERSATION)
    ops = locomo.agent_observation_ops(bench.limit_sessions(locomo, item, 1))
    first = item["observation"]["session_1_observation"]
    expected = [(speaker, fact) for speaker, facts in first.items() for fact in facts]
    assert len(ops) == len(expected)
    for op, (speaker, (claim, ids)) in zip(ops, expected):
        assert op == {"op": "write", "title": claim, "type": "episodic",
                      "article_html": f'<p><mark>{html.escape(claim, quote=False)}</mark> '
                                      f'<time datetime="2023-05-08T13:56:00Z">'
                                      f'8 May 2023</time></p>',
                      "entities": [f"person:{speaker}"], "turn_uuid": f"{CONVERSATION}:{ids}"}


def test_limit_sessions_keeps_the_first_sessions_and_their_questions() -> None:
    item = locomo.find_conversation(_data(), CONVERSATION)
    cut = bench.limit_sessions(locomo, item, 2)
    assert [n for n, _, _ in locomo.sessions(cut["conversation"])] == [1, 2]
    assert sorted(cut["observation"]) == ["session_1_observation", "session_2_observation"]
    questions = locomo.load_questions([cut], CONVERSATION)
    assert questions and all(e.startswith(("D1:", "D2:")) for _, ev, _ in questions for e in ev)
    assert bench.limit_sessions(locomo, item, None) == dict(item)


def test_a_keeper_stands_for_every_memory_it_superseded() -> None:
    row = bench.Row("episodic", "t", "agent", ("person:A",))
    state = bench.TreeState(
        live={"k.html": row, "other.html": row},
        archived={"archive/2026/a.html": row, "archive/2026/b.html": row},
        keeper={"archive/2026/a.html": "k.html", "archive/2026/b.html": "archive/2026/a.html"},
        edges=frozenset({("k.html", "supersedes", "archive/2026/a.html"),
                         ("archive/2026/a.html", "supersedes", "archive/2026/b.html"),
                         ("other.html", "about_person", "people.html")}),
        ids={"k.html": frozenset({"D1:1"}), "archive/2026/a.html": frozenset({"D1:2"}),
             "archive/2026/b.html": frozenset({"D1:3"}), "other.html": frozenset({"D2:1"})},
    )
    held = bench.stands_for(state, {"other.html": frozenset({"D2:2"})})
    assert held == {"k.html": frozenset({"D1:1", "D1:2", "D1:3"}), "other.html": frozenset({"D2:1", "D2:2"})}
    ranked = bench.Ranked("q", 4, ("D1:3", "D2:2"), ("k.html", "other.html"))
    assert bench.recall_at(ranked, held, 1) == 0.5 and bench.recall_at(ranked, held, 2) == 1.0
