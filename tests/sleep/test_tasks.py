"""Detected tasks: key is the path, refresh, dismissal (a machine close is none), evidence, frame refusal, budget
cap."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from git_memhtml.document.editors import get_meta, get_metas
from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.sleep.phases.tasks import (
    MACHINE_CLOSED_TAG,
    Measurement,
    Quote,
    detected_task_path,
    detection_key,
    mint_detected_task,
    open_detections,
)
from git_memhtml.store import edits
from tests.sleep.sleep_corpus_helpers import AT, commit_and_reindex, git, make_env, make_repo, memory, tree_files

SOURCE = "areas/inbox/source.html"


def _env(tmp_path: Path, **kw: bool) -> PhaseEnv:
    files = {SOURCE: memory("We promised to ship the exporter.", body=["Ana will   send the report by friday."])}
    return make_env(make_repo(tmp_path, files), **kw)


def _mint(env: PhaseEnv, finding: str, claim: str | None = None, evidence: Measurement | Quote | None = None) -> str:
    return mint_detected_task(
        env, "test-detector", finding, title=f"Check {finding}", claim=claim or f"check: {finding} now.",
        evidence=evidence or Measurement("ratio 0.80"),
    ).result


def test_key_is_normalised_digest_and_path_is_capped() -> None:
    key = detection_key("Dedup-Merge", "  A   b ")
    assert key == detection_key("dedup-merge", "a b") and len(key) == 4 + 12
    path = detected_task_path(key, "x" * 200)
    stem = path.rsplit("/", 1)[1][: -len(".html")]
    assert path.startswith(f"areas/inbox/tasks/{key}-") and len(stem) <= 80
    assert detected_task_path(key, "!!!").endswith(f"{key}-untitled.html")


def test_mint_then_refresh_without_budget(tmp_path: Path) -> None:
    env = _env(tmp_path)
    assert _mint(env, "alpha") == "minted"
    assert env.services.budget.remaining == 9
    [task] = open_detections(env.repo, "test-detector")
    html = (env.repo.root / task.path).read_text()
    assert get_metas(html, "tag") == ["detected", "test-detector"] and get_meta(html, "author") == "agent:sleep"
    commit_and_reindex(env)
    env = replace(env, at="2026-03-11T00:00:00Z")
    assert _mint(env, "alpha") == "refreshed"
    assert env.services.budget.remaining == 9
    assert get_meta((env.repo.root / task.path).read_text(), "updated") == "2026-03-11T00:00:00Z"
    assert len(open_detections(env.repo, "test-detector")) == 1


def test_human_dismissal_in_archive_refuses_the_key(tmp_path: Path) -> None:
    env = _env(tmp_path)
    _mint(env, "alpha")
    [task] = open_detections(env.repo, "test-detector")
    edits.stamp_file(env.repo, task.path, [edits.set_meta("task-status", "done")])
    edits.archive_file(env.repo, task.path, at="2024-05-01T00:00:00Z")
    assert _mint(env, "alpha") == "dismissed"


def test_machine_closed_task_is_not_a_dismissal(tmp_path: Path) -> None:
    env = _env(tmp_path)
    _mint(env, "alpha")
    _mint(env, "beta")
    [alpha] = [t for t in open_detections(env.repo, "test-detector") if "alpha" in t.path]
    edits.stamp_file(env.repo, alpha.path, [edits.set_meta("task-status", "done"), edits.set_meta("updated", AT),
                                            edits.add_meta("tag", MACHINE_CLOSED_TAG)])  # as a machine sweep closes
    edits.archive_file(env.repo, alpha.path, at=AT)
    archived = env.repo.root / ("archive/2026/" + alpha.path)
    html = archived.read_text()
    assert get_meta(html, "task-status") == "done" and "machine-closed" in get_metas(html, "tag")
    assert [t.key for t in open_detections(env.repo, "test-detector")] == [detection_key("test-detector", "beta")]
    assert _mint(env, "alpha") == "minted"  # a machine close does not block a re-detection


def test_quote_evidence_is_verified_against_the_file(tmp_path: Path) -> None:
    env = _env(tmp_path)
    good = Quote("Ana will send the report by friday.", SOURCE)
    bad = Quote("Ana will send the report by monday.", SOURCE)
    assert _mint(env, "q1", evidence=bad) == "unverified"
    assert _mint(env, "q1", evidence=Measurement("   ")) == "unverified"
    assert _mint(env, "q1", evidence=good) == "minted"
    [task] = open_detections(env.repo, "test-detector")
    assert 'cite="/areas/inbox/source.html"' in (env.repo.root / task.path).read_text()


def test_same_frame_as_an_open_detection_is_refused(tmp_path: Path) -> None:
    env = _env(tmp_path)
    assert _mint(env, "one", claim="the owner of checkout-api is alice") == "minted"
    assert _mint(env, "two", claim="the owner of checkout-api is bob") == "framed"


def test_budget_caps_and_counts_overflow(tmp_path: Path) -> None:
    env = _env(tmp_path)
    results = [_mint(env, f"finding number {i}", claim=f"check finding {i}") for i in range(12)]
    assert results.count("minted") == 10 and results.count("capped") == 2
    assert env.services.budget.remaining == 0 and env.services.budget.overflow == 2


def test_dry_run_mints_nothing_on_disk(tmp_path: Path) -> None:
    env = _env(tmp_path, dry_run=True)
    before = tree_files(env.repo)
    assert _mint(env, "alpha") == "minted"
    assert tree_files(env.repo) == before
    assert git(env.repo.root, "status", "--porcelain") == ""
    assert AT.startswith(env.date)
