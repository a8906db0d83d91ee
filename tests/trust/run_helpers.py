"""Shared by the run-branch trust tables: a real sleep run that dies mid-phase, for a forked child."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import replace
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.embed.registry import get_embedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.engine.run import run_sleep

DATE = "2026-02-01"
NOW = "2026-02-01T09:00:00Z"
HANG_GUARD_S = 120.0
"""How long a child run may take to reach its waiting point before the test gives up: a hang guard (a run reaches
it in seconds), never a measure."""


def wait_for_ready(child: BaseProcess, ready: Path, what: str) -> None:
    """Poll until the child writes ``ready``; fail naming ``what`` if the child died first, or if it never happened
    within :data:`HANG_GUARD_S`."""
    deadline = time.monotonic() + HANG_GUARD_S
    while not ready.exists():
        if not child.is_alive():
            pytest.fail(f"the child run died before {what} (exit code {child.exitcode})")
        if time.monotonic() > deadline:
            pytest.fail(f"the child run never reached {what} ({HANG_GUARD_S:g} s hang guard)")
        time.sleep(0.05)


def killed_mid_phase(repo: str) -> None:
    """Child: a real run that SIGKILLs itself inside retention-triage, after staging a half-written file."""
    os.environ["MEMHTML_EMBED"] = "fake"
    from git_memhtml.sleep.engine.contract import REGISTRY, phase_specs

    def dying(env: Any) -> Any:
        (env.repo.root / "areas" / "half.html").write_text("half")
        env.repo.stage(["areas/half.html"])
        os.kill(os.getpid(), signal.SIGKILL)

    REGISTRY["retention-triage"] = replace(phase_specs()["retention-triage"], body=dying)
    main_repo = GitRepo.discover(repo)
    run_sleep(main_repo, IndexDB.for_repo(main_repo), date=DATE, embedder=get_embedder("fake"), clock=lambda: NOW)


START_POINTS: dict[str, tuple[str, str]] = {
    "before-row": ("git_memhtml.sleep.engine.run", "upsert_run"),
    "before-branch": ("git_memhtml.gitrepo.repo", "GitRepo.create_branch"),
    "before-worktree": ("git_memhtml.gitrepo.repo", "GitRepo.add_worktree"),
    "before-first-phase": ("git_memhtml.sleep.engine.run", "_open_env"),
}
"""Each step of a run's start → (module, attribute) that a child replaces to die (or wait) just before it."""


def dies_while_starting(repo: str, point: str, wait_for: str | None = None, ready: str | None = None) -> None:
    """Child: a real run that SIGKILLs itself at ``point`` of its start (:data:`START_POINTS`); with ``wait_for``,
    it instead writes ``ready`` and waits there until ``wait_for`` exists, then dies (a live run in its first
    instants)."""
    import importlib
    import time
    from pathlib import Path

    os.environ["MEMHTML_EMBED"] = "fake"
    module_name, attribute = START_POINTS[point]
    module = importlib.import_module(module_name)
    owner: Any = module
    for part in attribute.split(".")[:-1]:
        owner = getattr(owner, part)

    def dying(*_args: Any, **_kwargs: Any) -> Any:
        if wait_for is not None and ready is not None:
            Path(ready).write_text("ready")
            while not Path(wait_for).exists():
                time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGKILL)

    setattr(owner, attribute.split(".")[-1], dying)
    main_repo = GitRepo.discover(repo)
    run_sleep(main_repo, IndexDB.for_repo(main_repo), date=DATE, embedder=get_embedder("fake"), clock=lambda: NOW)


END_POINTS: dict[str, tuple[str, str]] = {
    "before-report-row": ("git_memhtml.sleep.engine.run", "record_phase"),
    "before-final-status": ("git_memhtml.sleep.engine.run", "set_status"),
    "before-kept-index": ("git_memhtml.sleep.engine.run", "keep_run_index"),
    "before-worktree-removal": ("git_memhtml.gitrepo.repo", "GitRepo.remove_worktree"),
    "mid-worktree-removal": ("git_memhtml.gitrepo.repo", "GitRepo._discard"),
}
"""Each step of a run after its last phase commit (the report's) → (module, attribute) that a child replaces to die
just before it: the report's row, the run's final status, the kept index, the worktree removal, and the removal
with the folder already moved aside but not yet deleted."""


def dies_while_ending(repo: str, point: str) -> None:
    """Child: a real run that SIGKILLs itself at ``point`` (:data:`END_POINTS`), once its report is committed."""
    import importlib

    os.environ["MEMHTML_EMBED"] = "fake"
    module_name, attribute = END_POINTS[point]
    module = importlib.import_module(module_name)
    owner: Any = module
    for part in attribute.split(".")[:-1]:
        owner = getattr(owner, part)
    original = getattr(owner, attribute.split(".")[-1])
    armed: list[bool] = []

    def after(report: Any) -> None:
        if report.phase == "report":
            armed.append(True)

    def dying(*args: Any, **kwargs: Any) -> Any:
        reaching_report_row = point == "before-report-row" and len(args) > 2 and args[2].phase == "report"
        if armed or reaching_report_row:
            os.kill(os.getpid(), signal.SIGKILL)
        return original(*args, **kwargs)

    setattr(owner, attribute.split(".")[-1], dying)
    main_repo = GitRepo.discover(repo)
    run_sleep(main_repo, IndexDB.for_repo(main_repo), date=DATE, embedder=get_embedder("fake"), clock=lambda: NOW,
              after_phase=after)
