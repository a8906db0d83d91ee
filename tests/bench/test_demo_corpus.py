"""git_memhtml/resources/demo/memories.jsonl: shape of every op and the curation cases its README promises, by line."""

from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np
import pytest

from git_memhtml.document.model import MEMORY_TYPES, REL_CLASSES, TASK_STATUSES, MemoryDocument
from git_memhtml.document.parse import parse_memory
from git_memhtml.domain.entities import AUTO_MERGE_RATIO, REVIEW_RATIO, lcs_ratio, name_key
from git_memhtml.domain.merge import NEAR_DUPLICATE_THRESHOLD, MergeText, veto_reasons
from git_memhtml.domain.retention import REPRIEVE_FLOOR, reprieve_score
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.store.ops import parse_op_stream
from git_memhtml.store.repo_init import init_repo
from git_memhtml.store.writer import apply_batch
from tests.bench.bench_support import DEMO_JSONL, read_jsonl, render_op

ALLOWED_FIELDS = {
    "op", "title", "type", "body", "article_html", "path", "workspace", "tags", "entities", "aliases",
    "importance", "confidence", "valid_from", "valid_until", "links", "session_id", "prompt_id", "turn_uuid",
    "status", "due",
}
"""The apply op fields of the brief; anything else is refused by ``apply``."""
WRITABLE = set(MEMORY_TYPES) - {"arc"}
INSTANT = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")

FOLD_PAIRS = [(10, 11), (12, 13), (14, 15), (16, 17), (18, 19)]
"""1-based lines of restatements sleep's dedup-merge must fold (git_memhtml/resources/demo/README.md)."""
VETO_PAIRS = {(20, 21): ("negation",), (22, 23): ("numeric",), (24, 25): ("variant",)}
"""1-based lines of high-similarity pairs the merge veto must refuse, with the predicate that fires."""
PERSON_FILE, PRIYA_FULL, PRIYA_SHORT = 1, (26, 27, 30), (28, 29)
STALE, STALE_LOW, STALE_HIGH, HIGH = 53, 54, 55, 56
DANGLING = 57
TASKS = (45, 48, 50, 52)


@pytest.fixture(scope="module")
def ops() -> list[dict[str, Any]]:
    return read_jsonl(DEMO_JSONL)


def line(ops: list[dict[str, Any]], number: int) -> dict[str, Any]:
    return ops[number - 1]


@pytest.fixture(scope="module")
def docs(ops: list[dict[str, Any]]) -> list[MemoryDocument]:
    return [parse_memory(render_op(op)) for op in ops]


def test_corpus_size_and_op_shape(ops: list[dict[str, Any]]) -> None:
    assert 60 <= len(ops) <= 150
    for number, op in enumerate(ops, start=1):
        assert set(op) <= ALLOWED_FIELDS, f"line {number}: {set(op) - ALLOWED_FIELDS}"
        assert op["op"] == "write" and op["title"].strip() and op["type"] in WRITABLE
        assert ("body" in op) != ("article_html" in op), f"line {number}: exactly one of body/article_html"
        assert ("status" in op) == (op["type"] == "task") and op.get("status", "todo") in TASK_STATUSES
        for key in ("valid_from", "valid_until", "due"):
            assert key not in op or INSTANT.match(op[key]), f"line {number}: {key}"
        for link in op.get("links", []):
            assert link["rel"] in REL_CLASSES and REL_CLASSES[link["rel"]] == "memory"
            assert link["href"].startswith("/") and link["href"].endswith(".html")
        assert all(":" in e.strip(":") for e in op.get("entities", []))
        assert "aliases" not in op or number == PERSON_FILE
        assert isinstance(op.get("importance", 5), int) and 1 <= op.get("importance", 5) <= 10
    assert len({op["title"] for op in ops}) == len(ops)
    assert len({op["path"] for op in ops if "path" in op}) == sum("path" in op for op in ops)


def test_every_op_renders_and_validates(ops: list[dict[str, Any]], docs: list[MemoryDocument]) -> None:
    for op, doc in zip(ops, docs, strict=True):
        assert doc.memory_type == op["type"] and doc.title == op["title"]
        if "article_html" in op:
            first_time = re.search(r'<time datetime="([^"]+)"', op["article_html"])
            assert doc.event_at == (first_time.group(1) if first_time else None)
    episodic_with_time = [d for d in docs if d.memory_type == "episodic" and d.event_at]
    assert len(episodic_with_time) >= 8


def _merge_text(doc: MemoryDocument) -> MergeText:
    return MergeText(claim=doc.gist, article=doc.body_text)


def test_near_duplicates_fold_and_controls_are_vetoed(ops: list[dict[str, Any]], docs: list[MemoryDocument]) -> None:
    live = [i for i, op in enumerate(ops) if op["type"] != "task"]
    vectors = FakeEmbedder().embed([docs[i].body_text for i in live])
    cosine = vectors @ vectors.T
    high = {
        (live[a] + 1, live[b] + 1)
        for a, b in itertools.combinations(range(len(live)), 2)
        if cosine[a, b] > NEAR_DUPLICATE_THRESHOLD
    }
    assert high == set(FOLD_PAIRS) | set(VETO_PAIRS)
    for a, b in FOLD_PAIRS:
        assert veto_reasons(_merge_text(docs[a - 1]), _merge_text(docs[b - 1])) == (), (a, b)
    for (a, b), reasons in VETO_PAIRS.items():
        assert veto_reasons(_merge_text(docs[a - 1]), _merge_text(docs[b - 1])) == reasons, (a, b)
    others = cosine.copy()
    np.fill_diagonal(others, 0)
    for a, b in high:
        others[live.index(a - 1), live.index(b - 1)] = others[live.index(b - 1), live.index(a - 1)] = 0
    assert others.max() < 0.80


def test_priya_is_one_person_under_two_names(ops: list[dict[str, Any]]) -> None:
    person = line(ops, PERSON_FILE)
    assert person["type"] == "semantic" and person["path"] == "resources/people/priya-raman.html"
    assert person["entities"] == ["person:Priya Raman"] and person["aliases"] == ["Priya"]
    full = [n for n, op in enumerate(ops, 1) if "person:Priya Raman" in op.get("entities", [])]
    short = [n for n, op in enumerate(ops, 1) if "person:Priya" in op.get("entities", [])]
    assert full == [PERSON_FILE, *PRIYA_FULL] and short == list(PRIYA_SHORT)
    assert lcs_ratio("priya", "priya raman") < REVIEW_RATIO  # only the alias oracle can join them


def test_service_names_spelled_several_ways(ops: list[dict[str, Any]]) -> None:
    names = {e for op in ops if op["type"] != "task" for e in op.get("entities", [])}
    assert {"service:Checkout API", "service:checkout api", "service:checkout-api"} <= names
    assert "service:Checkout API" in line(ops, 11)["entities"]
    assert "service:checkout api" in line(ops, 22)["entities"]
    assert name_key("Checkout API") == name_key("checkout api")
    assert lcs_ratio("checkout-api", "checkout api") >= AUTO_MERGE_RATIO
    assert line(ops, 7)["entities"] == ["service:web-storefront"] and line(ops, 8)["entities"] == ["service:storefront"]
    assert REVIEW_RATIO <= lcs_ratio("web-storefront", "storefront") < AUTO_MERGE_RATIO
    assert lcs_ratio("checkout-api", "payments-api") < REVIEW_RATIO


def test_validity_and_importance_cases(ops: list[dict[str, Any]]) -> None:
    assert line(ops, STALE)["valid_until"] == "2025-06-30T00:00:00Z"
    low, high = line(ops, STALE_LOW), line(ops, STALE_HIGH)
    assert low["valid_until"] < "2026-01-15" and high["valid_until"] < "2026-01-15"
    assert low["importance"] == 1 and high["importance"] == 10
    # never used, written an instant ago: the low one still expires; the high one reprieves on its first use
    assert reprieve_score(low["importance"], 0, 0.0, 0.0) < REPRIEVE_FLOOR
    assert reprieve_score(high["importance"], 1, 0.0, 10_000.0) >= REPRIEVE_FLOOR
    assert reprieve_score(high["importance"], 0, 0.0, 24.0) < REPRIEVE_FLOOR
    anchor = line(ops, HIGH)
    assert anchor["importance"] == 10 and "valid_until" not in anchor


def test_links_resolve_except_the_one_dangling_href(ops: list[dict[str, Any]]) -> None:
    explicit = {"/" + op["path"] for op in ops if "path" in op}
    hrefs = {(n, link["href"]) for n, op in enumerate(ops, 1) for link in op.get("links", [])}
    dangling = {(n, href) for n, href in hrefs if href not in explicit}
    assert dangling == {(DANGLING, "/areas/ops/retired-runbook.html")}
    assert len(hrefs) >= 6


def test_tasks_workspaces_and_tags(ops: list[dict[str, Any]]) -> None:
    tasks = [n for n, op in enumerate(ops, 1) if op["type"] == "task"]
    assert tasks == list(TASKS)
    assert {line(ops, n)["status"] for n in TASKS} == {"todo", "doing", "blocked"}
    assert any("due" in line(ops, n) for n in TASKS)
    workspaces = {op["workspace"] for op in ops if "workspace" in op}
    assert workspaces == {"checkout-v2", "search-relaunch", "pg16-upgrade"}
    assert len({t for op in ops for t in op.get("tags", [])}) >= 8
    assert {op["type"] for op in ops} == WRITABLE


def test_demo_corpus_applies_as_one_commit_with_spec_placement(tmp_path: Any) -> None:
    init_repo(tmp_path)
    repo = GitRepo.discover(tmp_path)
    parsed = parse_op_stream(DEMO_JSONL.read_text(encoding="utf-8"), source=str(DEMO_JSONL))
    before = repo.head_sha()
    result = apply_batch(repo, parsed, now="2026-01-15T12:00:00Z", dedupe=lambda _hash: None)
    assert [r for r in result.results if not r.ok] == []
    head = repo.head_sha()
    assert head is not None and head != before and result.commit_sha == head
    paths = sorted(p for p in repo.tree_blobs(head) if p.endswith(".html"))
    assert len(paths) == len(parsed)
    assert "resources/people/priya-raman.html" in paths
    assert {p for p in paths if p.startswith("areas/ops/")} == {
        "areas/ops/notification-queue-backlog.html",
        "areas/ops/checkout-rollback-2025-11-04.html",
        "areas/ops/checkout-rollback-runbook.html",
        "areas/ops/auth-gateway-cert-outage-2025-07-03.html",
    }
    assert "areas/ops/retired-runbook.html" not in paths
    for ws in ("checkout-v2", "search-relaunch", "pg16-upgrade"):
        assert any(p.startswith(f"projects/{ws}/tasks/") for p in paths)
    assert any(p.startswith("areas/inbox/tasks/") for p in paths)
