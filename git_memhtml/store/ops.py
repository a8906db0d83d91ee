"""The write operation as callers give it: one JSONL line of ``apply`` or the flags of ``write``.

Validated by pydantic at the boundary (:class:`OpLine`, unknown fields refused), then read into a
:class:`WriteOp`: a :class:`~git_memhtml.document.draft.MemoryDraft` (filled through the ``op_key`` column of
``document.draft.HEAD_FIELDS``) plus where the file goes. ``document.template.render_memory`` renders the draft.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from git_memhtml.document.draft import HEAD_FIELDS, MemoryDraft
from git_memhtml.document.model import REL_CLASSES, TASK_STATUSES, WRITABLE_TYPES, Link, entity_problem
from git_memhtml.document.template import split_paragraphs, split_prose
from git_memhtml.errors import UsageError
from git_memhtml.gitrepo.message import has_control
from git_memhtml.pathnames import shown_name


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


class OpLine(BaseModel):
    """One memory to write as an ``apply`` line gives it (docs/store.md §5.2, plus validity and links):
    the op's JSON shape, types, bounds and documentation (``apply -h``, docs/apply.md). Read into a
    :class:`WriteOp` by :meth:`WriteOp.from_json`."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    op: Literal["write"] = Field("write", description="the operation; only write exists")
    title: str = Field(min_length=1, description="the memory's title (the <title> and <h1>)")
    type: str = Field(description="one of " + ", ".join(WRITABLE_TYPES) + " (arc is written by sleep only)")
    claim: str | None = Field(None, description="the one-sentence claim, kept verbatim as the <mark>")
    body: str | None = Field(None, description="prose: without claim, its first sentence is the claim; blank lines "
                                               "split paragraphs")
    article_html: str | None = Field(None, description="raw inner HTML of the article instead of claim/body "
                                                       "(exactly one of the two)")
    path: str | None = Field(None, description="explicit repository path <projects|areas|resources>/<folder>/"
                                               "<name>.html (default: placement rules)")
    workspace: str | None = Field(None, description="project workspace: the file goes to projects/<workspace>/")
    tags: tuple[str, ...] = Field((), description="list of tags")
    tag: str | None = Field(None, description="one more tag")
    entities: tuple[str, ...] = Field((), description="list of type:name entities")
    entity: str | None = Field(None, description="one more type:name entity")
    aliases: tuple[str, ...] = Field((), description="other names of the memory's subject")
    importance: int | None = Field(default=None, ge=1, le=10, description="integer 1-10")
    confidence: float | None = Field(default=None, ge=0.0, le=1.0, description="number 0-1")
    valid_from: str | None = Field(None, description="ISO instant the fact starts to hold")
    valid_until: str | None = Field(None, description="ISO instant the fact stops holding")
    links: tuple[LinkOp, ...] = Field((), description='list of {"rel": …, "href": …} head links (rel of the '
                                                      'closed vocabulary, href root-relative)')
    session_id: str | None = Field(None, description="provenance: the agent session id")
    prompt_id: str | None = Field(None, description="provenance: the prompt id")
    turn_uuid: str | None = Field(None, description="provenance: the turn id")
    status: str | None = Field(None, description="task status, type task only: " + ", ".join(TASK_STATUSES))
    due: str | None = Field(None, description="task due date, type task only")

    @field_validator("session_id", "prompt_id", "turn_uuid")
    @classmethod
    def _one_line_id(cls, value: str | None) -> str | None:
        """Provenance ids become commit trailers and head metas: one line, no control characters (docs/store.md
        "Commit messages"); refused rather than folded, since a folded id would name another session."""
        if value is not None and has_control(value):
            raise ValueError("must be one line without control characters (a provenance id, e.g. --session-id)")
        return value

    @field_validator("entities", "entity")
    @classmethod
    def _type_name_entities(cls, value: str | tuple[str, ...] | None) -> str | tuple[str, ...] | None:
        """Each non-blank entity is ``type:name`` (:func:`document.model.entity_problem`, the rule ``search
        --entity`` and ``validate`` apply); a blank one is dropped as before (:func:`distinct`)."""
        for item in (value,) if isinstance(value, str) else value or ():
            problem = entity_problem(item) if item.strip() else None
            if problem is not None:
                raise ValueError(f"{item!r} {problem}, e.g. person:Priya")
        return value

    @field_validator("type")
    @classmethod
    def _writable(cls, value: str) -> str:
        if value not in WRITABLE_TYPES:
            raise ValueError(f"type must be one of {', '.join(WRITABLE_TYPES)}")
        return value

    @model_validator(mode="after")
    def _one_door(self) -> OpLine:
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


def distinct(values: Sequence[str]) -> tuple[str, ...]:
    """``values`` stripped, blanks dropped, order kept, deduplicated (how tags and entities are merged)."""
    seen: dict[str, None] = {}
    for value in values:
        if value and value.strip():
            seen.setdefault(value.strip(), None)
    return tuple(seen)


def _draft(line: OpLine) -> MemoryDraft:
    """The draft of a validated op, field by field through ``HEAD_FIELDS`` (its ``op_key`` and ``op_one``).

    The prose door: with a claim, ``body`` is split into paragraphs on blank lines; without one, its first sentence
    is the claim (:func:`split_prose`). A blank ``article_html`` is no article. A repeatable with a second key
    (``tag`` beside ``tags``) is merged by :func:`distinct`; links become :class:`Link` values."""
    values: dict[str, Any] = {}
    for spec in HEAD_FIELDS:
        if spec.op_key is None or spec.kind in ("claim", "body"):
            continue
        value = getattr(line, spec.op_key)
        if spec.kind == "article":
            value = value if value and value.strip() else None
        elif spec.kind == "links":
            value = tuple(Link(item.rel, item.href) for item in value)
        elif spec.kind == "repeatable" and spec.op_one is not None:
            one = getattr(line, spec.op_one)
            value = distinct([*value, *([one] if one else [])])
        values[spec.attr] = value
    if line.claim and line.claim.strip():
        values["claim"], values["body"] = line.claim.strip(), tuple(split_paragraphs(line.body or ""))
    elif line.body and line.body.strip():
        claim, body = split_prose(line.body)
        values["claim"], values["body"] = claim, tuple(body)
    return MemoryDraft(**values)


@dataclass(frozen=True)
class WriteOp:
    """One memory to write: its :class:`MemoryDraft` and where it goes (an explicit repository ``path``, or the
    project ``workspace`` for the placement rules; neither: the placement rules alone)."""

    draft: MemoryDraft
    path: str | None = None
    workspace: str | None = None

    @classmethod
    def from_json(cls, raw: Mapping[str, object]) -> WriteOp:
        """Validate a decoded JSON op (an ``apply`` line, or the ``write`` flags keyed by op key) and read it.

        Raises:
            pydantic.ValidationError: the op model refused it (each error has a ``loc`` and a ``msg``).
        """
        line = OpLine.model_validate(raw)
        return cls(_draft(line), path=line.path, workspace=line.workspace)


def _type_name(annotation: object) -> str:
    """A JSON-ish name of a field's annotation: ``string``, ``integer``, ``number``, ``list``."""
    text = str(annotation)
    if "tuple" in text:
        return "list"
    for python, json_name in (("int", "integer"), ("float", "number"), ("Literal", "string"), ("str", "string")):
        if python in text:
            return json_name
    return text


def op_schema() -> list[tuple[str, str, str]]:
    """``(field, JSON type, description)`` of every :class:`OpLine` field, in model order, generated from the
    pydantic model (the source of ``apply -h`` and ``docs/apply.md``); a required field says ``required``."""
    rows = []
    for name, info in OpLine.model_fields.items():
        need = "required; " if info.is_required() else ""
        rows.append((name, _type_name(info.annotation), need + (info.description or "")))
    return rows


def op_schema_text() -> str:
    """The op schema as plain text lines for ``apply -h`` (one ``field (type): description`` per field)."""
    return "\n".join(f"  {name} ({kind}): {text}" for name, kind, text in op_schema())


def op_schema_markdown() -> str:
    """The op schema as the Markdown table of ``docs/apply.md`` (regenerated and compared by a test)."""
    lines = ["| field | type | meaning |", "| --- | --- | --- |"]
    lines += [
        f"| `{name}` | {kind} | {text.replace('|', '/').replace('<', '&lt;')} |" for name, kind, text in op_schema()
    ]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class BadLine:
    """A line of an ``apply`` stream that is not a valid op: its 1-based line number and the reason."""

    line: int
    reason: str


def _shown(value: str) -> str:
    """``value`` printable: bytes a surrogateescape decode left as ``\\xNN`` (:func:`shown_name`), any other lone
    surrogate as ``\\udNNN``."""
    try:
        return shown_name(value)
    except UnicodeEncodeError:
        return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _surrogate_field(raw: object, where: str = "op") -> str | None:
    """``field 'value'`` of the first string in a decoded JSON op that UTF-8 cannot encode, or ``None``."""
    if isinstance(raw, str):
        try:
            raw.encode("utf-8")
        except UnicodeEncodeError:
            return f"{where} '{_shown(raw)}'"
        return None
    items = raw.items() if isinstance(raw, dict) else enumerate(raw) if isinstance(raw, list) else ()
    for key, value in items:
        label = key if isinstance(key, str) else f"{where}[{key}]"
        found = _surrogate_field(label, "field name") if isinstance(key, str) else None
        found = found or _surrogate_field(value, label if where == "op" else f"{where}.{label}")
        if found:
            return found
    return None


def jsonl_lines(text: str) -> list[str]:
    """The lines of a JSONL text: split on ``\n`` only (a trailing ``\r`` dropped), never on the other breaks
    ``str.splitlines`` knows (U+2028, U+2029, U+0085, VT, FF, FS, GS, RS), which JSON allows raw inside a string."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def parse_op_lines(text: str, *, source: str = "<stdin>") -> list[WriteOp | BadLine]:
    """Parse every non-blank line of a JSONL ``apply`` stream, in order, into a :class:`WriteOp` or a
    :class:`BadLine` (not JSON, not an object, or refused by the model; ``reason`` starts ``<source>:<line>:``).

    Never raises for a bad line; :func:`parse_op_stream` refuses the stream when any line is bad.
    """
    parsed: list[WriteOp | BadLine] = []
    for number, line in enumerate(jsonl_lines(text), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            parsed.append(BadLine(number, f"{source}:{number}: not JSON ({exc.msg})"))
            continue
        if not isinstance(raw, dict):
            parsed.append(BadLine(number, f"{source}:{number}: expected a JSON object"))
            continue
        surrogate = _surrogate_field(raw)
        if surrogate is not None:
            parsed.append(BadLine(number, f"{source}:{number}: {surrogate}: not UTF-8 text (a lone surrogate such as "
                                          "a \\ud800 escape)"))
            continue
        try:
            parsed.append(WriteOp.from_json(raw))
        except ValidationError as exc:
            reasons = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'op'}: {err['msg'].removeprefix('Value error, ')}"
                for err in exc.errors()
            )
            parsed.append(BadLine(number, f"{source}:{number}: {reasons}"))
    return parsed


def parse_op_stream(text: str, *, source: str = "<stdin>") -> list[WriteOp]:
    """Parse a JSONL ``apply`` stream; blank lines are skipped.

    Raises:
        UsageError: listing every malformed line as ``<source>:<line>: <reason>`` (exit 2, nothing written).
    """
    parsed = parse_op_lines(text, source=source)
    problems = [item.reason for item in parsed if isinstance(item, BadLine)]
    ops = [item for item in parsed if isinstance(item, WriteOp)]
    if problems:
        shown = problems[:20]
        more = f" (+{len(problems) - 20} more)" if len(problems) > 20 else ""
        raise UsageError(
            f"malformed apply stream, nothing written: {len(problems)} bad line(s){more}:\n  " + "\n  ".join(shown),
            hint="fix the listed lines (or pass --continue-on-error to write the others); each line is one JSON "
                 "object with op, title, type and body or article_html (git memhtml apply -h lists every field)",
        )
    if not ops:
        raise UsageError(f"{source}: the apply stream holds no operations", hint="give one JSON object per line")
    return ops
