"""Phase commits with trailers (docs/phases.md §0 "commitPhase", docs/design.md §3.4).

Subject ``memhtml(sleep(<phase>)): <subject>``; every non-blank body line indented two spaces so untrusted memory
text can never forge a trailer; trailers ``Memhtml-Run``, ``Memhtml-Phase``, ``Memhtml-Counts`` (one-line JSON),
and ``Memhtml-Deep: true`` on every commit of a ``--deep`` run, so ``sleep resume`` resumes it as deep from the
branch alone (docs/sleep.md §2.5).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from git_memhtml.gitrepo import GitRepo
from git_memhtml.store.writer import commit_subject

TRAILER_RUN = "Memhtml-Run"
TRAILER_PHASE = "Memhtml-Phase"
TRAILER_COUNTS = "Memhtml-Counts"
TRAILER_DEEP = "Memhtml-Deep"


def phase_subject(phase: str, subject: str) -> str:
    """Return ``memhtml(sleep(<phase>)): <subject>``: whitespace collapsed, capped at 72 chars with ``…``."""
    return commit_subject(f"sleep({phase})", subject)


def indent_body(body: str | None) -> str | None:
    """Indent every non-blank line of ``body`` by two spaces; control characters other than tab are dropped."""
    if body is None or not body.strip():
        return None
    lines = []
    for line in body.splitlines():
        clean = "".join(ch for ch in line if ch == "\t" or ch >= " ")
        lines.append("  " + clean if clean.strip() else "")
    return "\n".join(lines)


def counts_json(counts: Mapping[str, Any]) -> str:
    """Return the counts as one-line JSON with keys in insertion order."""
    return json.dumps(dict(counts), separators=(",", ":"), ensure_ascii=True)


def commit_phase(
    repo: GitRepo, *, run_id: str, phase: str, subject: str, body: str | None, counts: Mapping[str, Any],
    deep: bool = False,
) -> str | None:
    """Commit what is staged as this phase's commit; return its sha, or ``None`` when nothing is staged.

    ``deep`` (the run is ``--deep``) adds the ``Memhtml-Deep: true`` trailer that :func:`run_is_deep` reads."""
    trailers = [(TRAILER_RUN, run_id), (TRAILER_PHASE, phase), (TRAILER_COUNTS, counts_json(counts))]
    if deep:
        trailers.append((TRAILER_DEEP, "true"))
    return repo.commit(phase_subject(phase, subject), body=indent_body(body), trailers=trailers)


def run_is_deep(repo: GitRepo, base: str, tip: str) -> bool:
    """Whether a commit of ``base..tip`` (a run's branch) carries ``Memhtml-Deep: true``: the run was started with
    ``--deep``. A branch with no phase commit yet says nothing (``False``)."""
    return any("true" in values for _, values in repo.log_trailers(base, tip, TRAILER_DEEP))


class PhaseSteps:
    """One commit per unit of work for a phase of ``MULTI_COMMIT_PHASES`` (docs/phases.md §0.3).

    The runner commits once, after the body returns. A phase that owes one commit per arc or per folded batch stages
    a unit, then calls :meth:`staged` with that unit's subject; before it stages the next unit it calls
    :meth:`begin`, which commits the unit still pending with the phase's trailers and its counts *as they stand*.
    The last unit stays staged for the runner, whose commit carries the final counts (the one resume reads:
    the last ``Memhtml-Counts`` of a phase wins). Nothing is committed on a dry run (nothing is staged there).
    A failed phase's step commits are dropped by the runner (``run._undo``).
    """

    def __init__(self, repo: GitRepo, *, run_id: str, phase: str, deep: bool = False) -> None:
        self.repo = repo
        self.run_id = run_id
        self.phase = phase
        self.deep = deep
        self.pending: tuple[str, str | None] | None = None
        self.made: list[str] = []

    def begin(self, counts: Mapping[str, Any]) -> None:
        """Commit the pending unit (if any) with ``counts`` (wire shape) as its ``Memhtml-Counts``."""
        if self.pending is None:
            return
        subject, body = self.pending
        self.pending = None
        sha = commit_phase(self.repo, run_id=self.run_id, phase=self.phase, subject=subject, body=body, counts=counts,
                           deep=self.deep)
        if sha is not None:
            self.made.append(sha)

    def staged(self, subject: str, body: str | None = None) -> None:
        """Record that one unit is staged, to be committed under ``subject`` (and ``body``)."""
        self.pending = (subject, body)

    @property
    def subject(self) -> str:
        """The subject of the unit left for the runner's commit (empty when none is pending)."""
        return self.pending[0] if self.pending is not None else ""

    @property
    def body(self) -> str | None:
        """The body of the unit left for the runner's commit."""
        return self.pending[1] if self.pending is not None else None
