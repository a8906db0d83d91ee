"""What a phase receives and returns (docs/phases.md §0 "PhaseEnv").

A phase body is ``def run(env: PhaseEnv) -> PhaseOutcome``. :class:`PhaseEnv` is its whole input, frozen: the
run's work tree and index, the embedder, the run's identity and flags, and the reports of the phases before it.
The one mutable part is ``env.services`` (:class:`RunServices`), the run-scoped counters and sinks every phase of
the run shares (detected-task budget, pending-mark ledger, model client, call budget, rails tallies).

A phase reads the index (``env.db``) and the tree (``env.repo``, the run's linked work tree), writes files only
through ``store.edits`` (which stages them), and never commits: the runner commits whatever the phase staged, with
the run's trailers, using the outcome's ``subject`` and ``body``. On a dry run a phase computes its counts and
writes nothing.

Counts are typed: each phase returns its own frozen :class:`PhaseCounts` subclass; :meth:`PhaseCounts.wire` is the
one serialiser to the wire shape (camelCase keys in field order), called by the runner when it commits and
reports the phase — the trailer, the state row, ``sleep run --json`` and the report page all read that mapping.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Literal, Protocol, get_args

from git_memhtml.embed.base import Embedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.engine.contract import DETECTED_TASK_CAP
from git_memhtml.sleep.engine.ledger import PendingMark

PhaseStatus = Literal["ok", "failed", "skipped"]
"""A phase's status in a run report (docs/sleep.md §2): ran, raised, or was not run (prerequisite failed, resumed)."""

PHASE_STATUSES: tuple[PhaseStatus, ...] = get_args(PhaseStatus)
"""Every status (the ``state.sleep_phases.status`` CHECK of state migration 0004 allows exactly these)."""


def phase_status(value: str) -> PhaseStatus | None:
    """Return ``value`` as a :data:`PhaseStatus`, or ``None`` when it is none."""
    for status in PHASE_STATUSES:
        if status == value:
            return status
    return None

CountValue = int | float
"""A count on the wire: integers, and ratios such as preflight's ``vectorCoverage``."""

WireCounts = dict[str, CountValue]
"""Counts in their wire shape: camelCase key → value, in the phase's field order (trailer, state row, JSON)."""


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclass(frozen=True)
class PhaseCounts:
    """Base of every phase's counts: a frozen dataclass of ints (and ratios), snake_case fields.

    A field set to ``None`` is a count the night did not measure (``grouped`` without ``--deep``, preflight's
    ``vectorCoverage`` without vectors) and is left out of the wire shape, as it always was.
    """

    def wire(self) -> WireCounts:
        """Return the wire shape: ``snake_case`` field → ``camelCase`` key, in field order; ``None`` omitted."""
        out: WireCounts = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if value is not None:
                out[_camel(item.name)] = value
        return out


@dataclass
class DetectionBudget:
    """Detected tasks left this run (shared by every detector) and the overflow count.

    ``remaining`` starts at :data:`~git_memhtml.sleep.engine.contract.DETECTED_TASK_CAP` (10, docs/tasks.md §7).
    """

    remaining: int = DETECTED_TASK_CAP
    overflow: int = 0


@dataclass
class LlmBudget:
    """Model calls left this run: ``None`` is unlimited, the run's default (the CLI has no ``--max-llm-calls``
    yet); ``spent`` counts the calls made. Decremented by the model phases once a model can be bound (docs/design.md
    §3.7)."""

    remaining: int | None = None
    spent: int = 0


@dataclass
class RailCounters:
    """Model proposals each validation rail refused this run (rail name → count): every rail-blocked proposal is
    counted and logged, so a model that keeps proposing rule-violating actions is visible (docs/design.md §3.7)."""

    blocked: Counter[str] = field(default_factory=Counter)


class ModelClient(Protocol):
    """A bound model (docs/design.md §3.7): one completion of ``prompt`` (UTF-8 text in, text out).

    Raises:
        ModelUnavailable: the model could not be reached.
    """

    def complete(self, prompt: str) -> str:
        """Return the model's reply to ``prompt``."""
        ...


@dataclass
class RunServices:
    """The run-scoped, mutable part of a phase's input, shared by every phase of one run.

    Attributes:
        budget: detected-task budget shared by the detectors of this run.
        ledger: pending state-plane marks earned this run (docs/ledger.md §1); written by the report phase.
        model: the bound model client, or ``None`` when no model is bound (``memhtml.llm = off``, the only choice
            until models arrive): the model phases then report ``no model bound``.
        llm_budget: model calls left this run.
        rails: proposals refused by each validation rail.
    """

    budget: DetectionBudget = field(default_factory=DetectionBudget)
    ledger: list[PendingMark] = field(default_factory=list)
    model: ModelClient | None = None
    llm_budget: LlmBudget = field(default_factory=LlmBudget)
    rails: RailCounters = field(default_factory=RailCounters)


@dataclass(frozen=True)
class PhaseReport:
    """One phase's line in the run report (docs/sleep.md §2.3: status, counts, commitSha, llmCalls, detail).

    ``counts`` is the wire shape (:meth:`PhaseCounts.wire`); a failed or prerequisite-skipped phase has ``{}``,
    a resumed one the counts its state row or trailer recorded.
    """

    phase: str
    status: PhaseStatus
    counts: WireCounts
    commit_sha: str | None = None
    llm_calls: int = 0
    detail: str | None = None

    def as_json(self) -> dict[str, object]:
        """Return the JSON shape of the ``sleep.report`` envelope."""
        return {
            "phase": self.phase,
            "status": self.status,
            "counts": self.counts,
            "commitSha": self.commit_sha,
            "llmCalls": self.llm_calls,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class PhaseEnv:
    """Everything a phase may read, and the run's services.

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
        results: reports of the phases already run this run, in order (the report phase reads them).
        services: the run-scoped mutable services (:class:`RunServices`).
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
    results: tuple[PhaseReport, ...] = ()
    services: RunServices = field(default_factory=RunServices)


@dataclass(frozen=True)
class PhaseOutcome:
    """What a phase body returns: its counts, the commit subject/body for what it staged, and a reason.

    ``counts`` is the phase's own :class:`PhaseCounts` subclass (the one its spec declares). ``subject`` is the
    text after ``memhtml(sleep(<phase>)): ``; ``body`` lines are indented by the runner. ``detail`` explains an
    ``ok`` that did nothing (``no model bound``, ``deep only``).
    """

    counts: PhaseCounts
    subject: str = ""
    body: str | None = None
    detail: str | None = None
    llm_calls: int = 0


PhaseBody = Callable[[PhaseEnv], PhaseOutcome]
