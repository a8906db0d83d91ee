"""``sleep review --format markdown``: reading order, detected tasks with evidence, escaping, the size cap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.template import render_memory
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.phases.tasks import Measurement, detected_task_path, detection_key, render_detected_task
from git_memhtml.sleep.presentation.review import review_run
from git_memhtml.sleep.presentation.review_markdown import (
    BODY_BUDGET_BYTES,
    MARKER,
    MAX_BODY_CHARS,
    md_code,
    md_text,
    render_markdown,
)
from tests.forge.forge_helpers import cli, git

RUN = "sleep/2026-03-01"
AT = "2026-03-01T00:00:00Z"
HOSTILE_TITLE = "Deploy <img src=x onerror=alert(1)> @octocat"
HOSTILE_CLAIM = "See [the runbook](https://evil.example/x) and www.evil.example, fixes #12 | cell `code`"
FORBIDDEN = ("<img", "@octocat", "](http", "https://evil", "www.evil", "#12", "<script")


def _memory(title: str, claim: str, now: str = "2026-01-01T00:00:00Z") -> str:
    return render_memory(MemoryDraft(title=title, memory_type="semantic", claim=claim), now=now)


@pytest.fixture
def run_repo(tmp_path: Path) -> GitRepo:
    """main with four memories; ``sleep/2026-03-01`` changes one body, one meta, archives one, files one task."""
    root = tmp_path / "mem"
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    files = {
        "resources/ops/deploy.html": _memory(HOSTILE_TITLE, HOSTILE_CLAIM),
        "resources/ops/meta.html": _memory("Meta only", "The cache TTL is 60 seconds."),
        "resources/ops/old.html": _memory("Old fact", "The old cluster is called blue."),
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "seed")
    git(root, "checkout", "-q", "-b", RUN)
    (root / "resources/ops/deploy.html").write_text(_memory(HOSTILE_TITLE, HOSTILE_CLAIM + " <script>x</script>"))
    (root / "resources/ops/meta.html").write_text(_memory("Meta only", "The cache TTL is 60 seconds.", now=AT))
    (root / "archive/2026/resources/ops").mkdir(parents=True)
    git(root, "mv", "resources/ops/old.html", "archive/2026/resources/ops/old.html")
    title = "Merge @octocat notes <b>now</b>"
    task = detected_task_path(detection_key("dedup-merge", "a b"), title)
    (root / task).parent.mkdir(parents=True, exist_ok=True)
    (root / task).write_text(render_detected_task(
        detector="dedup-merge", run_id=RUN, title=title, claim="Merge [a](https://evil.example) and #12?",
        evidence=Measurement("cosine 0.97 | see www.evil.example/@octocat"), now=AT))
    (root / "index.html").write_text("<!doctype html><title>index</title>\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"night of {HOSTILE_TITLE}", "--trailer", f"Memhtml-Run: {RUN}",
        "--trailer", "Memhtml-Phase: report")  # a run's own commit: sleep verbs act only on those
    git(root, "checkout", "-q", "main")
    return GitRepo.discover(root)


def _review(repo: GitRepo) -> dict[str, Any]:
    db = IndexDB.for_repo(repo)
    try:
        return review_run(repo, db, RUN)
    finally:
        db.close()


def test_body_changed_first_then_tasks_with_evidence(run_repo: GitRepo) -> None:
    body = render_markdown(run_repo, _review(run_repo))
    text = body.text
    assert not body.truncated and text.endswith(MARKER + "\n")
    order = [text.index(s) for s in ("## Sleep run `sleep/2026-03-01`", "**Memories:**", "### Body-changed memories",
                                     "- `resources/ops/deploy.html`", "### Detected tasks (1)", "### Phases",
                                     "### Other changed files")]
    assert order == sorted(order)
    section = text[text.index("### Body-changed"):text.index("### Detected tasks")]
    assert "resources/ops/meta.html" not in section and "old.html" not in section
    assert "1 body-changed" in text and "1 meta-only" in text and "1 archived" in text and "1 created" in text
    assert "1 generated artifacts" in text
    assert "<details><summary>archived (1)</summary>" in text
    assert "- `archive/2026/resources/ops/old.html` (from `resources/ops/old.html`)" in text
    tasks = text[text.index("### Detected tasks"):text.index("### Phases")]
    assert "(dedup\\-merge)" not in tasks and "(dedup-merge)" in tasks  # '-' is escaped only at a line start
    assert "  - Claim: Merge \\[a\\]\\(https:&#8203;//evil.example\\) and \\#&#8203;12?" in tasks
    assert "  - Measured: cosine 0.97 \\| see www&#8203;.evil.example/\\@&#8203;octocat" in tasks
    assert text.count("<details>") == text.count("</details>")


def test_memory_text_cannot_inject_html_links_or_mentions(
    run_repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    text = render_markdown(run_repo, _review(run_repo)).text
    for bad in FORBIDDEN:
        assert bad not in text, bad
    assert "night of Deploy &lt;img src=x onerror=alert\\(1\\)&gt; \\@&#8203;octocat" in text
    # the CLI prints the same body
    code, env = cli(capsys, "-C", str(run_repo.root), "sleep", "review", RUN, "--format", "markdown", "--no-probes")
    assert code == 0 and env["data"]["markdown"] == text and env["data"]["truncated"] is False
    code, env = cli(capsys, "-C", str(run_repo.root), "sleep", "review", RUN, "--format", "markdown")
    with_probes = env["data"]["markdown"]
    assert code == 0 and "### Findability: probes on this memory" in with_probes
    for bad in FORBIDDEN:
        assert bad not in with_probes, bad


@pytest.mark.parametrize(
    "raw",
    ["<a href=x>y</a>", "[x](javascript:alert(1))", "![i](https://t.example/p.png)", "@org/team please", "x\n\n# H1",
     "- item", "12. twelve", "**bold** _em_ ~~s~~", "$x^2$", "<https://auto.example>", "a | b", "http://x.example"],
)
def test_md_text_neutralises(raw: str) -> None:
    out = md_text(raw)
    assert "\n" not in out and "<" not in out and "](" not in out and "://" not in out
    assert "@" not in out or "@&#8203;" in out
    assert not out.startswith(("-", "#", "12.")) and "**" not in out and "|" not in out.replace("\\|", "")


def test_md_code_fences_past_backticks() -> None:
    assert md_code("a`b") == "``a`b``"
    assert md_code("`x`") == "`` `x` ``"
    assert md_code("multi\nline") == "`multi line`"


def test_truncation_keeps_the_top_closes_details_and_says_so(run_repo: GitRepo) -> None:
    review = _review(run_repo)
    full = render_markdown(run_repo, review)
    small = render_markdown(run_repo, review, budget_bytes=len(full.text.encode()) - 200)
    assert small.truncated and len(small.text.encode()) <= len(full.text.encode()) - 200
    assert small.lines_shown < small.lines_total == full.lines_total
    assert f"**Truncated:** {small.lines_shown} of {small.lines_total} lines shown" in small.text
    assert "`git memhtml sleep review sleep/2026-03-01`" in small.text and "sleep-2026-03-01.html" in small.text
    assert small.text.count("<details>") == small.text.count("</details>")
    assert small.text.index("### Body-changed") < small.text.index("**Truncated:**")
    assert small.text.endswith(MARKER + "\n")


def test_a_huge_run_stays_under_the_forge_limit(run_repo: GitRepo) -> None:
    review = _review(run_repo)
    review["files"] = [*review["files"], *({"path": f"resources/bulk/memory-{i:05d}-{'x' * 40}.html",
                                            "classification": "meta-only", "kind": "memory", "fromPath": None}
                                           for i in range(5000))]
    body = render_markdown(run_repo, review)
    assert body.truncated and len(body.text) < MAX_BODY_CHARS and len(body.text.encode()) <= BODY_BUDGET_BYTES
    assert "- `resources/ops/deploy.html`" in body.text and "### Detected tasks (1)" in body.text


def test_forge_ci_example_runs_the_gate_on_sleep_branches() -> None:
    """The workflow in docs/forge-ci.md parses, targets sleep/* branches, and calls only commands that exist."""
    import re

    yaml = pytest.importorskip("yaml")
    import click

    from git_memhtml.cli.main import cli as root

    doc = (Path(__file__).resolve().parents[2] / "docs" / "forge-ci.md").read_text()
    block = re.search(r"```yaml\n(.*?)```", doc, re.S)
    assert block is not None
    flow = yaml.safe_load(block.group(1))
    triggers = flow[True] if True in flow else flow["on"]  # YAML 1.1 reads a bare `on` as a boolean
    assert triggers["push"]["branches"] == ["sleep/**"] and triggers["pull_request"]["branches"] == ["main"]
    job = flow["jobs"]["gate"]
    assert "sleep/" in job["if"]
    scripts = "\n".join(step.get("run", "") for step in job["steps"])
    assert "git memhtml eval discriminate" in scripts and 'git memhtml eval run "$RUN"' in scripts
    assert job["env"]["MEMHTML_EMBED"] == "fake"
    for call in re.findall(r"git memhtml [a-z][a-z -]*[a-z]", scripts):
        command: click.Command = root
        for word in call.split()[2:]:
            if not isinstance(command, click.Group):
                break
            found = command.get_command(click.Context(command), word)
            assert found is not None, f"{call}: no command {word!r}"
            command = found
        assert not isinstance(command, click.Group), f"{call} names a group, not a command"
    assert "git memhtml sleep review" in scripts and "--format markdown" in scripts
