"""The sleep contract: the seventeen phases, their order, and the registry of what each phase declares.

The order is :data:`SLEEP_PHASES`; everything else about a phase (body, counts type, model use, whether it
commits, hard prerequisites) is its module's :class:`PhaseSpec`, passed to :func:`register` at import. Adding a
phase is its module (under ``sleep/phases/``, which imports every module it holds), one line here, and its test.

Source: docs/phases.md §0.2, §1.1–§1.17 and §1.14 (v0.6.0: 17 phases, ``placement-triage`` deep-only, preflight a
hard prerequisite of every later phase, dedup-merge of compress and retention-triage).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:  # annotations only: env imports this module's constants
    from git_memhtml.sleep.engine.env import PhaseBody, PhaseCounts

SLEEP_PHASES: tuple[str, ...] = (
    "preflight",
    "dedup-merge",
    "entity-resolution",
    "person-links",
    "relationship-mining",
    "edge-typing",
    "confidence-decay",
    "arc-synthesis",
    "retention-triage",
    "compress",
    "reprieve",
    "trace-consolidation",
    "task-detection",
    "placement-triage",
    "integrity",
    "state-export",
    "report",
)
"""Canonical order (docs/phases.md §1 table)."""

PREFLIGHT = "preflight"

MULTI_COMMIT_PHASES: frozenset[str] = frozenset({"arc-synthesis", "compress", "trace-consolidation"})
"""Phases that make one commit per unit of work (per arc, per folded batch, per distilled memory) rather than one per
phase (docs/phases.md §0.3, §1.8, §1.10, §1.12): each commit carries the phase's trailers, so the landing rail
accepts consecutive commits of these phases (``sleep.landing.rail``) and resume reads the last one's counts
(``sleep.engine.run``)."""

GATED: tuple[str, ...] = (PREFLIGHT,)
"""The hard prerequisites of every phase after preflight unless its spec says more (docs/phases.md §0.2: preflight gates
all sixteen after it)."""


@dataclass(frozen=True)
class PhaseSpec:
    """What a phase module declares about its phase (its position is :data:`SLEEP_PHASES`).

    Attributes:
        name: the phase name, one of :data:`SLEEP_PHASES`.
        body: ``run(env) -> PhaseOutcome``.
        counts: the :class:`~git_memhtml.sleep.engine.env.PhaseCounts` subclass the body returns.
        model: the phase calls a model when one is bound (docs/phases.md §1: eight phases do).
        commits: ``False`` for a phase that never commits by design (docs/phases.md §0.3: preflight only refreshes the
            index; mined edges are index-only).
        sweep: a uniform sweep whose diff does not pin a path for placement-triage (docs/phases.md §1.14).
        prerequisites: phases whose failure skips this one (docs/phases.md §0.2); each must come earlier in the order.
    """

    name: str
    body: PhaseBody
    counts: type[PhaseCounts]
    model: bool = False
    commits: bool = True
    sweep: bool = False
    prerequisites: tuple[str, ...] = GATED


REGISTRY: dict[str, PhaseSpec] = {}
"""name → spec, filled by each phase module at import (:func:`register`); completed by ``git_memhtml.sleep``
importing ``git_memhtml.sleep.phases`` (:func:`set_phase_loader`)."""

_LOADERS: list[Callable[[], None]] = []


def set_phase_loader(loader: Callable[[], None]) -> None:
    """Install what imports the phase modules (``git_memhtml.sleep`` does, so the engine never imports them);
    :func:`phase_specs` calls it while the registry is not total."""
    _LOADERS[:] = [loader]


def _origin(spec: PhaseSpec) -> str:
    """``module.qualname`` of a spec's body (a module imported again re-registers the same origin)."""
    return f"{getattr(spec.body, '__module__', '?')}.{getattr(spec.body, '__qualname__', '?')}"


def register(spec: PhaseSpec) -> None:
    """Record a phase module's spec (each phase module calls it once, at import).

    Raises:
        ImportError: the name is not in :data:`SLEEP_PHASES`, is registered twice, or names a prerequisite that does
            not come before it.
    """
    if spec.name not in SLEEP_PHASES:
        raise ImportError(f"phase {spec.name!r} is not in SLEEP_PHASES; add it to the order list first")
    late = [p for p in spec.prerequisites if p not in SLEEP_PHASES or phase_ordinal(p) >= phase_ordinal(spec.name)]
    if late:
        raise ImportError(f"phase {spec.name!r}: prerequisite(s) {late} do not run before it")
    if spec.name in REGISTRY and _origin(REGISTRY[spec.name]) != _origin(spec):
        raise ImportError(f"phase {spec.name!r} is registered twice: {_origin(REGISTRY[spec.name])}, {_origin(spec)}")
    REGISTRY[spec.name] = spec


def phase_specs() -> Mapping[str, PhaseSpec]:
    """Return the registry, checked total: every name of :data:`SLEEP_PHASES` has exactly one spec.

    Raises:
        ImportError: a phase has no spec (no module of ``sleep/phases/`` registers it).
    """
    if set(REGISTRY) != set(SLEEP_PHASES):
        for load in _LOADERS:
            load()
    if set(REGISTRY) != set(SLEEP_PHASES):  # the total-mapping check (docs/phases.md §1)
        missing = sorted(set(SLEEP_PHASES) - set(REGISTRY))
        extra = sorted(set(REGISTRY) - set(SLEEP_PHASES))
        raise ImportError(f"the phase registry is not total: missing {missing}, unknown {extra}")
    return REGISTRY


def model_phases() -> frozenset[str]:
    """The phases that call a model when one is bound (docs/phases.md §1: eight)."""
    return frozenset(name for name, spec in phase_specs().items() if spec.model)


def non_committing_phases() -> frozenset[str]:
    """Phases that never commit, by design (docs/sleep.md §2)."""
    return frozenset(name for name, spec in phase_specs().items() if not spec.commits)


def sweep_phases() -> frozenset[str]:
    """Uniform sweeps whose diffs do not pin a path for placement-triage (docs/phases.md §1.14)."""
    return frozenset(name for name, spec in phase_specs().items() if spec.sweep)


DETECTED_TASK_CAP = 10
"""Detected tasks minted per night in each class of task (:data:`TASK_CLASSES`), a resumed run included: at most
ten tasks of open work and ten review tasks, so a night opens at most twenty (carried over as ten across all
detectors; counted per class since issue 27, our decision, docs/tasks.md §7 "Two budgets")."""

TaskClass = Literal["open-work", "review"]
"""What a detected task is for: ``open-work``, work a person committed to or left open (the thing a task exists
for); ``review``, a decision the night declined to take alone and hands to a person (a vetoed fold, an entity
merge, a contradiction)."""

TASK_CLASSES: tuple[TaskClass, ...] = get_args(TaskClass)
"""Every class: each has its own :data:`DETECTED_TASK_CAP` a night."""

OPEN_WORK_DETECTORS: frozenset[str] = frozenset({"task-detection", "trace-commitment"})
"""The detectors whose tasks are open work (task-detection's commitments and follow-ups, trace-consolidation's
commitments, detector ``trace-commitment``); every other detector files review tasks."""


REVIEW_SHARE = DETECTED_TASK_CAP // 2
"""Review tasks one review detector may open a night: half the review class's ten (5), so one kind of review (a
backlog of vetoed folds) never takes the whole ten and hides another (a contradiction). What it leaves is filed on
a later night: an open task is refreshed at no cost, so each night files the next ones (our decision, issue 27,
docs/tasks.md §7 "Two budgets")."""


def task_class(detector: str) -> TaskClass:
    """Return the class of the tasks ``detector`` files: ``open-work`` for :data:`OPEN_WORK_DETECTORS`, else
    ``review`` (a detector not named there is bookkeeping until it is)."""
    return "open-work" if detector in OPEN_WORK_DETECTORS else "review"

MAX_SAME_DAY_RUNS = 100
"""Run ids per date: ``sleep/<date>``, then ``-2`` … ``-100`` (docs/sleep.md §2.1 "Run abort")."""

STALE_RUN_HOURS = 20
"""A ``running`` row older than this is reaped as abandoned (docs/sleep.md §2.4 "reaped")."""


def phase_ordinal(phase: str) -> int:
    """Return the 1-based position of ``phase`` in :data:`SLEEP_PHASES`."""
    return SLEEP_PHASES.index(phase) + 1


FRAMING_PHASES: tuple[str, ...] = ("preflight", "report")
"""Phases every ``--phases`` subset runs too (our decision, docs/sleep.md §2.3 "A phase subset"): ``preflight``
brings the run's index to the base commit, which every phase reads, and ``report`` ends the pass, which the
landing rail (``sleep/landing/rail.py`` rule d) and the run resolver require before ``sleep merge`` takes a run.
Without them a subset run could never be merged, and nothing said so when it started."""


def _wanted(names: str) -> set[str]:
    return {n.strip() for n in names.split(",") if n.strip()}


def select_phases(names: str | None) -> tuple[str, ...]:
    """Parse a ``--phases a,b`` value into canonical order, :data:`FRAMING_PHASES` included; ``None`` (no
    ``--phases``) selects all.

    Raises:
        ValueError: naming the unknown phase, or a value that names no phase (``""``, ``","``: before, a blank value
            ran all seventeen and a lone comma ran preflight and report alone, both silently; the CLI turns it into a
            usage error).
    """
    if names is None:
        return SLEEP_PHASES
    wanted = _wanted(names)
    if not wanted:
        raise ValueError(f"--phases {names!r} names no phase; phases: {', '.join(SLEEP_PHASES)}")
    unknown = sorted(wanted - set(SLEEP_PHASES))
    if unknown:
        raise ValueError(f"unknown phase(s): {', '.join(unknown)}; phases: {', '.join(SLEEP_PHASES)}")
    return tuple(p for p in SLEEP_PHASES if p in wanted or p in FRAMING_PHASES)


def framing_added(names: str | None) -> tuple[str, ...]:
    """The :data:`FRAMING_PHASES` a ``--phases`` value did not name, which :func:`select_phases` adds (empty for
    ``None``, every phase runs, and for a value that names no phase, which :func:`select_phases` refuses)."""
    if names is None or not _wanted(names):
        return ()
    wanted = _wanted(names)
    return tuple(p for p in FRAMING_PHASES if p not in wanted)
