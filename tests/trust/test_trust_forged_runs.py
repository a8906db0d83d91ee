"""Trust rule: no forged run lands (issue 8 item 3, "nothing outside a memory file is touched").

A branch anyone can make, carrying typed ``Memhtml-Run`` / ``Memhtml-Phase: report`` trailers, passes the
resolver; the landing rail (git_memhtml/sleep/landing/rail.py) must refuse it in ``sleep merge`` and ``sleep
rebase`` before anything moves. Rows: each way to forge the branch × each verb → exit 1, refusal
``not-sleep-output``, a message naming the offending path or commit, and main, every ref, the worktree list and the
work tree unchanged. A forge joins by adding a builder to ``FORGES``; a verb by adding to ``VERBS``. A real run of
the demo corpus still merges (its journal with it), and archive moves (sleep's only way to make a memory vanish)
pass the rail.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.demo import DEMO_CORPUS
from git_memhtml.cli.main import main
from git_memhtml.gitrepo.values import TreeChange
from git_memhtml.sleep.engine.journal import parse_journal
from git_memhtml.sleep.engine.runfiles import journal_file
from git_memhtml.sleep.landing.rail import path_violations
from tests.secrets.corpus import CORPUS

_AWS_KEY = next(s.secret for s in CORPUS if s.name == "aws-access-key-id")
RUN = "sleep/2026-12-01-abcdef"
NOW = "2026-12-01T09:00:00Z"
VERBS: dict[str, list[str]] = {"merge": ["--skip-gate"], "rebase": ["--skip-gate"], "pr": []}
"""verb → extra arguments (the gate is skipped so only the rail can refuse)."""


def git(root: Path, *args: str) -> str:
    """The real git binary in ``root``."""
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    """``git memhtml <args> --json`` in-process: (exit code, envelope or None, stderr)."""
    capsys.readouterr()
    code = main([*args, "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def commit(repo: Path, phase: str, *, run: str = RUN, extra: str = "") -> None:
    """Commit everything staged with typed trailers, as a forger would."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m",
        f"memhtml(sleep({phase})): x\n\nMemhtml-Run: {run}\nMemhtml-Phase: {phase}{extra}")


def _memory(repo: Path) -> Path:
    return repo / "areas" / "inbox" / "fact-1.html"


def _copy(repo: Path, name: str) -> Path:
    target = repo / "resources" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(_memory(repo).read_bytes())
    return target


def forge_delete_and_readme(repo: Path) -> str:
    git(repo, "rm", "-q", "areas/inbox/fact-1.html")
    (repo / "README.html").write_text("<p>pwn</p>\n")
    commit(repo, "report")
    return "README.html"


def forge_delete(repo: Path) -> str:
    git(repo, "rm", "-q", "areas/inbox/fact-2.html")
    commit(repo, "report")
    return "areas/inbox/fact-2.html"


def forge_fake_archive(repo: Path) -> str:
    """Deletes one memory and 'archives' another path: not a move of the deleted one."""
    git(repo, "rm", "-q", "areas/inbox/fact-2.html")
    target = repo / "archive" / "2026" / "areas" / "inbox" / "other.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(_memory(repo).read_bytes())
    commit(repo, "report")
    return "areas/inbox/fact-2.html"


def forge_gitattributes(repo: Path) -> str:
    (repo / ".gitattributes").write_text("* filter=evil\n")
    commit(repo, "report")
    return ".gitattributes"


def forge_other_memhtml_file(repo: Path) -> str:
    path = repo / ".memhtml" / "sleep" / "sleep-2026-01-01-000000.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("<p>another run's report</p>\n")
    commit(repo, "report")
    return ".memhtml/sleep/sleep-2026-01-01-000000.html"


def forge_bad_journal_line(repo: Path) -> str:
    """The run's own journal (an allowed path) with one entry and one line that is not an entry."""
    path = repo / journal_file(RUN)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"entityType":"service","kind":"entity-renamed","new":"svc-amber","old":"svc_amber"}\n'
                    '{"kind":"folded","keep":"areas/inbox/fact-1.html","drop":"/etc/passwd","archived":"x"}\n')
    commit(repo, "report")
    return f"{journal_file(RUN)}: is not a run journal"


def forge_dotfile_in_bucket(repo: Path) -> str:
    _copy(repo, ".hidden.html")
    commit(repo, "report")
    return "resources/.hidden.html"


def forge_iframe_memory(repo: Path) -> str:
    text = _memory(repo).read_text().replace("</article>", '<iframe srcdoc="&lt;script&gt;x()&lt;/script&gt;">'
                                             "</iframe>\n</article>")
    (repo / "resources" / "evil.html").write_text(text)
    commit(repo, "report")
    return "resources/evil.html"


def forge_secret_in_memory(repo: Path) -> str:
    """A well-formed memory whose article carries a fake key (tests/secrets/corpus.py): the rail's secret check."""
    text = _memory(repo).read_text().replace("listens on port", f"listens, key {_AWS_KEY}, on port")
    (repo / "resources" / "leak.html").write_text(text)
    commit(repo, "report")
    return "resources/leak.html: carries a detected secret (aws-access-key)"


def forge_symlink_memory(repo: Path) -> str:
    (repo / "resources" / "link.html").symlink_to("../README.html")
    commit(repo, "report")
    return "resources/link.html"


def forge_script_in_listing(repo: Path) -> str:
    listing = repo / "areas" / "inbox" / "index.html"
    listing.write_text("<!doctype html><script>steal()</script>\n")
    commit(repo, "report")
    return "areas/inbox/index.html"


def forge_unknown_phase(repo: Path) -> str:
    _copy(repo, "copy.html")
    commit(repo, "exfiltrate")
    commit(repo, "report")
    return "exfiltrate"


def forge_out_of_order(repo: Path) -> str:
    _copy(repo, "copy.html")
    commit(repo, "integrity")
    commit(repo, "dedup-merge")
    commit(repo, "report")
    return "out of canonical order"


def forge_phase_twice(repo: Path) -> str:
    """A phase that commits once per run, committing twice (only MULTI_COMMIT_PHASES may)."""
    _copy(repo, "copy.html")
    commit(repo, "integrity")
    commit(repo, "integrity")
    commit(repo, "report")
    return "out of canonical order"


def forge_multi_commit_phase_split(repo: Path) -> str:
    """A phase allowed several commits, but not around another phase's."""
    _copy(repo, "copy.html")
    commit(repo, "compress")
    commit(repo, "reprieve")
    commit(repo, "compress")
    commit(repo, "report")
    return "out of canonical order"


def forge_commit_after_report(repo: Path) -> str:
    commit(repo, "report")
    _copy(repo, "copy.html")
    commit(repo, "integrity")
    return "not the report phase"


def forge_two_phases(repo: Path) -> str:
    _copy(repo, "copy.html")
    commit(repo, "report", extra="\nMemhtml-Phase: integrity")
    return "not exactly one known phase"


FORGES: dict[str, Callable[[Path], str]] = {
    "delete-memory-and-rewrite-readme": forge_delete_and_readme,
    "delete-memory": forge_delete,
    "delete-memory-archive-another": forge_fake_archive,
    "gitattributes": forge_gitattributes,
    "other-memhtml-file": forge_other_memhtml_file,
    "journal-with-a-bad-line": forge_bad_journal_line,
    "dotfile-in-bucket": forge_dotfile_in_bucket,
    "memory-validate-refuses": forge_iframe_memory,
    "memory-carries-a-secret": forge_secret_in_memory,
    "symlink-memory": forge_symlink_memory,
    "script-in-listing": forge_script_in_listing,
    "unknown-phase": forge_unknown_phase,
    "phases-out-of-order": forge_out_of_order,
    "single-commit-phase-twice": forge_phase_twice,
    "multi-commit-phase-split": forge_multi_commit_phase_split,
    "commit-after-report": forge_commit_after_report,
    "two-phase-trailers": forge_two_phases,
}
"""label → builder (on a branch checked out from main; returns a text the refusal must name)."""


def snapshot(repo: Path) -> tuple[str, str, str, str]:
    """Every ref, HEAD, the worktree list and the work tree's status."""
    return (git(repo, "for-each-ref", "--format=%(refname) %(objectname)"), git(repo, "rev-parse", "HEAD"),
            git(repo, "worktree", "list", "--porcelain"), git(repo, "status", "--porcelain", "--ignored"))


@pytest.fixture(scope="module")
def two_facts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A memory repository with two facts on main, built once for the module; each row forges on a copy."""
    repo = tmp_path_factory.mktemp("forged") / "memory"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MEMHTML_NOW", NOW)
        assert main(["init", str(repo)]) == 0
        for i in (1, 2):
            assert main(["-C", str(repo), "write", "--type", "semantic", "--title", f"Fact {i}",
                         "--claim", f"The service number {i} listens on port 80{i}."]) == 0
    return repo


@pytest.mark.parametrize("verb", sorted(VERBS))
@pytest.mark.parametrize("label", sorted(FORGES))
def test_a_forged_run_is_refused_before_anything_moves(
    two_facts: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, label: str,
    verb: str,
) -> None:
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    repo = tmp_path / "memory"
    shutil.copytree(two_facts, repo, symlinks=True)
    git(repo, "checkout", "-q", "-b", RUN)
    named = FORGES[label](repo)
    git(repo, "checkout", "-q", "main")
    before = snapshot(repo)
    code, refused, err = cli(capsys, "-C", str(repo), "sleep", verb, RUN, *VERBS[verb])
    assert code == 1, (label, verb, err)
    assert refused["refusal"] == "not-sleep-output", refused
    assert named in refused["error"] and RUN in refused["error"] and refused["hint"]
    assert _AWS_KEY[4:16] not in json.dumps(refused) + err
    assert snapshot(repo) == before


@pytest.mark.slow
def test_a_real_run_of_the_demo_corpus_still_merges(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "memory"
    assert main(["init", str(repo)]) == 0
    assert main(["-C", str(repo), "apply", "--file", str(DEMO_CORPUS)]) == 0
    code, ran, err = cli(capsys, "-C", str(repo), "sleep", "run", "--date", "2026-12-01")
    assert code == 0, err
    run_id = ran["data"]["runId"]
    code, merged, err = cli(capsys, "-C", str(repo), "sleep", "merge", run_id, "--skip-gate")
    assert code == 0 and merged["data"]["merged"], err
    assert git(repo, "rev-parse", "main").strip() == ran["data"]["headSha"]
    landed = parse_journal(git(repo, "show", f"main:{journal_file(run_id)}").encode("utf-8"))
    assert landed is not None and {"folded", "merge-vetoed", "entity-renamed"} <= {e.kind for e in landed}


def change(path: str, *, deleted: bool = False, added: bool = False, mode: int = 0o100644) -> TreeChange:
    """One tree change: a deletion, an addition, or (neither) a modification."""
    return TreeChange(path, None if added else "a" * 40, None if deleted else "b" * 40, None if deleted else mode)


RAIL_ROWS: list[tuple[str, list[TreeChange], int]] = [
    ("archive-move", [change("areas/inbox/a.html", deleted=True),
                      change("archive/2026/areas/inbox/a.html", added=True)], 0),
    ("archive-move-with-ordinal", [change("areas/inbox/a.html", deleted=True),
                                   change("archive/2026/areas/inbox/a-2.html", added=True)], 0),
    ("listings-sitemap-own-record", [change("index.html"), change("areas/index.html"),
                                     change("areas/inbox/index.html"), change("sitemap.xml"),
                                     change(".memhtml/sleep/sleep-2026-12-01-abcdef.html", added=True),
                                     change(".memhtml/sleep/sleep-2026-12-01-abcdef.pending.jsonl", added=True),
                                     change(".memhtml/sleep/sleep-2026-12-01-abcdef.journal.jsonl", added=True),
                                     change(".memhtml/state/access.jsonl")], 0),
    ("one-archive-two-deletions", [change("areas/inbox/a.html", deleted=True),
                                   change("projects/x/a.html", deleted=True),
                                   change("archive/2026/areas/inbox/a.html", added=True)], 1),
    ("another-run-s-journal", [change(".memhtml/sleep/sleep-2026-11-30-000000.journal.jsonl", added=True)], 1),
    ("journal-as-a-symlink", [change(".memhtml/sleep/sleep-2026-12-01-abcdef.journal.jsonl", mode=0o120000)], 1),
    ("archived-memory-deleted", [change("archive/2025/areas/a.html", deleted=True)], 1),
    ("listing-deleted", [change("areas/index.html", deleted=True)], 1),
    ("sitemap-below-root", [change("areas/sitemap.xml", added=True)], 1),
    ("listing-outside-buckets", [change("docs/index.html", added=True)], 1),
    ("executable-is-fine-submodule-is-not", [change("areas/x.html", mode=0o100755),
                                             change("areas/y.html", mode=0o160000)], 1),
]
"""(label, changes, violations expected) for the path rules alone."""


@pytest.mark.parametrize(("label", "changes", "expected"), RAIL_ROWS, ids=[r[0] for r in RAIL_ROWS])
def test_the_path_rules_of_the_rail(label: str, changes: list[TreeChange], expected: int) -> None:
    found = path_violations(RUN, changes)
    assert len(found) == expected, (label, found)


@pytest.mark.slow
def test_a_failed_run_resumed_after_its_report_still_lands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The re-run phase commits after the first report; resume re-runs the sweeps and the report, so the run is a
    second canonical pass ending in a report, and the rail lets it land."""
    import git_memhtml.sleep.engine.run as runner
    from git_memhtml.embed.registry import get_embedder
    from git_memhtml.gitrepo import GitRepo
    from git_memhtml.index.db import IndexDB
    from git_memhtml.sleep.engine.contract import REGISTRY, phase_specs
    from git_memhtml.sleep.engine.env import PhaseEnv, PhaseOutcome
    from git_memhtml.sleep.phases.dedup_merge import DedupMergeCounts
    from git_memhtml.store.edits import archive_file

    monkeypatch.setenv("MEMHTML_NOW", NOW)
    repo = tmp_path / "memory"
    assert main(["init", str(repo)]) == 0
    for i in (1, 2):
        assert main(["-C", str(repo), "write", "--type", "semantic", "--title", f"Fact {i}",
                     "--claim", f"The service number {i} listens on port 80{i}."]) == 0

    def failing(env: PhaseEnv) -> PhaseOutcome:
        raise RuntimeError("the model timed out")

    def archiving(env: PhaseEnv) -> PhaseOutcome:
        assert archive_file(env.repo, "areas/inbox/fact-2.html", at=env.at) is not None
        return PhaseOutcome(DedupMergeCounts(merged=1), subject="archive 1 duplicate")

    main_repo = GitRepo.discover(repo)
    db = IndexDB.for_repo(main_repo)
    try:
        monkeypatch.setitem(REGISTRY, "dedup-merge", replace(phase_specs()["dedup-merge"], body=failing))
        first = runner.run_sleep(main_repo, db, date="2026-12-01", embedder=get_embedder("fake"), clock=lambda: NOW)
        assert first.failed_phases == ["dedup-merge"]
        monkeypatch.setitem(REGISTRY, "dedup-merge", replace(phase_specs()["dedup-merge"], body=archiving))
        resumed = runner.resume_sleep(main_repo, db, first.run_id, embedder=get_embedder("fake"), clock=lambda: NOW)
        assert resumed.failed_phases == []
    finally:
        db.close()
    phases = git(repo, "log", "--reverse", "--format=%(trailers:key=Memhtml-Phase,valueonly)", f"main..{first.run_id}")
    done = phases.split()
    assert done[-1] == "report" and "dedup-merge" in done[done.index("report") + 1:], done
    code, merged, err = cli(capsys, "-C", str(repo), "sleep", "merge", first.run_id, "--skip-gate")
    assert code == 0 and merged["data"]["merged"], err
    assert "archive/2026/areas/inbox/fact-2.html" in git(repo, "ls-tree", "-r", "--name-only", "main")
