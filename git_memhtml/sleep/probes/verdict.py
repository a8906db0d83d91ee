"""The run gate's verdict: one result per probe, the figures of each family, the lost and the explained
(docs/gate.md §9.3).

Figures of a family (issue 10's table): ``run`` probes tried; ``foundBefore`` found on the base; ``foundAfter``
found on the tip as themselves; ``explained`` found on the tip through a pointer the run left (a keeper, a
successor, an archived copy, an accepted entity rename); ``lost`` found on the base and neither; so
``foundBefore = foundAfter + explained + lost``. ``meanRankChange`` is the mean of ``rank after − rank before`` over
the probes found on both sides (negative: easier to find), 4 dp; ``None`` when no probe has two ranks, and always for
entity probes, whose scope is a filter, not a ranking.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

Family = Literal["claim", "entity", "control"]
"""The probe families, in the order the verdict lists them."""

FAMILIES: tuple[Family, ...] = get_args(Family)

Status = Literal["found", "explained", "lost", "not-found-before"]
"""A probe's outcome; ``not-found-before`` probes are tried but never counted (we measure the run, not the
retriever)."""


@dataclass(frozen=True)
class ProbeResult:
    """One probe: its family, label (the claim's memory, the entity value, the pair), the base memory it is about,
    the outcome, both ranks (1-based, ``None`` = not in the top k or not ranked), and for an explained or lost
    probe ``via`` (the path it reached) and ``how``/``why``."""

    family: Family
    probe: str
    path: str
    status: Status
    rank_before: int | None = None
    rank_after: int | None = None
    via: str | None = None
    how: str | None = None
    why: str | None = None


@dataclass(frozen=True)
class FamilyFigures:
    """The figures of one family (module docstring)."""

    run: int
    found_before: int
    found_after: int
    lost: int
    explained: int
    mean_rank_change: float | None

    def as_json(self) -> dict[str, Any]:
        """JSON shape (camelCase keys)."""
        return {"run": self.run, "foundBefore": self.found_before, "foundAfter": self.found_after, "lost": self.lost,
                "explained": self.explained, "meanRankChange": self.mean_rank_change}


def family_figures(results: Sequence[ProbeResult]) -> FamilyFigures:
    """The figures of ``results`` (all of one family)."""
    counted = [r for r in results if r.status != "not-found-before"]
    moves = [r.rank_after - r.rank_before for r in counted
             if r.status != "lost" and r.rank_before is not None and r.rank_after is not None]
    return FamilyFigures(
        run=len(results),
        found_before=len(counted),
        found_after=sum(1 for r in counted if r.status == "found"),
        lost=sum(1 for r in counted if r.status == "lost"),
        explained=sum(1 for r in counted if r.status == "explained"),
        mean_rank_change=round(sum(moves) / len(moves), 4) if moves else None,
    )


@dataclass(frozen=True)
class LostMemory:
    """A lost probe with the phases (and commits, oldest first) of ``base..tip`` that changed its memory."""

    result: ProbeResult
    phases: tuple[str, ...]
    commits: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        """JSON shape."""
        r = self.result
        return {"family": r.family, "probe": r.probe, "path": r.path, "rankBefore": r.rank_before,
                "phases": list(self.phases), "commits": list(self.commits), "why": r.why}

    def line(self) -> str:
        """One human line: ``path (family probe): why [phases]``."""
        r = self.result
        touched = ", ".join(self.phases) if self.phases else "no phase commit changed it"
        label = "" if r.probe == r.path else f" ({r.family} {r.probe})"
        return f"{r.path}{label}: {r.why} [{touched}]"


@dataclass(frozen=True)
class Verdict:
    """The deterministic verdict of one run: same run, same content, same embedder → same value everywhere.

    ``passed`` = the memories with an unexplained loss, over all families together, are at most ``max_lost`` (one
    memory lost by a claim probe and two entity probes is one memory).
    """

    run_id: str
    base_sha: str
    head_sha: str
    space: str | None
    k: int
    sample_size: int
    max_lost: int
    results: tuple[ProbeResult, ...]
    lost: tuple[LostMemory, ...]
    degraded: bool = False
    figures: dict[Family, FamilyFigures] = field(default_factory=dict)

    @property
    def lost_count(self) -> int:
        """Memories with an unexplained loss, over every family (each memory once)."""
        return len({m.result.path for m in self.lost})

    @property
    def lost_probes(self) -> int:
        """Lost probes over every family."""
        return sum(f.lost for f in self.figures.values())

    @property
    def passed(self) -> bool:
        """At most ``max_lost`` unexplained losses."""
        return self.lost_count <= self.max_lost

    def as_json(self) -> dict[str, Any]:
        """JSON shape: ``families`` figures, ``lost`` (with phases and commits) and ``explained`` probes."""
        return {
            "runId": self.run_id,
            "baseSha": self.base_sha,
            "headSha": self.head_sha,
            "space": self.space,
            "degraded": self.degraded,
            "k": self.k,
            "sampleSize": self.sample_size,
            "maxLost": self.max_lost,
            "passed": self.passed,
            "lostCount": self.lost_count,
            "lostProbes": self.lost_probes,
            "families": {name: self.figures[name].as_json() for name in FAMILIES if name in self.figures},
            "lost": [m.as_json() for m in self.lost],
            "explained": [
                {"family": r.family, "probe": r.probe, "path": r.path, "via": r.via, "how": r.how,
                 "rankBefore": r.rank_before, "rankAfter": r.rank_after}
                for r in self.results if r.status == "explained"
            ],
        }


TABLE_HEADERS: tuple[str, ...] = ("family", "run", "found before", "found after", "lost", "explained",
                                  "mean rank change")
"""Column titles of the family table (``eval run``'s human output; the review's Markdown table has the same)."""


def build_verdict(*, run_id: str, base_sha: str, head_sha: str, space: str | None, k: int, sample_size: int,
                  max_lost: int, results: Sequence[ProbeResult], lost: Sequence[LostMemory],
                  degraded: bool) -> Verdict:
    """The :class:`Verdict` of ``results`` with every family's figures (a family with no probe shows zeros)."""
    figures = {name: family_figures([r for r in results if r.family == name]) for name in FAMILIES}
    return Verdict(run_id, base_sha, head_sha, space, k, sample_size, max_lost, tuple(results), tuple(lost),
                   degraded, figures)
