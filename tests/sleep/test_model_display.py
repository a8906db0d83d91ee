"""Model use per phase on the report page, ``sleep review`` and ``sleep review --format markdown`` (docs/models.md
§2): calls, tokens, failed calls, budget skips and rejections by rail, only for phases that had a model bound;
with no model the pages are byte for byte what they were."""

from __future__ import annotations

import dataclasses
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.llm.contract import AnswerSchema, ModelRequest
from git_memhtml.llm.scripted import Answer, ScriptedClient
from git_memhtml.sleep.engine.contract import REGISTRY, phase_specs
from git_memhtml.sleep.engine.env import PhaseEnv, PhaseOutcome, PhaseReport
from git_memhtml.sleep.engine.model import PhaseModel
from git_memhtml.sleep.engine.run import ModelBinding, resume_sleep, run_sleep
from git_memhtml.sleep.engine.runfiles import report_path
from git_memhtml.sleep.engine.runs import phase_rows
from git_memhtml.sleep.engine.tokens import request_tokens
from git_memhtml.sleep.phases.edge_typing import EdgeTypingCounts
from git_memhtml.sleep.presentation.model_usage import model_line, rail_name
from git_memhtml.sleep.presentation.report_html import render_report
from git_memhtml.sleep.presentation.review_markdown import render_markdown
from tests.sleep.model_display_inputs import (
    BASE,
    HEAD,
    RUN,
    model_reports,
    off_reports,
    review_of,
    trailer_review_of,
)
from tests.sleep.sleep_corpus_helpers import DATE, git, make_repo, memory


class TypedPairs(AnswerSchema):
    """The test's answer schema: the pairs a model typed."""

    pairs: list[str]


GOLDEN = Path(__file__).parent / "golden"
"""Pages rendered by the code before the model display existed (llm=off lines of model_display_inputs.py)."""


@pytest.fixture()
def repo(tmp_path: Path) -> GitRepo:
    return make_repo(tmp_path, {"resources/notes/a.html": memory("Ann likes tea.")})


def _page(reports: list[PhaseReport]) -> str:
    return render_report(run_id=RUN, branch=RUN, base_sha=BASE, head_sha=HEAD, reports=reports)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)


# --- no model: byte for byte as before ------------------------------------------------------------------------------

def test_the_report_page_without_a_model_is_unchanged() -> None:
    assert _page(off_reports()) == (GOLDEN / "report-llm-off.html").read_text(encoding="utf-8")


def test_the_markdown_review_without_a_model_is_unchanged(repo: GitRepo) -> None:
    assert render_markdown(repo, review_of(off_reports())).text == (
        GOLDEN / "review-llm-off.md").read_text(encoding="utf-8")
    assert render_markdown(repo, trailer_review_of(off_reports())).text == (
        GOLDEN / "review-llm-off-trailers.md").read_text(encoding="utf-8")


# --- with a model ---------------------------------------------------------------------------------------------------

def test_the_report_page_shows_each_bound_phases_model_use() -> None:
    page = _page(model_reports())
    assert "<caption>model use</caption>" in page
    assert ("<tr><td>dedup-merge</td><td>5</td><td>3900</td><td>15000</td><td>1200</td><td>80</td><td>1</td>"
            "<td>2</td><td>2 cut, 1 over cap</td><td>unknown-key 3, veto 1</td></tr>") in page
    assert ("<tr><td>edge-typing</td><td>0</td><td>?</td><td>?</td><td>0</td><td>0</td><td>0</td><td>7</td>"
            "<td>none</td><td>none</td></tr>") in page  # a run from before request sizes were recorded
    assert "<td>task-detection</td><td>1</td><td>?</td><td>?</td><td>&lt;b&gt;1&lt;/b&gt;</td>" in page
    assert "<th>largest request</th><th>request tokens</th>" in page
    assert "<td>fabricated-quote 2</td>" in page
    table = page[page.index("<caption>model use</caption>"):]
    assert "<td>integrity</td>" not in table and "<td>report</td>" not in table  # no model, no row
    parser = _Tags()
    parser.feed(page)
    assert parser.tags <= {"html", "head", "meta", "title", "body", "article", "p", "mark", "dl", "dt", "dd",
                           "details", "summary", "table", "caption", "thead", "tbody", "tr", "th", "td", "code"}


def test_the_markdown_review_shows_each_bound_phases_model_use(repo: GitRepo) -> None:
    text = render_markdown(repo, review_of(model_reports())).text
    section = text[text.index("### Model use"):text.index("### Other changed files")]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "phase |" not in line]
    assert rows == [
        "| dedup-merge | 5 | 3900 | 15000 | 1200 | 80 | 1 | 2 | 2 cut, 1 over cap | unknown-key 3, veto 1 |",
        "| edge-typing | 0 | ? | ? | 0 | 0 | 0 | 7 | none | none |",
        "| task-detection | 1 | ? | ? | &lt;b&gt;1&lt;/b&gt; | 2 | 0 | 0 | none | fabricated-quote 2 |",
    ]
    assert "<b>" not in text and "<img" not in text


def test_a_review_read_from_trailers_still_shows_tokens_and_rails(repo: GitRepo) -> None:
    text = render_markdown(repo, trailer_review_of(model_reports())).text
    assert ("| dedup-merge | ? | 3900 | 15000 | 1200 | 80 | 1 | 2 | 2 cut, 1 over cap | unknown-key 3, veto 1 |"
            in text)  # calls are not in a trailer; sizes are


@pytest.mark.parametrize(("counts", "shown"), [
    ({"inputTokens": 1, "outputTokens": 2, "failedCalls": 0, "budgetSkipped": 0}, True),
    ({"inputTokens": 1, "outputTokens": 2, "failedCalls": 0}, False),  # a phase count that merely shares a name
    ({"pairs": 3}, False),
    ({}, False),
])
def test_a_phase_has_a_row_only_when_its_counts_carry_the_usage_keys(counts: dict[str, object], shown: bool) -> None:
    assert (model_line("p", counts, 0) is not None) is shown


@pytest.mark.parametrize(("key", "name"), [
    ("railUnknownKey", "unknown-key"), ("railVeto", "veto"), ("railFabricatedQuote", "fabricated-quote"),
    ("railRoleGuard", "role-guard"),
])
def test_rail_keys_read_back_as_rail_names(key: str, name: str) -> None:
    assert rail_name(key) == name


# --- a real run: the committed page and both reviews ----------------------------------------------------------------

def _review(root: Path, *args: str) -> str:
    proc = subprocess.run(["git-memhtml", "sleep", "review", *args, "--no-probes"], cwd=root, capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.slow
def test_a_run_with_a_model_bound_shows_its_model_use_everywhere(repo: GitRepo) -> None:
    db = IndexDB.for_repo(repo)
    try:
        report = run_sleep(repo, db, date=DATE, embedder=FakeEmbedder(dim=256), clock=lambda: f"{DATE}T09:00:00Z",
                           model=ModelBinding(ScriptedClient({}), max_calls=0))
    finally:
        db.close()
    bound = [p.phase for p in report.phases if "inputTokens" in p.counts]
    assert "compress" in bound and "integrity" not in bound
    page = (repo.read_path_at(report.run_id, report_path(report.run_id)) or b"").decode()
    assert "<caption>model use</caption>" in page
    assert ("<tr><td>compress</td><td>0</td><td>0</td><td>0</td><td>0</td><td>0</td><td>0</td><td>0</td>"
            "<td>none</td><td>none</td></tr>") in page
    text = _review(repo.root, report.run_id)
    header = next(line for line in text.splitlines() if line.startswith("phase") and "input tokens" in line)
    assert header.split("  ")[0] == "phase"
    assert any(line.split()[:2] == ["compress", "0"] for line in text.splitlines())
    markdown = _review(repo.root, report.run_id, "--format", "markdown")
    assert "### Model use" in markdown and "| compress | 0 | 0 | 0 | 0 | 0 | 0 | 0 | none | none |" in markdown


@pytest.mark.slow
def test_a_run_without_a_model_shows_no_model_use(repo: GitRepo) -> None:
    db = IndexDB.for_repo(repo)
    try:
        report = run_sleep(repo, db, date=DATE, embedder=FakeEmbedder(dim=256), clock=lambda: f"{DATE}T09:00:00Z")
    finally:
        db.close()
    assert not any("inputTokens" in p.counts for p in report.phases)
    page = (repo.read_path_at(report.run_id, report_path(report.run_id)) or b"").decode()
    assert "model use" not in page
    assert "input tokens" not in _review(repo.root, report.run_id)
    assert "Model use" not in _review(repo.root, report.run_id, "--format", "markdown")


@pytest.mark.slow
def test_the_text_review_escapes_control_characters_in_subjects(repo: GitRepo) -> None:
    db = IndexDB.for_repo(repo)
    try:
        report = run_sleep(repo, db, date=DATE, embedder=FakeEmbedder(dim=256), clock=lambda: f"{DATE}T09:00:00Z")
    finally:
        db.close()
    folder = repo.root.parent / "amend"
    git(repo.root, "worktree", "add", "-q", str(folder), report.run_id)
    message = git(folder, "log", "-1", "--format=%B")
    subject, rest = message.split("\n", 1)
    git(folder, "commit", "-q", "--amend", "-m", subject + " \x1b[2J\x1b]0;owned\x07", "-m", rest.strip())
    git(repo.root, "worktree", "remove", str(folder))
    text = _review(repo.root, report.run_id)
    assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b[2J\\x1b]0;owned\\x07" in text


@pytest.mark.slow
@pytest.mark.parametrize("counts", ["[1, 2]", "5", '"text"', "[" * 50_000 + "]" * 50_000],
                         ids=["list", "number", "string", "deep"])
def test_a_review_survives_a_trailer_whose_counts_are_not_an_object(repo: GitRepo, counts: str) -> None:
    db = IndexDB.for_repo(repo)
    try:
        report = run_sleep(repo, db, date=DATE, embedder=FakeEmbedder(dim=256), clock=lambda: f"{DATE}T09:00:00Z",
                           model=ModelBinding(ScriptedClient({})))
        db.execute("DELETE FROM state.sleep_phases WHERE run_id = ?", (report.run_id,))  # a teammate's run
    finally:
        db.close()
    folder = repo.root.parent / "amend"
    git(repo.root, "worktree", "add", "-q", str(folder), report.run_id)
    message = git(folder, "log", "-1", "--format=%B")
    lines = [f"Memhtml-Counts: {counts}" if line.startswith("Memhtml-Counts:") else line
             for line in message.splitlines()]
    git(folder, "commit", "-q", "--amend", "-m", "\n".join(lines))
    git(repo.root, "worktree", "remove", str(folder))
    assert "report" in _review(repo.root, report.run_id)
    markdown = _review(repo.root, report.run_id, "--format", "markdown")
    assert "| 4 | report | ok |" in markdown and "report=" not in markdown  # the report's counts read as none


@pytest.mark.slow
def test_a_resumed_run_still_shows_a_done_phases_calls_tokens_and_rails(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """edge-typing made two calls and refused one proposal, and committed; dedup-merge failed; the resume re-runs
    dedup-merge only, and the page, the state row and both reviews still show edge-typing's model use."""
    real_dedup = phase_specs()["dedup-merge"]
    real_edges = phase_specs()["edge-typing"]

    def failing(env: PhaseEnv) -> PhaseOutcome:
        raise RuntimeError("the model timed out")

    def edges(env: PhaseEnv) -> PhaseOutcome:
        model = PhaseModel.for_phase(env, "edge-typing")
        request = ModelRequest(TypedPairs, "Type the pairs.", "pairs")
        assert model.call(request) is not None and model.call(request) is not None
        model.reject("unknown-key", {"key": "m7"})
        (env.repo.root / "areas" / "inbox").mkdir(parents=True, exist_ok=True)
        (env.repo.root / "areas/inbox/typed.html").write_text(memory("A typed edge."), encoding="utf-8")
        env.repo.stage(["areas/inbox/typed.html"])
        return PhaseOutcome(EdgeTypingCounts(candidates=2, judged=2), subject="type edges", model=model.usage())

    client = ScriptedClient({"TypedPairs": [Answer({"pairs": []}, input_tokens=40, output_tokens=4)]})
    db = IndexDB.for_repo(repo)
    try:
        monkeypatch.setitem(REGISTRY, "dedup-merge", dataclasses.replace(real_dedup, body=failing))
        monkeypatch.setitem(REGISTRY, "edge-typing", dataclasses.replace(real_edges, body=edges))
        first = run_sleep(repo, db, date=DATE, embedder=FakeEmbedder(dim=256), clock=lambda: f"{DATE}T09:00:00Z",
                          model=ModelBinding(client))
        assert first.failed_phases == ["dedup-merge"]
        monkeypatch.setitem(REGISTRY, "dedup-merge", real_dedup)
        resumed = resume_sleep(repo, db, first.run_id, embedder=FakeEmbedder(dim=256),
                               clock=lambda: f"{DATE}T10:00:00Z", model=ModelBinding(client))
        rows = {r.phase: r for r in phase_rows(db, first.run_id)}
    finally:
        db.close()
    typed = [r for r in client.requests if r.schema_name == "TypedPairs"]
    assert resumed.failed_phases == [] and len(typed) == 2  # the done phase asked nothing again
    line = next(p for p in resumed.phases if p.phase == "edge-typing")
    assert line.status == "skipped" and line.llm_calls == 2 and rows["edge-typing"].llm_calls == 2
    page = (repo.read_path_at(first.run_id, report_path(first.run_id)) or b"").decode()
    size = request_tokens("Type the pairs.", "pairs")
    assert (f"<tr><td>edge-typing</td><td>2</td><td>{size}</td><td>{2 * size}</td><td>80</td><td>8</td><td>0</td>"
            "<td>0</td><td>none</td><td>unknown-key 1</td></tr>") in page
    assert f"| edge-typing | 2 | {size} | {2 * size} | 80 | 8 | 0 | 0 | none | unknown-key 1 |" in _review(
        repo.root, first.run_id, "--format", "markdown")
    text = _review(repo.root, first.run_id)  # `sleep review`'s own table: the sizes counted before sending
    header = next(line for line in text.splitlines() if line.startswith("phase") and "input tokens" in line)
    assert "largest request" in header and "request tokens" in header and "cut to fit" in header
    assert any(line.split()[:6] == ["edge-typing", "2", str(size), str(2 * size), "80", "8"]
               for line in text.splitlines())
