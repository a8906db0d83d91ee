"""The acceptance matrix of issue 11: every model phase × both wire dialects × every kind of answer, each row one
real sleep night (``run_sleep`` on a real git repo, the fake embedder) through the real :class:`HttpModelClient`
against the loopback :class:`ScriptedModelServer` (docs/models.md §1.6, §2).

Each row checks the seeds' counts for its outcome, a green run, and no partial write: a failing answer changes
exactly what the phase changes with no model bound (a failed batch writes nothing of its own, and a night with a
failed or skipped batch sweeps nothing); an answer naming only keys never offered changes exactly what an empty
answer changes; 429-then-success is the good night; the budget running out mid-phase writes exactly what the same
night writes when every batch after the first fails.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from git_memhtml.llm.contract import Dialect
from git_memhtml.llm.scripted import (
    Answer,
    Malformed,
    Refusal,
    Reply,
    Responder,
    Script,
    ScriptedRequest,
    Stall,
    Status,
)
from tests.model.conftest import RUN, Night, run_night
from tests.model.phase_cases import ARCS, CASES, HOSTILE, Builder, Counts, HostileCase, PhaseCase
from tests.sleep.test_arc_synthesis import echo_title, good_plan

DIALECTS: tuple[Dialect, ...] = ("openai", "anthropic")

TIMEOUT = 0.3
"""Client timeout (seconds per attempt) of the timeout row; the server stalls :data:`STALL` seconds."""

STALL = 1.0

FAILING: dict[str, Reply] = {
    "malformed-json": Malformed(),
    "schema-failing": Answer({"unexpected": True}),
    "timeout": Stall(STALL),
    "refusal": Refusal(),
}
"""Answers that cost their batch: every call of the phase's schema gets one."""

ERROR = {"malformed-json": "LlmContractViolation", "schema-failing": "LlmContractViolation",
         "timeout": "TransportFailure", "refusal": "ProviderRefused"}
"""The typed error each failing answer must be read as (docs/models.md §1.4: a timeout is a ``TransportFailure``, the
``ModelUnavailable`` of no response), logged on its ``call-failed`` line."""

ANSWERS = ("good", *FAILING, "unknown-key", "429-then-success", "budget")

Nights = Callable[..., Night]


@pytest.fixture(scope="module")
def nights(templates: Callable[[Builder], Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Nights]:
    """``nights(case, label, dialect)`` → the night of that row, run once per module (references are shared)."""
    done: dict[tuple[str, str, str], Night] = {}

    def get(case: PhaseCase, label: str, dialect: Dialect = "openai") -> Night:
        key = (case.phase, label, dialect)
        if key not in done:
            done[key] = _night(case, label, dialect, templates, tmp_path_factory.mktemp("row") / "mem")
        return done[key]

    yield get


def _constant(reply: Reply) -> Responder:
    return lambda req: reply


def _first_then(first: Callable[[ScriptedRequest], Reply], later: Callable[[ScriptedRequest], Reply]) -> Responder:
    return lambda req: first(req) if req.index == 0 else later(req)


def _night(case: PhaseCase, label: str, dialect: Dialect, templates: Callable[[Builder], Path], dest: Path) -> Night:
    def run(build: Builder, script: Script | None, *, timeout: float = 10.0, max_attempts: int = 4,
            max_calls: int | None = None) -> Night:
        return run_night(templates(build), dest, case.phase, case.phases, script, dialect=dialect, timeout=timeout,
                         max_attempts=max_attempts, max_calls=max_calls)

    if label == "no-model":
        return run(case.build, None)
    if label == "good":
        return run(case.build, case.script(case.good))
    if label in FAILING:
        reply = FAILING[label]
        if label == "timeout":  # one attempt: a stall is not retried anyway, and the row stays short
            return run(case.build, case.script(_constant(reply)), timeout=TIMEOUT, max_attempts=1)
        return run(case.build, case.script(_constant(reply)))
    if label == "empty":
        return run(case.build, case.script(_constant(Answer(case.empty))))
    if label == "unknown-key":
        return run(case.build, case.script(case.unknown_key))
    if label == "429-then-success":
        return run(case.build, case.script(_first_then(_constant(Status(429, retry_after=0)), case.good)))
    multi = {**case.others, case.schema: case.multi_good}
    if label == "budget":
        return run(case.build_multi, multi, max_calls=case.budget_calls)
    if label == "budget-reference":  # every batch after the first fails, no budget
        return run(case.build_multi, {**multi, case.multi_schema: _first_then(multi[case.multi_schema],
                                                                               _constant(Malformed()))})
    raise AssertionError(label)


def assert_counts(night: Night, expected: Counts) -> None:
    got = {k: night.counts.get(k) for k in expected}
    assert got == dict(expected), night.line


def assert_green(night: Night) -> None:
    assert night.report.failed_phases == [] and night.line.status == "ok", night.line


ROWS = [pytest.param(case, dialect, answer, id=f"{case.phase}-{dialect}-{answer}")
        for case in CASES for dialect in DIALECTS for answer in ANSWERS]


@pytest.mark.parametrize(("case", "dialect", "answer"), ROWS)
def test_every_model_phase_through_both_dialects_with_every_answer(
    nights: Nights, case: PhaseCase, dialect: Dialect, answer: str
) -> None:
    night = nights(case, answer, dialect)
    assert_green(night)
    counts = night.counts
    if answer == "good":
        assert_counts(night, case.good_counts)
        assert counts["failedCalls"] == 0 and counts["budgetSkipped"] == 0
        assert night.sent(case.schema) == case.batches
        assert set(case.writes) <= set(night.changes), sorted(night.changes)
        assert night.changes != nights(case, "no-model").changes
        if dialect == "anthropic":  # the two wires carry the same answer to the same files
            assert night.changes == nights(case, "good", "openai").changes
        assert night.line.llm_calls == case.batches + sum(night.sent(s) for s in case.others)
    elif answer in FAILING:
        assert_counts(night, case.failed)
        assert counts["failedCalls"] == case.batches and counts["budgetSkipped"] == 0
        assert counts["inputTokens"] == counts["outputTokens"] == 0
        assert night.sent(case.schema) == case.batches
        assert all(night.sent(s) == 0 for s in case.others)  # nothing is built on a failed triage
        assert night.changes == nights(case, "no-model").changes  # no partial write
        failed = [r for r in night.rails if r["rail"] == "call-failed"]
        assert len(failed) == case.batches and all(r["phase"] == case.phase for r in failed)
        assert {r["payload"]["error"] for r in failed} == {ERROR[answer]}  # type: ignore[index]
        if answer == "timeout":  # the client gave up on its own clock, not the server's
            assert all(f"timed out after {TIMEOUT:g} s" in r["payload"]["message"] for r in failed)  # type: ignore[index]
    elif answer == "unknown-key":
        assert_counts(night, case.unknown)
        assert counts["failedCalls"] == 0 and counts["budgetSkipped"] == 0
        # ignored, and no verdict on what was offered: the night writes what a night without a model writes and
        # sweeps nothing (an empty answer would sweep the stale detection; docs/models.md §2)
        assert night.changes == nights(case, "no-model").changes
        logged = [r for r in night.rails if r["rail"] == "unknown-key"]
        assert len(logged) == counts["railUnknownKey"]
    elif answer == "429-then-success":
        good = nights(case, "good", dialect)
        assert dict(counts) == dict(good.counts)
        assert night.changes == good.changes
        assert night.sent(case.schema) == case.batches + 1
        first, second = [r for r in night.requests if r.schema_name == case.schema][:2]
        assert first.prompt == second.prompt and first.system == second.system  # the same batch, retried
    else:  # the budget runs out mid-phase
        assert_counts(night, case.budget)
        assert counts["budgetSkipped"] == case.batches_multi - 1 and counts["failedCalls"] == 0
        assert night.sent(case.multi_schema) == 1
        assert sum(1 for _ in night.requests) == case.budget_calls
        reference = nights(case, "budget-reference", dialect)
        assert reference.counts["failedCalls"] == case.batches_multi - 1
        assert night.changes == reference.changes  # the batch never sent writes nothing, like a failed one
        assert night.changes != nights(case, "no-model").changes  # the answered batch did its work


def test_the_matrix_names_every_model_phase_of_the_issue() -> None:
    assert [c.phase for c in CASES] == ["dedup-merge", "entity-resolution", "edge-typing", "arc-synthesis",
                                        "compress", "task-detection"]


# --- the hostile block -----------------------------------------------------------------------------------------------

TASKS_DIR = "areas/inbox/tasks/"
JOURNAL = f".memhtml/sleep/{RUN}.journal.jsonl"

HOSTILE_ROWS = [pytest.param(case, dialect, id=f"{case.name}-{dialect}") for case in HOSTILE for dialect in DIALECTS]


@pytest.mark.parametrize(("case", "dialect"), HOSTILE_ROWS)
def test_a_hostile_model_changes_nothing_the_rails_would_not_allow(
    templates: Callable[[Builder], Path], tmp_path: Path, case: HostileCase, dialect: Dialect
) -> None:
    template = templates(case.build)
    night = run_night(template, tmp_path / "hostile", case.phase, case.phases, case.script, dialect=dialect)
    lawful = run_night(template, tmp_path / "lawful", case.phase, case.phases, case.lawful, dialect=dialect)
    assert_green(night)
    assert_counts(night, case.counts)
    assert night.counts["failedCalls"] == 0 and night.counts["budgetSkipped"] == 0
    refused = sum(int(v) for k, v in night.counts.items() if k.startswith("rail"))  # type: ignore[call-overload]
    assert refused >= 1 and len(night.rails) == refused  # every refusal is counted and logged with its payload
    if case.reaches is not None:  # the attack did reach the model, framed as data
        assert any(case.reaches in r.prompt for r in night.requests)
    if case.tasks_allowed:
        def memories(changes: Mapping[str, bytes | None]) -> dict[str, bytes | None]:
            return {p: b for p, b in changes.items() if not p.startswith(TASKS_DIR) and p != JOURNAL}

        assert memories(night.changes) == memories(lawful.changes)
        assert all(night.changes[p] is not None for p in night.changes if p.startswith(TASKS_DIR))
        said = set((night.changes.get(JOURNAL) or b"").splitlines()) - set((lawful.changes.get(JOURNAL) or b"")
                                                                            .splitlines())
        assert all(json.loads(line)["kind"] == "merge-vetoed" for line in said)  # the journal explains a refusal
    else:
        assert night.changes == lawful.changes
    for path, blob in night.changes.items():
        for text in case.forbidden:
            assert blob is None or text.encode() not in blob, path


# --- arc-synthesis makes two kinds of call: a failed write costs its own arc only ------------------------------------

SECOND_ARC = ("areas/arcs/second-reviewer-for-schema-changes.html", "areas/ops/review.html", "areas/ops/schema.html")
"""What the plan's second arc (a create) writes: the arc, and the part_of links of the two memories it cites."""


@pytest.mark.parametrize(("dialect", "answer"), [pytest.param(d, a, id=f"{d}-{a}") for d in DIALECTS for a in FAILING])
def test_a_failed_arc_write_costs_that_arc_and_the_next_one_is_written(
    nights: Nights, tmp_path: Path, templates: Callable[[Builder], Path], dialect: Dialect, answer: str
) -> None:
    short = answer == "timeout"
    script = {"ArcPlan": good_plan, "ArcContent": _first_then(_constant(FAILING[answer]), echo_title)}
    night = run_night(templates(ARCS.build), tmp_path / "mem", ARCS.phase, ARCS.phases, script, dialect=dialect,
                      timeout=TIMEOUT if short else 10.0, max_attempts=1 if short else 4)
    assert_green(night)
    assert_counts(night, {"arcs": 1, "planned": 2, "written": 1, "skipped": 1, "failedCalls": 1, "budgetSkipped": 0})
    assert night.sent("ArcContent") == 2
    good = nights(ARCS, "good", dialect)
    assert night.changes == {p: good.changes[p] for p in SECOND_ARC}  # nothing of the first arc, all of the second
