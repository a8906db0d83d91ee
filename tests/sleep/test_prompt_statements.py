"""Every phase prompt states what the code will decide whatever the model answers, with the numbers the code uses
(issue 27 item 3; docs/models.md §10).

The numbers are not typed into the prompts: each phase fills them from the constants its rails apply
(``prompt_values``), so the prompt and the rail cannot drift apart. A night over the real HTTP wire shows the dedup
model is told that the floor folds above 0.92 and that the oldest memory is kept, whatever it answers.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from git_memhtml.domain.entities import CENTROID_AGREEMENT, ROLE_SUFFIXES
from git_memhtml.domain.merge import MAX_MERGE_PAIRS, NEAR_DUPLICATE_THRESHOLD
from git_memhtml.llm.scripted import Answer
from git_memhtml.sleep.engine.contract import DETECTED_TASK_CAP
from git_memhtml.sleep.engine.prompts import fill, shipped_prompt
from git_memhtml.sleep.phases import (
    arc_synthesis,
    compress,
    dedup_model,
    edge_typing,
    entity_model,
    placement_rails,
    placement_triage,
    task_detection,
    trace_answers,
    trace_commitments,
    trace_consolidation,
)
from tests.sleep.sleep_corpus_helpers import make_repo, memory
from tests.sleep.wire_night import wire_night

RUNTIME = {"action", "entity_type"}
"""Placeholders a phase fills per call, not from a constant."""

PROMPTS: list[tuple[str, Callable[[], dict[str, str]], dict[str, float]]] = [
    ("dedup-merge", dedup_model.prompt_values,
     {"near_duplicate_threshold": NEAR_DUPLICATE_THRESHOLD, "max_merge_pairs": MAX_MERGE_PAIRS}),
    ("entity-resolution", entity_model.prompt_values,
     {"confidence_floor": entity_model.ENTITY_CONFIDENCE_FLOOR,
      "promote_detections": entity_model.ENTITY_PROMOTE_DETECTIONS, "centroid_agreement": CENTROID_AGREEMENT}),
    ("edge-typing", edge_typing.prompt_values,
     {"confidence_floor": edge_typing.CONFIDENCE_FLOOR, "promote_after": edge_typing.PROMOTE_AFTER,
      "promotion_cap": edge_typing.PROMOTION_CAP}),
    ("arc-synthesis", arc_synthesis.prompt_values,
     {"evidence_max": arc_synthesis.MAX_EVIDENCE_KEYS, "create_evidence": arc_synthesis.MIN_CREATE_EVIDENCE}),
    ("arc-synthesis-write", arc_synthesis.prompt_values, {}),
    ("compress", compress.prompt_values, {"batch_members": compress.BATCH_MEMBERS, "min_batch": compress.MIN_BATCH}),
    ("task-detection", task_detection.prompt_values,
     {"floor": task_detection.FLOOR, "sentence_chars": task_detection.SENTENCE_CHARS,
      "min_words": task_detection.MIN_SENTENCE_WORDS, "task_cap": DETECTED_TASK_CAP}),
    ("trace-consolidation", trace_consolidation.prompt_values,
     {"claim_chars": trace_answers.CLAIM_CHARS, "gist_chars": trace_answers.GIST_CHARS,
      "quote_chars": trace_answers.QUOTE_CHARS, "min_evidence": trace_answers.MIN_EVIDENCE,
      "commitment_floor": trace_commitments.COMMITMENT_FLOOR}),
    ("trace-consolidation-synthesis", trace_consolidation.prompt_values, {}),
    ("placement-triage", placement_triage.prompt_values,
     {"floor": placement_rails.FLOOR, "max_new_folders": placement_rails.MAX_NEW_FOLDERS}),
]
"""Each system prompt, the values its phase fills it with, and the constant behind each value."""

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@pytest.mark.parametrize(("name", "values", "constants"), PROMPTS, ids=[p[0] for p in PROMPTS])
def test_a_prompt_states_what_code_decides_with_the_constants_numbers(
        name: str, values: Callable[[], dict[str, str]], constants: dict[str, float]) -> None:
    system = fill(shipped_prompt(name), values())
    task = fill(shipped_prompt(f"{name}.task"), values())
    assert "What code decides, whatever you answer" in " ".join(system.split())
    for key, constant in constants.items():
        assert values()[key] == f"{constant:g}"
        assert f"{constant:g}" in system, (name, key)
    left = set(_PLACEHOLDER.findall(system)) | set(_PLACEHOLDER.findall(task))
    assert left <= RUNTIME, left  # every number the prompt names was filled from a constant


def test_the_dedup_model_is_told_the_floor_folds_whatever_it_answers_and_the_oldest_is_kept(tmp_path: Path) -> None:
    files = {
        "areas/ops/a.html": memory("The response cache of checkout-api is enabled in production.",
                                   created="2026-01-01T00:00:00Z"),
        "areas/ops/b.html": memory("The response cache of checkout-api is enabled in production today.",
                                   created="2026-02-01T00:00:00Z"),
    }
    night = wire_night(make_repo(tmp_path, files), ("preflight", "dedup-merge"),
                       {"MergePartition": [Answer({"groups": []})]}, dialect="anthropic")
    [request] = night.sent("MergePartition")
    said = " ".join(request.system.split())
    assert f"more similar than {NEAR_DUPLICATE_THRESHOLD:g} (cosine) are folded even when you leave them out" in said
    assert "the oldest memory is kept" in said and f"At most {MAX_MERGE_PAIRS} folds" in said
    assert "{" not in said


def test_the_task_model_is_told_open_work_has_its_own_ten_beside_the_review_tasks() -> None:
    """The cap the prompt states is the one code enforces per class (docs/tasks.md §7 "Two budgets")."""
    said = " ".join(fill(shipped_prompt("task-detection"), task_detection.prompt_values()).split())
    assert f"opens at most {DETECTED_TASK_CAP} tasks of open work a night for the whole store" in said
    assert f"Review tasks the night files for its own refused decisions (folds, entity merges, contradictions) have " \
           f"a separate limit of {DETECTED_TASK_CAP} and never take a place from open work" in said


def test_the_entity_model_is_told_which_role_words_make_one_service_name() -> None:
    """The role words the prompt names are the ones ``role_word_form`` reads (docs/entities.md §6)."""
    said = " ".join(fill(shipped_prompt("entity-resolution"), entity_model.prompt_values()).split())
    assert f"followed by one role word ({', '.join(ROLE_SUFFIXES)})" in said
    assert "notifications and notifications-worker" in said and "kafka and kafka-connect stay two" in said
