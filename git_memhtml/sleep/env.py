"""What a phase receives and returns (docs/phases.md §0 "PhaseEnv").

A phase body is ``def run(env: PhaseEnv) -> PhaseOutcome``. It reads the index (``env.db``) and the tree
(``env.repo``, the run's linked work tree), writes files only through ``store.edits`` (which stages them), and
never commits: the runner commits whatever the phase staged, with the run's trailers, using the outcome's
``subject`` and ``body``. On a dry run a phase computes its counts and writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from git_memhtml.embed.base import Embedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB


@dataclass
class DetectionBudget:
    """Detected tasks left this run (shared by every detector; docs/tasks.md §7) and the overflow count."""

    remaining: int = 10
    overflow: int = 0


@dataclass(frozen=True)
class PhaseReport:
    """One phase's line in the run report (docs/sleep.md §2.3: status, counts, commitSha, llmCalls, detail)."""

    phase: str
    status: str  # ok | failed | skipped
    counts: dict[str, Any]
    commit_sha: str | None = None
    llm_calls: int = 0
    detail: str | None = None

    def as_json(self) -> dict[str, Any]:
        """Return the JSON shape of the ``sleep.report`` envelope."""
        return {
            "phase": self.phase,
            "status": self.status,
            "counts": self.counts,
            "commitSha": self.commit_sha,
            "llmCalls": self.llm_calls,
            "detail": self.detail,
        }


@dataclass
class PhaseEnv:
    """Everything a phase may read or use.

    Attributes:
        repo: the run's work tree (a linked worktree on ``sleep/<date>``; a detached scratch tree on a dry run).
        db: the index of that work tree (state plane attached as ``state``).
        embedder: the configured embedder, or ``None`` when embedding is off.
        run_id: ``sleep/<date>[-N]`` (equals the branch).
        base_sha: the commit of ``main`` the run was cut from.
        date: the run date ``YYYY-MM-DD``.
        at: midnight UTC of ``date`` as ``YYYY-MM-DDT00:00:00Z`` — the only instant phases stamp; no phase reads
            the clock (docs/sleep.md §2.9).
        dry_run: compute counts only; write nothing.
        deep: ``--deep`` was given.
        budget: detected-task budget shared by the detectors of this run.
        results: reports of the phases already run (the report phase reads them).
        reindex: callable that brings ``db`` up to the work tree (used by the runner between phases).
        ledger: pending state-plane marks earned this run (docs/ledger.md §1); written by the report phase.
    """

    repo: GitRepo
    db: IndexDB
    embedder: Embedder | None
    run_id: str
    base_sha: str
    date: str
    at: str
    dry_run: bool = False
    deep: bool = False
    budget: DetectionBudget = field(default_factory=DetectionBudget)
    results: list[PhaseReport] = field(default_factory=list)
    reindex: Callable[[], object] | None = None
    ledger: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class PhaseOutcome:
    """What a phase body returns: its counts, the commit subject/body for what it staged, and a reason.

    ``subject`` is the text after ``memhtml(sleep(<phase>)): ``; ``body`` lines are indented by the runner.
    ``detail`` explains an ``ok`` that did nothing (``no model bound``, ``deep only``).
    """

    counts: dict[str, Any]
    subject: str = ""
    body: str | None = None
    detail: str | None = None
    llm_calls: int = 0


PhaseBody = Callable[[PhaseEnv], PhaseOutcome]
