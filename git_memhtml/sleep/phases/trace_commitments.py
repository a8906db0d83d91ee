"""trace-consolidation's commitments: what a session said would be done becomes a detected task, and what it shows
done closes one (docs/phases.md §1.12 "Commitments", docs/tasks.md §7).

A verified commitment (:class:`~git_memhtml.sleep.phases.trace_answers.Commitment`) scoring under
:data:`COMMITMENT_FLOOR` is not acted on: it is kept whole as a ``commitment-below-floor`` ledger record, so the
floor's refusals are reviewable (docs/ledger.md §1). At or over the floor, an open commitment mints (or refreshes)
the detected task keyed ``detection_key("trace-commitment", statement)``; a resolved one closes the open detected task
of that key, and is *unmatched* when there is none (a resolved commitment under the floor is unmatched too:
carried over). The task file carries the statement and the session id, never the transcript's words: those go
in the commit body, redacted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from git_memhtml.cut import clip
from git_memhtml.errors import InvalidMemory
from git_memhtml.secrets import redact
from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.sleep.engine.ledger import CommitmentBelowFloor
from git_memhtml.sleep.phases.tasks import (
    Measurement,
    close_detected_task,
    detection_key,
    mint_detected_task,
    open_detections,
)
from git_memhtml.sleep.phases.trace_answers import Commitment

COMMITMENT_FLOOR = 0.7
"""Least confidence a commitment needs to open or close a task (carried over; docs/ledger.md §1)."""

DETECTOR = "trace-commitment"
"""The detector name of commitment tasks (their tag and their key's prefix; carried over)."""

QUOTE_LINE_CHARS = 200
"""Characters of a quote on a commit body line (carried over: evidence lines of ≤ 200 characters)."""


@dataclass
class CommitmentTally:
    """Commitment counts (wire ``commitments``, ``commitmentTasks`` …) and the commit body lines they earned."""

    commitments: int = 0
    tasks: int = 0
    completions_applied: int = 0
    completions_unmatched: int = 0
    skipped: int = 0
    below_floor: int = 0
    refreshed: int = 0
    framed: int = 0
    dismissed: int = 0
    capped: int = 0
    lines: list[str] = field(default_factory=list)

    @property
    def wrote(self) -> bool:
        """Whether anything was staged (a task minted or refreshed, or one closed)."""
        return bool(self.tasks or self.refreshed or self.completions_applied)


def body_quote(text: str) -> str:
    """``text`` as one commit body line: redacted, whitespace collapsed, cut to :data:`QUOTE_LINE_CHARS`."""
    return clip(" ".join(redact(text).text.split()), QUOTE_LINE_CHARS)


def settle_commitments(env: PhaseEnv, items: Sequence[Commitment], tally: CommitmentTally) -> None:
    """Act on each verified commitment in order (module docstring), counting into ``tally``; stages through
    ``store.edits`` and never commits. A task the render gate refuses (a secret, a control character) is counted
    ``skipped``."""
    for item in items:
        tally.commitments += 1
        statement = " ".join(redact(item.statement).text.split())
        if item.confidence < COMMITMENT_FLOOR:
            tally.below_floor += 1
            tally.completions_unmatched += int(item.resolved)
            env.services.ledger.append(CommitmentBelowFloor(statement, item.confidence, item.session_id,
                                                            item.resolved))
            continue
        if item.resolved:
            _close(env, item, statement, tally)
            continue
        try:
            outcome = mint_detected_task(env, DETECTOR, statement, title=statement, claim=statement,
                                         evidence=Measurement(f"Stated by the {item.actor} in session "
                                                              f"{item.session_id}."))
        except InvalidMemory:
            tally.skipped += 1
            continue
        if outcome.result == "minted":
            tally.tasks += 1
        elif outcome.result in ("refreshed", "framed", "dismissed", "capped"):
            setattr(tally, outcome.result, getattr(tally, outcome.result) + 1)
        else:
            tally.skipped += 1
            continue
        if outcome.result in ("minted", "refreshed"):
            due = f" (due: {body_quote(item.due_hint)})" if item.due_hint else ""
            tally.lines.append(f"commitment {item.session_id}: {body_quote(item.quote)}{due}")


def _close(env: PhaseEnv, item: Commitment, statement: str, tally: CommitmentTally) -> None:
    key = detection_key(DETECTOR, statement)
    match = next((d for d in open_detections(env.repo, DETECTOR) if d.key == key and d.owned), None)
    if match is None or (not env.dry_run and close_detected_task(env, match.path) is None):
        tally.completions_unmatched += 1
        return
    tally.completions_applied += 1
    tally.lines.append(f"closed {match.path}: completion detected in session {item.session_id}")
