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

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Literal, get_args

from git_memhtml.embed.base import Embedder
from git_memhtml.errors import BudgetExhausted
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.llm.contract import ModelClient
from git_memhtml.llm.defaults import DEFAULT_MAX_PROMPT_TOKENS
from git_memhtml.sleep.engine.contract import (
    DETECTED_TASK_CAP,
    REVIEW_SHARE,
    TASK_CLASSES,
    TaskClass,
    task_class,
)
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


def _per_class(value: int) -> dict[TaskClass, int]:
    return dict.fromkeys(TASK_CLASSES, value)


@dataclass
class DetectionBudget:
    """Detected tasks left this run in each class of task, each class's overflow, and the tasks each detector opened
    (docs/tasks.md §7 "Two budgets").

    ``remaining[c]`` starts at :data:`~git_memhtml.sleep.engine.contract.DETECTED_TASK_CAP` (10) for each class
    ``c`` of :data:`~git_memhtml.sleep.engine.contract.TASK_CLASSES`; the detectors of one class share it, in phase
    order, and a review detector takes at most :data:`~git_memhtml.sleep.engine.contract.REVIEW_SHARE` (5) of it.
    ``overflow[c]`` counts the tasks of class ``c`` refused for want of budget; ``opened[d]`` the tasks detector
    ``d`` opened this run.
    """

    remaining: dict[TaskClass, int] = field(default_factory=lambda: _per_class(DETECTED_TASK_CAP))
    overflow: dict[TaskClass, int] = field(default_factory=lambda: _per_class(0))
    opened: dict[str, int] = field(default_factory=dict)

    def admits(self, detector: str) -> bool:
        """Whether ``detector`` may open one more task: its class has one left and, for a review detector, it has
        opened fewer than its share. When not, count one overflow of its class."""
        kind = task_class(detector)
        share = self.opened.get(detector, 0) < REVIEW_SHARE if kind == "review" else True
        if self.remaining[kind] > 0 and share:
            return True
        self.overflow[kind] += 1
        return False

    def take(self, detector: str) -> None:
        """Spend one task of ``detector``'s class (the caller checked :meth:`admits`)."""
        kind = task_class(detector)
        self.remaining[kind] = max(0, self.remaining[kind] - 1)
        self.opened[detector] = self.opened.get(detector, 0) + 1

    def spend(self, opened: Mapping[str, int]) -> None:
        """Count the tasks each detector already ``opened`` this run (a resume, docs/tasks.md §7): its class is
        lowered by as many, never below 0."""
        for detector, count in opened.items():
            kind = task_class(detector)
            self.remaining[kind] = max(0, self.remaining[kind] - count)
            self.opened[detector] = self.opened.get(detector, 0) + count


@dataclass
class LlmBudget:
    """Model calls left this run: ``None`` is unlimited, the run's default; ``sleep run --max-llm-calls N`` sets it.
    ``spent`` counts the calls made. Decremented by :class:`~git_memhtml.sleep.engine.model.PhaseModel` (docs/models.md
    §2)."""

    remaining: int | None = None
    spent: int = 0

    def spend(self) -> None:
        """Take one call from the budget.

        Raises:
            BudgetExhausted: nothing is left (``remaining`` is 0); nothing was taken.
        """
        if self.remaining is not None:
            if self.remaining <= 0:
                raise BudgetExhausted(f"the run's budget of model calls is spent ({self.spent} made)",
                                      hint="raise --max-llm-calls, or resume the run later")
            self.remaining -= 1
        self.spent += 1


@dataclass
class RunServices:
    """The run-scoped, mutable part of a phase's input, shared by every phase of one run.

    Attributes:
        budget: detected-task budget of this run, one per class of task, shared by that class's detectors.
        ledger: pending state-plane marks earned this run (docs/ledger.md §1); written by the report phase.
        model: the bound model client, or ``None`` when no model is bound (``memhtml.llm = off``): the model
            phases then report ``no model bound``.
        llm_budget: model calls left this run (``--max-llm-calls``), shared by every phase.
        max_prompt: tokens one request may send (``memhtml.llmmaxprompt``, docs/models.md §11).
    """

    budget: DetectionBudget = field(default_factory=DetectionBudget)
    ledger: list[PendingMark] = field(default_factory=list)
    model: ModelClient | None = None
    llm_budget: LlmBudget = field(default_factory=LlmBudget)
    max_prompt: int = DEFAULT_MAX_PROMPT_TOKENS


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


def _camel_rail(rail: str) -> str:
    return "rail" + "".join(part[:1].upper() + part[1:] for part in rail.replace("_", "-").split("-") if part)


@dataclass(frozen=True)
class ModelUsage:
    """What one phase spent and refused.

    Attributes:
        calls: calls made (successful or not; budget-skipped batches are not calls).
        failed_calls: calls that produced no usable answer.
        budget_skipped: batches not sent because the run's budget was spent.
        input_tokens / output_tokens: summed from the answers.
        prompt_bytes: UTF-8 bytes of every system and user prompt sent.
        prompt_tokens / largest_prompt: tokens of every request sent, summed, and of the largest, as
            ``sleep/engine/tokens.py`` counts them before sending (docs/models.md §11).
        over_cap: requests not sent because they stayed over ``memhtml.llmmaxprompt`` after every rule.
        members_cut: members whose text was cut so that their request fits the cap.
        rails: proposals refused, per rail name (``unknown-key``, ``veto`` …), in first-refusal order.
        seconds: wall time spent inside calls (server time included).
    """

    calls: int = 0
    failed_calls: int = 0
    budget_skipped: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    prompt_bytes: int = 0
    rails: tuple[tuple[str, int], ...] = ()
    seconds: float = 0.0
    prompt_tokens: int = 0
    largest_prompt: int = 0
    over_cap: int = 0
    members_cut: int = 0

    @property
    def rejected(self) -> int:
        """Proposals refused by any rail."""
        return sum(n for _, n in self.rails)

    def wire(self) -> WireCounts:
        """The keys the runner adds to the phase's counts: ``inputTokens, outputTokens, failedCalls,
        budgetSkipped, promptTokens, largestPrompt``, ``overCap`` and ``membersCut`` when not 0, and one
        ``rail<Name>`` per rail that refused something (``railUnknownKey``)."""
        out: dict[str, CountValue] = {
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "failedCalls": self.failed_calls,
            "budgetSkipped": self.budget_skipped,
            "promptTokens": self.prompt_tokens,
            "largestPrompt": self.largest_prompt,
        }
        if self.over_cap:
            out["overCap"] = self.over_cap
        if self.members_cut:
            out["membersCut"] = self.members_cut
        for rail, n in self.rails:
            out[_camel_rail(rail)] = n
        return out


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
    model: ModelUsage | None = None

    @property
    def llm_calls(self) -> int:
        """Model calls the phase made (0 with no model bound)."""
        return self.model.calls if self.model is not None else 0


PhaseBody = Callable[[PhaseEnv], PhaseOutcome]
