"""Requests that fit a local model (docs/models.md §11): every request is under ``memhtml.llmmaxprompt``, by the
kernel's rule (split between groups, then cut the texts of a group that does not fit alone), never by the server;
a request that cannot fit is not sent and is counted; a member's claim is sent once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.index.corpus import CorpusRow
from git_memhtml.index.db import IndexDB
from git_memhtml.llm.contract import Dialect
from git_memhtml.llm.scripted import Answer, Reply, ScriptedRequest, blocks
from git_memhtml.llm.scripted_server import ScriptedModelServer
from git_memhtml.sleep.engine.batch import KeyedBatch, Member, fit_batch
from git_memhtml.sleep.engine.prompts import shipped_prompt
from git_memhtml.sleep.engine.run import ModelBinding, run_sleep
from git_memhtml.sleep.engine.runfiles import run_file_stem
from git_memhtml.sleep.engine.tokens import request_tokens
from git_memhtml.sleep.phases import compress, dedup_model, edge_pairs, placement_candidates, task_detection
from git_memhtml.sleep.phases.arc_synthesis import evidence_text
from git_memhtml.sleep.phases.scoring import Scored
from git_memhtml.sleep.phases.trace_consolidation import split_to_fit
from tests.sleep.sleep_corpus_helpers import DATE, git, make_repo, memory

PHASES = ("preflight", task_detection.PHASE, "report")

DIGITS = " ".join(f"{n:06d}" for n in range(400))
"""A body of 2,800 characters the Llama 2 tokenizer reads as one token per digit: one member costs more than the
cap below leaves, so it must be cut."""

CLAIM = "Dana will send the Q3 budget report to finance by Friday."
"""An agent-shaped memory's claim: also its title, and the whole of its article."""


def corpus() -> dict[str, str]:
    files = {f"areas/notes/n{i:02d}.html": memory(f"Note {i}: the team reviewed topic {i} and agreed on next steps.",
                                                  body=[f"Paragraph {i}: " + "the service kept answering requests "
                                                        "while the migration went on. " * 12])
             for i in range(8)}
    files["areas/notes/digits.html"] = memory("A ledger of numbers.", body=[DIGITS])
    files["areas/notes/agent.html"] = memory(CLAIM, title=CLAIM)
    return files


def _counts(report: object, phase: str) -> dict[str, object]:
    return next(p.counts for p in report.phases if p.phase == phase)  # type: ignore[attr-defined]


def _run(tmp_path: Path, dialect: Dialect, script: dict[str, object], cap: int) -> tuple[object, ScriptedModelServer,
                                                                                          Path]:
    repo = make_repo(tmp_path, corpus())
    db = IndexDB.for_repo(repo)
    try:
        with ScriptedModelServer(script) as server:  # type: ignore[arg-type]
            report = run_sleep(repo, db, date=DATE, phases=PHASES, embedder=FakeEmbedder(dim=64),
                               clock=lambda: f"{DATE}T09:00:00Z",
                               model=ModelBinding(server.client(dialect), max_prompt=cap))
    finally:
        db.close()
    return report, server, repo.root


def _nothing(req: ScriptedRequest) -> Reply:
    return Answer({"findings": []})


def _cap(tmp_path: Path) -> int:
    """Room for about two ordinary members beside task-detection's own system prompt and instruction."""
    phase = task_detection.PHASE
    return request_tokens(shipped_prompt(phase), shipped_prompt(f"{phase}.task")) + 900


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_a_batch_over_the_cap_is_split_and_a_member_too_large_alone_is_cut_over_the_wire(
    tmp_path: Path, dialect: Dialect,
) -> None:
    cap = _cap(tmp_path)
    report, server, _ = _run(tmp_path, dialect, {"TaskDetection": _nothing}, cap)
    sent = [r for r in server.requests if r.schema_name == "TaskDetection"]
    sizes = [request_tokens(r.system, r.prompt) for r in sent]
    assert len(sent) > 1 and max(sizes) <= cap  # split: one request of ten memories was about 2.5 times the cap
    offered = [text for r in sent for text in blocks(r.prompt).values()]
    assert len(offered) == 10  # every memory offered once, none dropped
    [ledger] = [text for text in offered if "000000" in text]
    full = f"A ledger of numbers. {DIGITS}"  # the claim once: the title and the claim say the same
    assert full.startswith(ledger) and len(ledger) < task_detection.MEMBER_CHARS  # its end was cut, nothing else
    counts = _counts(report, task_detection.PHASE)
    assert counts["membersCut"] == 1 and "overCap" not in counts
    assert counts["largestPrompt"] == max(sizes) and counts["promptTokens"] == sum(sizes)


def test_a_request_that_cannot_fit_is_never_sent_and_is_counted(tmp_path: Path) -> None:
    cap = _cap(tmp_path)
    repo = make_repo(tmp_path, {**corpus(), ".memhtml/prompts/task-detection.md": "Read carefully. " * cap})
    db = IndexDB.for_repo(repo)
    try:
        with ScriptedModelServer({"TaskDetection": _nothing}) as server:
            report = run_sleep(repo, db, date=DATE, phases=PHASES, embedder=FakeEmbedder(dim=64),
                               clock=lambda: f"{DATE}T09:00:00Z",
                               model=ModelBinding(server.client("openai"), max_prompt=cap))
    finally:
        db.close()
    assert [r for r in server.requests if r.schema_name == "TaskDetection"] == []  # the server never saw it
    counts = _counts(report, task_detection.PHASE)
    over = counts["overCap"]
    assert isinstance(over, int) and over >= 1 and counts["promptTokens"] == 0 and counts["skipped"] == over
    log = repo.common_dir / "memhtml" / "runs" / f"{run_file_stem(report.run_id)}.rails.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert {line["rail"] for line in lines} == {"over-cap"}
    assert all(line["payload"]["cap"] == cap and line["payload"]["tokens"] > cap for line in lines)


def test_an_agent_shaped_memory_sends_its_claim_once_over_the_wire(tmp_path: Path) -> None:
    _, server, _ = _run(tmp_path, "openai", {"TaskDetection": _nothing}, 100_000)
    [prompt] = [r.prompt for r in server.requests if r.schema_name == "TaskDetection"]
    [block] = [text for text in blocks(prompt).values() if "Dana" in text]
    assert block == CLAIM and prompt.count(CLAIM) == 1  # title, claim and article said it three times


def _row(title: str, gist: str, body: str) -> CorpusRow:
    return CorpusRow("areas/notes/x.html", "semantic", title, gist, body, "h", 1.0, 5, 9, "", "", None, 0)


@pytest.mark.parametrize(("title", "body"), [
    (CLAIM, CLAIM),  # the shape an agent writes
    ("Dana, session 3, observation 2", f"{CLAIM} Observed of Dana in session 3."),  # the LoCoMo converter's
    (CLAIM.rstrip("."), f"Context first. {CLAIM}"),  # a claim inside its article, a title without the stop
])
def test_every_phase_sends_a_members_claim_once(title: str, body: str) -> None:
    row = _row(title, CLAIM, body)
    scored = Scored(row, 0.5, "keep")
    texts = {
        "task-detection": task_detection.member_text(row),
        "placement-triage": placement_candidates.member_text(row),
        "dedup-merge": dedup_model.member_text(row),
        "edge-typing": edge_pairs.side_text(row),
        "compress": compress.member_text(scored),
        "arc-synthesis": evidence_text(scored),
    }
    for phase, text in texts.items():
        assert text.count(CLAIM) == 1, phase
        assert ("session 3" in text) == ("session 3" in title + body), phase  # nothing else was lost


def test_the_kernel_splits_between_groups_and_never_inside_one() -> None:
    groups = [[Member(f"g{g}m{i}", f"group {g} member {i} " * 8, g) for i in range(3)] for g in range(4)]

    def size(batch: KeyedBatch) -> int:
        return sum(len(t) for t in batch.texts) // 4

    one = sum(len(m.text) for m in groups[0]) // 4
    fitted = fit_batch(groups, label="member", member_chars=1200, size=size, cap=2 * one + 1)
    assert [[m.group for m in f.batch.members] for f in fitted] == [[0, 0, 0, 1, 1, 1], [2, 2, 2, 3, 3, 3]]
    assert all(f.cut == 0 for f in fitted)


def test_a_group_too_large_alone_has_its_longest_texts_cut_to_one_length() -> None:
    group = [Member("short", "s" * 40), Member("long", "l" * 900), Member("longer", "L" * 1100)]

    def size(batch: KeyedBatch) -> int:
        return sum(len(t) for t in batch.texts)

    [fitted] = fit_batch([group], label="member", member_chars=1200, size=size, cap=1000)
    assert [len(t) for t in fitted.batch.texts] == [40, 480, 480] and fitted.cut == 2
    [whole] = fit_batch([group], label="member", member_chars=1200, size=lambda b: 10_000, cap=1000)
    assert whole.batch.texts == ("s" * 40, "l" * 900, "L" * 1100) and whole.cut == 0  # nothing fits: the call refuses


def test_a_transcript_chunk_is_halved_at_paragraph_breaks_until_each_part_fits() -> None:
    paragraphs = [f"user: question {i} " + "about the deploy " * 30 for i in range(9)]
    text = "\n\n".join(paragraphs)
    parts = split_to_fit(text, lambda part: len(part) <= 1200)
    assert len(parts) > 1 and all(len(p) <= 1200 for p in parts)
    assert [p for part in parts for p in part.split("\n\n")] == paragraphs  # every paragraph, whole, in order


def test_git_config_reaches_the_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, corpus())
    git(repo.root, "config", "memhtml.llmmaxprompt", "1500")
    from git_memhtml.cli.app import App
    from git_memhtml.cli.model_binding import bind_model

    env = {"MEMHTML_LLM": "openai", "MEMHTML_LLM_URL": "http://127.0.0.1:9/v1", "MEMHTML_LLM_MODEL": "m"}
    assert bind_model(App(repo_path=repo.root, env=env), None).services().max_prompt == 1500
