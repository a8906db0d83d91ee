"""The write operation as callers give it: one JSONL line of ``apply`` or the flags of ``write``.

Validated by pydantic at the boundary (unknown fields refused), then rendered by ``document.template``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from git_memhtml.document.model import MEMORY_TYPES, REL_CLASSES, TASK_STATUSES
from git_memhtml.errors import UsageError

WRITABLE_TYPES = tuple(t for t in MEMORY_TYPES if t != "arc")
"""Agents write the nine types without ``arc``, which only sleep synthesises (core §1.5)."""


class LinkOp(BaseModel):
    """A head link to author: ``rel`` of the closed vocabulary, ``href`` root-relative."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    rel: str
    href: str

    @field_validator("rel")
    @classmethod
    def _known_rel(cls, value: str) -> str:
        rel = value.replace("-", "_")
        if rel not in REL_CLASSES:
            raise ValueError(f"unknown rel {value!r}; one of {', '.join(sorted(REL_CLASSES))}")
        return rel


class WriteOp(BaseModel):
    """One memory to write (``spec/memhtml-core.md`` §5.2 apply line, plus validity and links)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    op: Literal["write"] = "write"
    title: str = Field(min_length=1)
    type: str
    claim: str | None = None
    body: str | None = None
    article_html: str | None = None
    path: str | None = None
    workspace: str | None = None
    tags: tuple[str, ...] = ()
    tag: str | None = None
    entities: tuple[str, ...] = ()
    entity: str | None = None
    aliases: tuple[str, ...] = ()
    importance: int | None = Field(default=None, ge=1, le=10)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    valid_from: str | None = None
    valid_until: str | None = None
    links: tuple[LinkOp, ...] = ()
    session_id: str | None = None
    prompt_id: str | None = None
    turn_uuid: str | None = None
    status: str | None = None
    due: str | None = None

    @field_validator("type")
    @classmethod
    def _writable(cls, value: str) -> str:
        if value not in WRITABLE_TYPES:
            raise ValueError(f"type must be one of {', '.join(WRITABLE_TYPES)}")
        return value

    @model_validator(mode="after")
    def _one_door(self) -> WriteOp:
        has_prose = bool((self.body and self.body.strip()) or (self.claim and self.claim.strip()))
        has_html = bool(self.article_html and self.article_html.strip())
        if has_prose == has_html:
            raise ValueError("give exactly one of body (prose, or claim + body) or article_html")
        if self.status is not None:
            if self.type != "task":
                raise ValueError("status is the task status; only type task takes it")
            if self.status not in TASK_STATUSES:
                raise ValueError(f"status must be one of {', '.join(TASK_STATUSES)}")
        if self.due is not None and self.type != "task":
            raise ValueError("due applies to type task only")
        return self

    def all_tags(self) -> tuple[str, ...]:
        """Tags from ``tags`` and ``tag``, blanks dropped, order kept, deduplicated."""
        return _dedupe([*self.tags, *([self.tag] if self.tag else [])])

    def all_entities(self) -> tuple[str, ...]:
        """Entities from ``entities`` and ``entity``, blanks dropped, order kept, deduplicated."""
        return _dedupe([*self.entities, *([self.entity] if self.entity else [])])


def _dedupe(values: Sequence[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for value in values:
        if value and value.strip():
            seen.setdefault(value.strip(), None)
    return tuple(seen)


def parse_op_stream(text: str, *, source: str = "<stdin>") -> list[WriteOp]:
    """Parse a JSONL ``apply`` stream; blank lines are skipped.

    Raises:
        UsageError: listing every malformed line as ``<source>:<line>: <reason>`` (exit 2, nothing written).
    """
    ops: list[WriteOp] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{source}:{number}: not JSON ({exc.msg})")
            continue
        if not isinstance(raw, dict):
            problems.append(f"{source}:{number}: expected a JSON object")
            continue
        try:
            json.dumps(raw, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            problems.append(f"{source}:{number}: not UTF-8 text (a lone surrogate such as a \\ud800 escape)")
            continue
        try:
            ops.append(WriteOp.model_validate(raw))
        except ValidationError as exc:
            reasons = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'op'}: {err['msg'].removeprefix('Value error, ')}"
                for err in exc.errors()
            )
            problems.append(f"{source}:{number}: {reasons}")
    if problems:
        shown = problems[:20]
        more = f" (+{len(problems) - 20} more)" if len(problems) > 20 else ""
        raise UsageError(
            f"malformed apply stream, nothing written: {len(problems)} bad line(s){more}:\n  " + "\n  ".join(shown),
            hint="fix the listed lines; each line is one JSON object with op, title, type and body or article_html",
        )
    if not ops:
        raise UsageError(f"{source}: the apply stream holds no operations", hint="give one JSON object per line")
    return ops
