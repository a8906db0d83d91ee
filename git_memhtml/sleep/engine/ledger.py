"""Pending state-plane marks: the lines of ``.memhtml/sleep/<run>.pending.jsonl`` (docs/phases.md §0.2, docs/sleep.md
§2.8).

A phase never writes ``state.db`` for a fact that must die with a dropped branch; it appends a mark to
``env.services.ledger`` instead, the report phase commits the marks, and ``sleep merge`` applies them
(:func:`git_memhtml.sleep.landing.merge.apply_ledger`, which reads the same JSON keys). Four kinds (docs/ledger.md §1):
three deferred writes and one record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class SessionConsolidated:
    """A trace-consolidation watermark: ``session`` was consolidated (a deferred write)."""

    session: str
    kind: Literal["session-consolidated"] = "session-consolidated"

    def as_json(self) -> dict[str, object]:
        """The ledger line's JSON object."""
        return {"kind": self.kind, "session": self.session}


@dataclass(frozen=True)
class EdgePromoted:
    """A corroborated edge ``src --rel--> dst`` is promoted (``state.edge_corroboration``; a deferred write)."""

    src: str
    rel: str
    dst: str
    kind: Literal["edge-promoted"] = "edge-promoted"

    def as_json(self) -> dict[str, object]:
        """The ledger line's JSON object."""
        return {"kind": self.kind, "src": self.src, "rel": self.rel, "dst": self.dst}


@dataclass(frozen=True)
class EntityPromoted:
    """A corroborated alias ``alias`` → ``canonical`` of ``entity_type`` is promoted (``state.entity_corroboration``;
    a deferred write)."""

    entity_type: str
    alias: str
    canonical: str
    kind: Literal["entity-promoted"] = "entity-promoted"

    def as_json(self) -> dict[str, object]:
        """The ledger line's JSON object."""
        return {"kind": self.kind, "entityType": self.entity_type, "alias": self.alias, "canonical": self.canonical}


@dataclass(frozen=True)
class CommitmentBelowFloor:
    """A record, not a write: a commitment scored under the floor (0.7), kept whole so the refusal is reviewable;
    ``done`` says whether its session showed it done (docs/phases.md §0.2)."""

    statement: str
    confidence: float
    session: str
    done: bool
    kind: Literal["commitment-below-floor"] = "commitment-below-floor"

    def as_json(self) -> dict[str, object]:
        """The ledger line's JSON object."""
        return {"kind": self.kind, "statement": self.statement, "confidence": self.confidence,
                "session": self.session, "done": self.done}


PendingMark = SessionConsolidated | EdgePromoted | EntityPromoted | CommitmentBelowFloor
"""One mark of the ledger."""


def ledger_lines(text: str) -> list[str]:
    """The non-blank lines of a ledger's text, split on ``\n`` only: a mark is rendered with non-ASCII kept, so a
    string inside it may hold U+2028, U+0085 or a form feed, which :meth:`str.splitlines` would cut in two."""
    return [line for line in text.split("\n") if line.strip()]
