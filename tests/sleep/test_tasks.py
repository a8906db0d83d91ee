"""Detected tasks: key is the path, refresh, dismissal (a machine close is none), evidence, frame refusal, budget
cap."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from git_memhtml.document.editors import get_meta, get_metas
from git_memhtml.document.parse import parse_memory
from git_memhtml.sleep.engine.contract import REVIEW_SHARE, task_class
from git_memhtml.sleep.engine.env import DetectionBudget, PhaseEnv
from git_memhtml.sleep.phases import task_detection, trace_commitments
from git_memhtml.sleep.phases.tasks import (
    MACHINE_CLOSED_TAG,
    Measurement,
    MintResult,
    OpenDetection,
    Quote,
    TaskTally,
    detected_task_path,
    detection_key,
    evidence_verified,
    mint_detected_task,
    open_detections,
    sweep_detections,
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
    assert env.services.budget.remaining["review"] == 9
    [task] = open_detections(env.repo, "test-detector")
    html = (env.repo.root / task.path).read_text()
    assert get_metas(html, "tag") == ["detected", "test-detector"] and get_meta(html, "author") == "agent:sleep"
    commit_and_reindex(env)
    env = replace(env, at="2026-03-11T00:00:00Z")
    assert _mint(env, "alpha") == "refreshed"
    assert env.services.budget.remaining["review"] == 9
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
    """A review detector opens at most its share of the review ten; open work, at most the open-work ten."""
    env = _env(tmp_path)
    results = [_mint(env, f"finding number {i}", claim=f"check finding {i}") for i in range(12)]
    assert results.count("minted") == REVIEW_SHARE == 5 and results.count("capped") == 7
    assert env.services.budget.remaining["review"] == 5 and env.services.budget.overflow["review"] == 7
    opened = [mint_detected_task(env, "task-detection", f"{SOURCE} Ana will send the report by friday.",
                                 title="Send the report", claim="Ana will send the report by friday.",
                                 evidence=Quote("Ana will send the report by friday.", SOURCE)).result]
    opened += [mint_detected_task(env, "trace-commitment", f"promise {i}", title=f"Promise {i}",
                                  claim=f"I will ship part {i}.", evidence=Measurement("said in a session")).result
               for i in range(11)]
    assert opened.count("minted") == 10 and opened.count("capped") == 2
    assert env.services.budget.overflow == {"open-work": 2, "review": 7}


def test_dry_run_mints_nothing_on_disk(tmp_path: Path) -> None:
    env = _env(tmp_path, dry_run=True)
    before = tree_files(env.repo)
    assert _mint(env, "alpha") == "minted"
    assert tree_files(env.repo) == before
    assert git(env.repo.root, "status", "--porcelain") == ""
    assert AT.startswith(env.date)


# ----------------------------------------------------------------- the shared rules, audited for every detector

DETECTORS: list[tuple[str, str, Measurement | Quote]] = [
    # detector, finding, evidence of the kind that detector files
    ("dedup-merge", "areas/inbox/a.html areas/inbox/b.html", Measurement("cosine 0.880 over the 0.86 floor")),
    ("entity-resolution", "person ana ana lima", Measurement("5 and 2 claimants, similarity 0.91")),
    ("edge-typing", "contradicts areas/inbox/a.html areas/inbox/b.html", Measurement("detection 2 of 2")),
    ("task-detection", f"{SOURCE} Ana will send the report by friday.", Quote("Ana will send the report by friday.",
                                                                              SOURCE)),
]
DETECTOR_IDS = [row[0] for row in DETECTORS]


def _file(env: PhaseEnv, detector: str, finding: str, evidence: Measurement | Quote) -> MintResult:
    return mint_detected_task(env, detector, finding, title=f"Look at {finding}", claim=f"check: {finding} now.",
                              evidence=evidence).result


@pytest.mark.parametrize(("detector", "finding", "evidence"), DETECTORS, ids=DETECTOR_IDS)
def test_every_detector_files_the_same_shape(tmp_path: Path, detector: str, finding: str,
                                             evidence: Measurement | Quote) -> None:
    env = _env(tmp_path)
    assert _file(env, detector, finding, evidence) == "minted"
    [task] = open_detections(env.repo, detector)
    assert re.fullmatch(r"areas/inbox/tasks/det-[0-9a-f]{12}-[a-z0-9-]+\.html", task.path)
    assert task.key == detection_key(detector, finding) and task.owned
    html = (env.repo.root / task.path).read_text()
    assert get_metas(html, "tag") == ["detected", detector] and get_meta(html, "author") == "agent:sleep"
    assert _file(env, detector, finding, Quote("Not a sentence of the file.", SOURCE)) == "refreshed"


@pytest.mark.parametrize(("detector", "finding", "evidence"), DETECTORS, ids=DETECTOR_IDS)
def test_every_detector_refuses_evidence_that_does_not_verify(tmp_path: Path, detector: str, finding: str,
                                                              evidence: Measurement | Quote) -> None:
    env = _env(tmp_path)
    bad: Measurement | Quote = Measurement(" \n ") if isinstance(evidence, Measurement) else Quote(
        "Ana will send the report by monday.", SOURCE)
    assert _file(env, detector, finding, bad) == "unverified"
    assert open_detections(env.repo, detector) == [] and git(env.repo.root, "status", "--porcelain") == ""


def test_review_tasks_share_one_ten_and_open_work_has_its_own(tmp_path: Path) -> None:
    """The three review detectors spend one ten between them, in order, each at most its share; the commitment
    filed after them is minted (docs/tasks.md §7 "Two budgets"), and open work is refused past its own ten."""
    env = _env(tmp_path)
    results = [_file(env, detector, f"{finding} {i}", evidence)
               for i in range(3) for detector, finding, evidence in DETECTORS if detector != "task-detection"]
    results += [_file(env, "dedup-merge", f"late pair {i}", Measurement("cosine 0.9")) for i in range(2)]
    assert results.count("minted") == 10 and results.count("capped") == 1
    assert _file(env, "task-detection", DETECTORS[3][1], DETECTORS[3][2]) == "minted"
    assert env.services.budget.overflow == {"open-work": 0, "review": 1}
    assert sum(len(open_detections(env.repo, d)) for d in DETECTOR_IDS) == 11
    opened = [_file(env, "trace-commitment", f"promise {i}", Measurement("said in a session")) for i in range(10)]
    assert opened.count("minted") == 9 and opened.count("capped") == 1
    assert env.services.budget.remaining == {"open-work": 0, "review": 0}
    assert env.services.budget.overflow == {"open-work": 1, "review": 1}


def test_one_kind_of_review_never_takes_the_whole_ten(tmp_path: Path) -> None:
    """Seven vetoed folds open five review tasks; the contradictions and name pairs after them still get theirs."""
    env = _env(tmp_path)
    folds = [_file(env, "dedup-merge", f"pair {i}", Measurement("cosine 0.9")) for i in range(7)]
    names = [_file(env, "entity-resolution", f"names {i}", Measurement("similarity 0.9")) for i in range(2)]
    edges = [_file(env, "edge-typing", f"contradicts {i}", Measurement("detection 1 of 2")) for i in range(3)]
    assert (folds.count("minted"), names.count("minted"), edges.count("minted")) == (REVIEW_SHARE, 2, 3)
    assert env.services.budget.remaining["review"] == 0 and env.services.budget.overflow["review"] == 2


def test_a_resume_counts_what_each_detector_opened_before_the_kill() -> None:
    """``DetectionBudget.spend`` (fed by ``run.tasks_added``) lowers the class and the detector's share alike."""
    budget = DetectionBudget()
    budget.spend({"dedup-merge": 5, "edge-typing": 4, "task-detection": 9})
    assert budget.remaining == {"open-work": 1, "review": 1}
    assert not budget.admits("dedup-merge")  # its share is spent
    assert budget.admits("edge-typing")
    budget.take("edge-typing")
    assert not budget.admits("edge-typing") and not budget.admits("entity-resolution")  # the review ten is spent
    assert budget.admits("trace-commitment")
    assert budget.overflow == {"open-work": 0, "review": 3}


def test_every_detector_has_a_class() -> None:
    """The phases' own detector names are the ones the budget classes as open work."""
    assert task_class(task_detection.PHASE) == task_class(trace_commitments.DETECTOR) == "open-work"
    for detector in ("dedup-merge", "entity-resolution", "edge-typing", "test-detector"):
        assert task_class(detector) == "review"


@pytest.mark.parametrize(("detector", "finding", "evidence"), DETECTORS, ids=DETECTOR_IDS)
@pytest.mark.parametrize("how", ["done-in-place", "done-archived", "archived-not-done"])
def test_no_detector_reopens_what_a_person_closed(tmp_path: Path, detector: str, finding: str,
                                                  evidence: Measurement | Quote, how: str) -> None:
    env = _env(tmp_path)
    _file(env, detector, finding, evidence)
    [task] = open_detections(env.repo, detector)
    commit_and_reindex(env)
    if how != "archived-not-done":
        edits.stamp_file(env.repo, task.path, [edits.set_meta("task-status", "done")])
    if how != "done-in-place":
        edits.archive_file(env.repo, task.path, at="2019-06-01T00:00:00Z")  # seven years back
    commit_and_reindex(env)
    assert _file(env, detector, finding, evidence) == "dismissed"
    assert git(env.repo.root, "status", "--porcelain") == ""


def test_a_dismissal_older_than_ten_years_is_forgotten(tmp_path: Path) -> None:
    env = _env(tmp_path)
    _mint(env, "alpha")
    [task] = open_detections(env.repo, "test-detector")
    edits.archive_file(env.repo, task.path, at="2016-06-01T00:00:00Z")  # 2016 is outside 2017..2026
    assert _mint(env, "alpha") == "minted"


def _sweep_night(env: PhaseEnv, *, judged: bool = True,
                 within: Callable[[OpenDetection], bool] | None = None) -> tuple[list[str], TaskTally]:
    tally = TaskTally()
    return sweep_detections(env, "test-detector", tally, judged=judged, within=within), tally


def test_the_sweep_needs_a_judged_night_and_spares_what_lies_outside_the_judged_set(tmp_path: Path) -> None:
    env = _env(tmp_path)
    _mint(env, "alpha")
    _mint(env, "beta", evidence=Quote("We promised to ship the exporter.", SOURCE))
    commit_and_reindex(env)
    assert _sweep_night(env, judged=False) == ([], TaskTally())
    closed, _ = _sweep_night(env, within=lambda item: item.sources == (SOURCE,))
    assert len(closed) == 1 and [t.sources for t in open_detections(env.repo, "test-detector")] == [()]


HUMAN_EDITS: list[tuple[str, Callable[[str], str]]] = [
    ("adds-a-note", lambda html: html.replace("</article>", "<p>Asked Ana, she needs a week.</p>\n</article>")),
    ("rewords-the-claim", lambda html: html.replace("check: alpha now.", "check: alpha tomorrow.")),
    ("takes-it", lambda html: edits.apply_edits(html, [edits.set_meta("task-status", "blocked")])),
    ("signs-it", lambda html: edits.apply_edits(html, [edits.set_meta("author", "human:ines")])),
    ("links-it", lambda html: edits.apply_edits(html, [edits.link("relates_to", "/" + SOURCE)])),
    ("adds-an-entity", lambda html: edits.apply_edits(html, [edits.add_meta("entity", "person:Ana")])),
    ("adds-an-attribute", lambda html: html.replace("<mark>", '<mark title="mine">')),
    ("wraps-a-word", lambda html: html.replace("check: alpha", "check: <em>alpha</em>")),
]


@pytest.mark.parametrize(("name", "change"), HUMAN_EDITS, ids=[row[0] for row in HUMAN_EDITS])
def test_a_task_a_person_edited_is_held_open_by_the_sweep(tmp_path: Path, name: str,
                                                          change: Callable[[str], str]) -> None:
    env = _env(tmp_path)
    _mint(env, "alpha")
    [task] = open_detections(env.repo, "test-detector")
    commit_and_reindex(env)
    env = replace(env, at="2026-03-11T00:00:00Z")
    assert _mint(env, "alpha") == "refreshed"  # a machine refresh keeps the task the machine's
    assert open_detections(env.repo, "test-detector")[0].owned
    target = env.repo.root / task.path
    target.write_text(change(target.read_text()))
    parse_memory(target.read_bytes())  # the edit is a valid file
    assert not open_detections(env.repo, "test-detector")[0].owned
    closed, tally = _sweep_night(env)
    assert closed == [] and tally.held == 1 and target.is_file()


def test_a_quote_is_matched_after_nfc_and_never_through_a_symlink(tmp_path: Path) -> None:
    files = {SOURCE: memory("We promised to ship the exporter.", body=["Zoë will review the café menu."])}
    env = make_env(make_repo(tmp_path, files))
    decomposed = unicodedata.normalize("NFD", "Zoë will review the café menu.")
    assert decomposed != "Zoë will review the café menu."
    assert evidence_verified(env.repo, Quote(decomposed, SOURCE))
    assert evidence_verified(env.repo, Quote("Zoë will\n review   the café menu.", SOURCE))
    assert not evidence_verified(env.repo, Quote("zoë will review the café menu.", SOURCE))  # case is kept
    (env.repo.root / "areas/inbox/link.html").symlink_to(env.repo.root / SOURCE)
    assert not evidence_verified(env.repo, Quote("Zoë will review the café menu.", "areas/inbox/link.html"))
    assert not evidence_verified(env.repo, Quote("Zoë will review the café menu.", "areas/inbox/none.html"))


def test_a_quote_task_whose_citation_a_person_changed_is_theirs(tmp_path: Path) -> None:
    env = _env(tmp_path)
    _mint(env, "alpha", evidence=Quote("Ana will send the report by friday.", SOURCE))
    [task] = open_detections(env.repo, "test-detector")
    assert task.owned and task.sources == (SOURCE,)
    html = (env.repo.root / task.path).read_text()
    assert f'Evidence from /{SOURCE}: <q cite="/{SOURCE}">Ana will send the report by friday.</q>' in html
    (env.repo.root / task.path).write_text(html.replace(f'cite="/{SOURCE}"', 'cite="/areas/inbox/other.html"'))
    [edited] = open_detections(env.repo, "test-detector")
    assert edited.sources == ("areas/inbox/other.html",) and not edited.owned
