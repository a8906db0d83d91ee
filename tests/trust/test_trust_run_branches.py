"""Trust rule: a sleep verb names a finished run, or it is refused (issue 8 item 3).

Every verb × every name that is not a finished run the verb accepts → exit 1 or 2, a message naming the branch,
and every ref, ``HEAD``, the worktree list and the work tree byte for byte unchanged. Rows are data: a new verb
joins by adding an entry to ``VERBS`` (and, if it accepts some unfinished state, to ``ACCEPTS``); a new hostile
name joins by adding a case builder to ``CASES``.

The cases are real: a feature branch with commits, a hand-made ``sleep/2026-01-01`` branch without trailers,
``main``, a tag, a name nothing has, ``sleep/../main``, a run a live process is executing (a forked child blocked
between two phases), a run killed with SIGKILL, and a run whose dedup-merge phase raised.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.main import main
from git_memhtml.embed.registry import get_embedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.engine.env import PhaseReport
from git_memhtml.sleep.engine.run import run_sleep
from tests.treewalk import work_tree_paths
from tests.trust.run_helpers import killed_mid_phase, wait_for_ready

DATE = "2026-02-01"
NOW = "2026-02-01T09:00:00Z"
VERBS: dict[str, list[str]] = {
    "merge": ["--skip-gate"],
    "abort": [],
    "resume": [],
    "review": [],
    "pr": ["--remote", "origin"],
    "rebase": ["--skip-gate"],
}
"""verb → extra arguments (the gate is skipped so a wrongly accepted row would act, not stall on the gate)."""

COMMANDS: dict[str, list[str]] = {verb: ["sleep", verb] for verb in VERBS}
"""verb → the command words before the run name; a verb outside ``sleep`` joins here (issue 10: ``eval run``)."""
VERBS["eval-run"] = []
COMMANDS["eval-run"] = ["eval", "run"]

ACCEPTS: dict[str, set[str]] = {
    "interrupted": {"resume", "abort"},
    "failed": {"review", "resume", "abort", "eval-run"},
}
"""Cases some verbs accept (an unfinished run is what resume and abort are for; review describes a failed run)."""


def git(root: Path, *args: str) -> str:
    """The real git binary in ``root``."""
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def cli(*args: str) -> int:
    """``git memhtml <args>`` in-process; returns the exit code."""
    return main(list(args))


def memory_repo(tmp_path: Path) -> Path:
    """``git memhtml init`` plus three memories, and a bare ``origin``."""
    repo = tmp_path / "memory"
    assert cli("init", str(repo)) == 0
    for i in (1, 2, 3):
        assert cli("-C", str(repo), "write", "--type", "semantic", "--title", f"Fact {i}",
                   "--claim", f"The service number {i} listens on port 80{i}.") == 0
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    return repo


@dataclass
class Case:
    """A repository and the name handed to every verb; ``child`` is a live process to end afterwards."""

    repo: Path
    name: str
    child: Any = None
    cleanup: list[Callable[[], None]] = field(default_factory=list)


def _feature(repo: Path) -> str:
    git(repo, "switch", "-q", "-c", "feature/notes")
    (repo / "areas" / "inbox").mkdir(parents=True, exist_ok=True)
    (repo / "areas" / "inbox" / "draft.txt").write_text("unmerged work\n")
    git(repo, "add", "areas/inbox/draft.txt")
    git(repo, "commit", "-q", "-m", "unmerged work on a feature branch")
    git(repo, "switch", "-q", "main")
    return "feature/notes"


def _handmade(repo: Path) -> str:
    git(repo, "switch", "-q", "-c", "sleep/2026-01-01")
    (repo / "notes.txt").write_text("looks like a run, is not one\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-q", "-m", "memhtml(sleep(report)): record run sleep/2026-01-01")
    git(repo, "switch", "-q", "main")
    return "sleep/2026-01-01"


def _tag(repo: Path) -> str:
    git(repo, "tag", "v1", "main~1")
    return "v1"


def _blocking_run(repo: str, ready: str, release: str) -> None:
    """Child: a real sleep run that stops after confidence-decay until ``release`` exists."""
    os.environ["MEMHTML_EMBED"] = "fake"
    main_repo = GitRepo.discover(repo)
    db = IndexDB.for_repo(main_repo)

    def after(report: PhaseReport) -> None:
        if report.phase == "confidence-decay":
            Path(ready).write_text(str(os.getpid()))
            while not Path(release).exists():
                time.sleep(0.05)

    run_sleep(main_repo, db, date=DATE, embedder=get_embedder("fake"), clock=lambda: NOW, after_phase=after)


def run_branches(repo: Path) -> list[str]:
    """The run branches (``refs/heads/sleep/*``)."""
    return git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/sleep/").split()


def make_running(repo: Path, case: Case) -> str:
    """Start a real run in a child process and wait until it is between two phases; return its id."""
    ready, release = repo.parent / "ready", repo.parent / "release"
    child = multiprocessing.get_context("fork").Process(target=_blocking_run, args=(str(repo), str(ready),
                                                                                     str(release)))
    child.start()
    wait_for_ready(child, ready, "confidence-decay")
    case.child = child

    def stop() -> None:
        child.kill()
        child.join(30)

    case.cleanup.append(stop)
    [run_id] = run_branches(repo)
    return run_id


def make_interrupted(repo: Path) -> str:
    """A run SIGKILLed mid-phase; return its id."""
    child = multiprocessing.get_context("fork").Process(target=killed_mid_phase, args=(str(repo),))
    child.start()
    child.join(120)
    assert child.exitcode == -signal.SIGKILL
    [run_id] = run_branches(repo)
    return run_id


def make_failed(repo: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A finished run whose dedup-merge phase raised; return its id."""
    from git_memhtml.sleep.engine.contract import REGISTRY, phase_specs

    def boom(env: Any) -> Any:
        raise RuntimeError("dedup-merge exploded")

    with monkeypatch.context() as patch:
        patch.setitem(REGISTRY, "dedup-merge", replace(phase_specs()["dedup-merge"], body=boom))
        assert cli("-C", str(repo), "sleep", "run", "--date", DATE) == 1
    [run_id] = run_branches(repo)
    return run_id


CASES: dict[str, Callable[[Path, Case, pytest.MonkeyPatch], str]] = {
    "feature-branch": lambda repo, case, mp: _feature(repo),
    "handmade-sleep-branch": lambda repo, case, mp: _handmade(repo),
    "main": lambda repo, case, mp: "main",
    "tag": lambda repo, case, mp: _tag(repo),
    "nonexistent": lambda repo, case, mp: "sleep/2030-01-01-abcdef",
    "dot-dot": lambda repo, case, mp: "sleep/../main",
    "trailing-newline": lambda repo, case, mp: "sleep/2026-01-01\n",
    "option-like": lambda repo, case, mp: "--all",
    "running": lambda repo, case, mp: make_running(repo, case),
    "interrupted": lambda repo, case, mp: make_interrupted(repo),
    "failed": lambda repo, case, mp: make_failed(repo, mp),
}
"""case → builder returning the name handed to the verbs."""

REFUSED = [(verb, case) for case in CASES for verb in VERBS if verb not in ACCEPTS.get(case, set())]
ACCEPTED = [(verb, case) for case, verbs in ACCEPTS.items() for verb in sorted(verbs)]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:func:`memory_repo` built once for the module; every case works on its own copy of it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MEMHTML_NOW", NOW)
        return memory_repo(tmp_path_factory.mktemp("run-branches"))


@pytest.fixture
def built(request: pytest.FixtureRequest, template: Path, tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[Case]:
    """The repository of one case (indirect parameter: the case name): a copy of the template (git dir, index and
    bare ``origin`` included), its ``origin`` pointed at the copy's own bare repository."""
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    shutil.copytree(template.parent, tmp_path, symlinks=True, dirs_exist_ok=True)
    repo = tmp_path / template.name
    git(repo, "remote", "set-url", "origin", str(tmp_path / "origin.git"))
    case = Case(repo, "")
    case.name = CASES[request.param](repo, case, monkeypatch)
    try:
        yield case
    finally:
        for step in case.cleanup:
            step()


def names(name: str, text: str) -> bool:
    """Whether ``text`` names ``name`` as given or escaped (a control character is shown as its escape)."""
    return name in text or repr(name)[1:-1] in text


def snapshot(repo: Path) -> dict[str, Any]:
    """Every ref, HEAD, the worktree list, the index state and every work-tree file's bytes."""
    files = {str(p.relative_to(repo)): p.read_bytes() for p in work_tree_paths(repo)
             if p.is_file() and ".git" not in p.relative_to(repo).parts}
    return {
        "refs": git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
        "head": git(repo, "symbolic-ref", "-q", "HEAD"),
        "head_sha": git(repo, "rev-parse", "HEAD"),
        "worktrees": git(repo, "worktree", "list", "--porcelain"),
        "status": git(repo, "status", "--porcelain", "--untracked-files=all"),
        "files": files,
    }


@pytest.mark.slow
@pytest.mark.parametrize(("verb", "built"), REFUSED, indirect=["built"], ids=[f"{v}-{c}" for v, c in REFUSED])
def test_verb_refuses_what_is_not_a_finished_run(verb: str, built: Case, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(built.repo)
    capsys.readouterr()
    code = cli("-C", str(built.repo), *COMMANDS[verb], built.name, *VERBS[verb])
    out, err = capsys.readouterr()
    assert code in (1, 2), (out, err)
    assert names(built.name, out + err), (out, err)
    assert "hint" in out + err
    assert snapshot(built.repo) == before


@pytest.mark.slow
@pytest.mark.parametrize(("verb", "built"), REFUSED, indirect=["built"], ids=[f"{v}-{c}" for v, c in REFUSED])
def test_verb_refusal_envelope_names_the_branch(verb: str, built: Case, capsys: pytest.CaptureFixture[str]) -> None:
    """With ``--json`` too: exit 1/2, and the envelope (error or refusal) names the branch."""
    capsys.readouterr()
    code = cli("-C", str(built.repo), *COMMANDS[verb], built.name, *VERBS[verb], "--json")
    out, err = capsys.readouterr()
    assert code in (1, 2)
    if out.strip():
        envelope = json.loads(out)
        data = envelope.get("data") or {}
        text = " ".join(str(v) for v in (envelope.get("error"), data.get("reason"), data.get("runId")) if v)
    else:
        text = err  # a usage error (click) prints no envelope
    assert names(built.name, text), (out, err)


@pytest.mark.slow
@pytest.mark.parametrize(("verb", "built"), ACCEPTED, indirect=["built"], ids=[f"{v}-{c}" for v, c in ACCEPTED])
def test_verb_accepts_the_unfinished_runs_it_is_for(verb: str, built: Case,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    code = cli("-C", str(built.repo), *COMMANDS[verb], built.name, *VERBS[verb], "--json")
    out, err = capsys.readouterr()
    envelope = json.loads(out)
    if verb == "abort":
        assert code == 0 and run_branches(built.repo) == []
    elif verb == "resume":
        assert code == 0, (out, err)
        assert envelope["data"]["failedPhases"] == []
    else:
        data = envelope["data"]
        assert code == 0 and data.get("runId", data.get("verdict", {}).get("runId")) == built.name


@pytest.mark.slow
@pytest.mark.parametrize("built", ["failed"], indirect=True)
def test_merge_of_a_failed_run_needs_allow_failed_and_prints_the_failures(
    built: Case, capsys: pytest.CaptureFixture[str]
) -> None:
    main_before = git(built.repo, "rev-parse", "main")
    capsys.readouterr()
    code = cli("-C", str(built.repo), "sleep", "merge", built.name, "--skip-gate", "--json")
    out, err = capsys.readouterr()
    refused = json.loads(out)  # the error envelope carries the refusal's fields
    assert code == 1 and refused["refusal"] == "failed-phases" and refused["failedPhases"] == ["dedup-merge"]
    assert "--allow-failed" in refused["hint"] and "dedup-merge" in err
    assert git(built.repo, "rev-parse", "main") == main_before
    code = cli("-C", str(built.repo), "sleep", "merge", built.name, "--skip-gate", "--allow-failed", "--json")
    out, err = capsys.readouterr()
    merged = json.loads(out)["data"]
    assert code == 0 and merged["merged"] and merged["failedPhases"] == ["dedup-merge"]
    assert "phase dedup-merge failed" in err
    assert git(built.repo, "rev-parse", "main").strip() == merged["headSha"]


@pytest.mark.slow
@pytest.mark.parametrize("built", ["running"], indirect=True)
def test_a_second_run_refuses_while_one_runs_and_names_the_holder(
    built: Case, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(built.repo)
    capsys.readouterr()
    code = cli("-C", str(built.repo), "sleep", "run", "--date", "2026-02-02")
    err = capsys.readouterr().err
    assert code == 1
    assert built.name in err and f"pid {built.child.pid}" in err and "one sleep run at a time" in err
    assert snapshot(built.repo) == before
