"""What each phase asked of the model, read back from its counts: the rows of the "model use" tables of the report
page, ``sleep review`` and ``sleep review --format markdown`` (docs/models.md §2, §3).

The runner adds ``inputTokens``, ``outputTokens``, ``failedCalls``, ``budgetSkipped`` and one ``rail<Name>`` per rail
that refused something to a phase's counts only when a model was bound (:meth:`ModelUsage.wire`), so the four keys
are the sign that a phase had a model; a phase without them has no row, and a night with ``memhtml.llm = off`` shows
no table at all. The counts are those of the trailer or the state row, so a resumed run, and a teammate's run read
from its commits, still show them. The number of calls is not a count (``PhaseReport.llm_calls``, the state row's
``llmCalls``); read from a trailer alone it is unknown (``None``).

Request sizes (docs/models.md §11): ``largestPrompt`` and ``promptTokens`` are the phase's largest request and all
its requests, in tokens as ``sleep/engine/tokens.py`` counted them before sending (``?`` for a run made before they were
recorded); ``membersCut`` and ``overCap`` (present only when not 0) say what the prompt cap cost.

Counts may come from a hand-typed trailer: values are kept as they are (not coerced), and each renderer escapes
everything it shows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

USAGE_KEYS = ("inputTokens", "outputTokens", "failedCalls", "budgetSkipped")
"""The keys every bound phase's counts carry (``ModelUsage.wire``, sleep/engine/env.py)."""

RAIL_PREFIX = "rail"
"""Wire prefix of a per-rail rejection count: ``railUnknownKey`` counts the ``unknown-key`` rail."""

_RAIL_KEY = re.compile(r"^rail[A-Z]")


@dataclass(frozen=True)
class ModelLine:
    """One phase's model use.

    Attributes:
        phase: the phase name.
        calls: calls made, or ``None`` when only the trailer is known.
        input_tokens / output_tokens / failed_calls / budget_skipped: the count values, as recorded.
        largest_prompt / prompt_tokens: the request sizes as recorded, ``None`` when the counts have none.
        members_cut / over_cap: the prompt cap's cost as recorded (``0`` when absent).
        rails: ``(rail name, count value)`` per rail that refused something, in the counts' order; the name is the
            kebab-case rail (``unknown-key``), the value as recorded.
    """

    phase: str
    calls: int | None
    input_tokens: object
    output_tokens: object
    failed_calls: object
    budget_skipped: object
    rails: tuple[tuple[str, object], ...]
    largest_prompt: object = None
    prompt_tokens: object = None
    members_cut: object = 0
    over_cap: object = 0

    def rails_text(self) -> str:
        """``unknown-key 3, veto 1``, or ``none``."""
        return ", ".join(f"{name} {value_text(value)}" for name, value in self.rails) or "none"

    def fit_text(self) -> str:
        """``3 cut, 1 over cap``, one part of it, or ``none``."""
        parts = [f"{value_text(value)} {label}" for value, label in ((self.members_cut, "cut"),
                                                                       (self.over_cap, "over cap")) if value != 0]
        return ", ".join(parts) or "none"


def rail_name(key: str) -> str:
    """``railUnknownKey`` → ``unknown-key`` (the inverse of the runner's camel-casing)."""
    body = key[len(RAIL_PREFIX):]
    return re.sub(r"(?<!^)(?=[A-Z])", "-", body).lower()


def model_line(phase: str, counts: Mapping[str, object], calls: int | None) -> ModelLine | None:
    """The model use of one phase, or ``None`` when its counts carry no usage keys (no model was bound)."""
    if not all(key in counts for key in USAGE_KEYS):
        return None
    rails = tuple((rail_name(key), value) for key, value in counts.items() if _RAIL_KEY.match(key))
    return ModelLine(phase, calls, counts["inputTokens"], counts["outputTokens"], counts["failedCalls"],
                     counts["budgetSkipped"], rails, counts.get("largestPrompt"), counts.get("promptTokens"),
                     counts.get("membersCut", 0), counts.get("overCap", 0))


def model_lines(rows: Iterable[tuple[str, Mapping[str, object], int | None]]) -> list[ModelLine]:
    """The :class:`ModelLine` of every ``(phase, counts, calls)`` row that had a model, in order."""
    out: list[ModelLine] = []
    for phase, counts, calls in rows:
        line = model_line(phase, counts, calls)
        if line is not None:
            out.append(line)
    return out


def review_model_lines(review: Mapping[str, Any]) -> list[ModelLine]:
    """The model lines of a ``review_run`` result: from its phase rows (calls known), or, on a clone without the
    run's rows, from its commits' trailers (calls ``None``)."""
    phases = review.get("phases") or []
    if phases:
        return model_lines((str(p["phase"]), _counts(p.get("counts")), _calls(p.get("llmCalls"))) for p in phases)
    return model_lines((str(c.get("phase") or "?"), _counts(c.get("counts")), None)
                       for c in review.get("commits") or [])


def _counts(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _calls(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


HEADERS = ("phase", "calls", "largest request", "request tokens", "input tokens", "output tokens", "failed calls",
           "budget skipped", "cut to fit", "rejections by rail")
"""Column headings of every model-use table (``largest request``, ``request tokens``: counted before sending;
``input tokens``: as the provider reported)."""


def value_text(value: object) -> str:
    """A count value as text: ints and strings verbatim, booleans ``true``/``false``, anything else compact JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | str):
        return str(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True, default=str)


def cells(line: ModelLine) -> tuple[str, ...]:
    """The row of ``line`` as plain text, one cell per :data:`HEADERS` entry (unknown calls are ``?``)."""
    return (line.phase, "?" if line.calls is None else str(line.calls), _known(line.largest_prompt),
            _known(line.prompt_tokens), value_text(line.input_tokens), value_text(line.output_tokens),
            value_text(line.failed_calls), value_text(line.budget_skipped), line.fit_text(), line.rails_text())


def _known(value: object) -> str:
    """A count that older runs do not record: ``?`` when absent."""
    return "?" if value is None else value_text(value)
