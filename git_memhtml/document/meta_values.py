"""Head meta values: dates, numbers and the typed reading of every ``memhtml-`` meta (docs/format.md §1.2, §1.7). Pure;
ASCII digits only."""

from __future__ import annotations

import calendar
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from git_memhtml.document.hash import js_trim
from git_memhtml.document.model import MEMORY_TYPES, STATUSES, TASK_STATUSES, entity_problem

_DATETIME: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.[0-9]+)?)?)?"
    r"(?:Z|[+-]([0-9]{2}):?([0-9]{2}))?"
)
"""Used with ``fullmatch``: ASCII digits only (``\\d`` would take ``２０２６`` or Arabic-Indic digits) and no
trailing newline (``$`` would accept one)."""
_JS_DECIMAL: Final = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_JS_RADIX: Final = re.compile(r"0([xXoObB])([0-9a-fA-F]+)")
"""Both used with ``fullmatch`` on the trimmed text: ASCII digits only, as ECMAScript ``Number`` reads them."""
MAX_SAFE_INTEGER: Final[int] = 2**53 - 1
"""Upper bound of ``memhtml-reprieves`` (the original reads numbers as IEEE doubles)."""
TRUE_WORDS: Final[frozenset[str]] = frozenset({"true", "1", "yes"})
"""``memhtml-needs-revision`` values read as true, case-insensitive (docs/format.md §1.2)."""



def show(value: str, limit: int = 60) -> str:
    """A value quoted for a one-line message: JSON-escaped (no raw newlines), truncated to ``limit`` chars."""
    text = value if len(value) <= limit else value[:limit] + "…"
    return json.dumps(text, ensure_ascii=False)


def is_valid_datetime(value: str) -> bool:
    """True for ``YYYY-MM-DD[(T| )HH:MM[:SS[.f]]][Z|±HH[:]MM]`` with a real calendar date, hour ≤ 23,
    minute ≤ 59, second ≤ 60 (leap second), zone hour ≤ 23 and zone minute ≤ 59 (docs/format.md §1.7 rule 2). ASCII
    digits only; nothing may follow (not even a newline)."""
    match = _DATETIME.fullmatch(value)
    if match is None:
        return False
    year, month, day, hour, minute, second, zone_h, zone_m = match.groups()
    if not 1 <= int(month) <= 12 or not 1 <= int(day) <= calendar.monthrange(int(year), int(month))[1]:
        return False
    if hour is not None and (int(hour) > 23 or int(minute) > 59):
        return False
    if second is not None and int(second) > 60:
        return False
    return zone_h is None or (int(zone_h) <= 23 and int(zone_m) <= 59)


def js_number(value: str) -> float | None:
    """ECMAScript ``Number(value)``: ``None`` for NaN; blank is 0; ``0x``/``0o``/``0b`` radix; ±Infinity.
    Only ASCII digits count (``"５"`` and ``"٠.٥"`` are NaN, as in JavaScript, although Python's ``float`` reads
    them)."""
    text = js_trim(value)
    if text == "":
        return 0.0
    radix = _JS_RADIX.fullmatch(text)
    if radix is not None:
        base = {"x": 16, "o": 8, "b": 2}[radix.group(1).lower()]
        try:
            return float(int(radix.group(2), base))
        except ValueError:
            return None
    if text in ("Infinity", "+Infinity", "-Infinity"):
        return float("-inf") if text.startswith("-") else float("inf")
    return float(text) if _JS_DECIMAL.fullmatch(text) else None


@dataclass(frozen=True)
class MetaValues:
    """Typed reading of the head metas (docs/format.md §1.2): first value of each scalar, optionals ``None`` when
    absent or dropped; ``violations`` and ``warnings`` explain what was refused or dropped."""

    memory_type: str | None
    status: str | None
    confidence: float | None
    importance: int | None
    reprieves: int | None
    needs_revision: bool
    task_status: str | None
    due: str | None
    violations: tuple[str, ...]
    warnings: tuple[str, ...]


def _bounded(value: str | None, low: float, high: float, integral: bool) -> tuple[float | None, bool]:
    """``(number, dropped)``: the value in ``[low, high]`` (integral when asked), or ``None``."""
    if value is None:
        return None, False
    number = js_number(value)
    if number is None or number != number or number in (float("inf"), float("-inf")):
        return None, True
    if number < low or number > high or (integral and not number.is_integer()):
        return None, True
    return number, False


def read_meta_values(metas: Sequence[tuple[str, str]]) -> MetaValues:
    """Read and check ``(short name, value)`` head metas (docs/format.md §1.2, §1.7).

    Violations: type outside ``MEMORY_TYPES``, status outside ``active|archived``, task coupling (a task without
    ``task-status``, a non-task with one, a value outside ``TASK_STATUSES``), a ``due`` that is not a valid
    datetime, a non-empty ``memhtml-entity`` that is not ``type:name`` (:func:`document.model.entity_problem`, the
    rule of ``write --entity`` and ``search --entity``; an empty one is ignored, docs/format.md §1.2). Warnings (value
    dropped): confidence not in [0, 1], importance not an integer 1-10, reprieves not an integer >= 0.
    """
    first: dict[str, str] = {}
    for name, value in metas:
        first.setdefault(name, value)
    violations: list[str] = []
    warnings: list[str] = []
    raw_type, raw_status = first.get("type"), first.get("status")
    memory_type = raw_type if raw_type in MEMORY_TYPES else None
    status = raw_status if raw_status in STATUSES else None
    if raw_type is not None and memory_type is None:
        violations.append(f"memhtml-type {show(raw_type)} is not one of {', '.join(MEMORY_TYPES)}")
    if raw_status is not None and status is None:
        violations.append(f"memhtml-status {show(raw_status)} is neither active nor archived")
    raw_task, due = first.get("task-status"), first.get("due")
    if raw_task is not None and memory_type != "task":
        violations.append(f"memhtml-task-status on a {memory_type or 'typeless'} memory: only a task has one")
    if raw_task is not None and raw_task not in TASK_STATUSES:
        violations.append(f"memhtml-task-status {show(raw_task)} is not one of {', '.join(TASK_STATUSES)}")
    if memory_type == "task" and raw_task is None:
        violations.append('a task needs <meta name="memhtml-task-status">')
    if due is not None and not is_valid_datetime(due):
        violations.append(f"memhtml-due {show(due)} is not a valid ISO date or datetime")
    confidence, bad = _bounded(first.get("confidence"), 0.0, 1.0, False)
    if bad:
        warnings.append(f"memhtml-confidence {show(first['confidence'])} is not a number in [0, 1]; dropped")
    importance, bad = _bounded(first.get("importance"), 1.0, 10.0, True)
    if bad:
        warnings.append(f"memhtml-importance {show(first['importance'])} is not an integer 1-10; dropped")
    reprieves, bad = _bounded(first.get("reprieves"), 0.0, float(MAX_SAFE_INTEGER), True)
    if bad:
        warnings.append(f"memhtml-reprieves {show(first['reprieves'])} is not an integer >= 0; dropped")
    for name, value in metas:
        problem = entity_problem(value) if name == "entity" and value.strip() else None
        if problem is not None:
            violations.append(f"memhtml-entity {show(value)} {problem}")
    needs = first.get("needs-revision")
    return MetaValues(
        memory_type=memory_type,
        status=status,
        confidence=confidence,
        importance=None if importance is None else int(importance),
        reprieves=None if reprieves is None else int(reprieves),
        needs_revision=needs is not None and needs.lower() in TRUE_WORDS,
        task_status=raw_task if raw_task in TASK_STATUSES else None,
        due=due,
        violations=tuple(violations),
        warnings=tuple(warnings),
    )
