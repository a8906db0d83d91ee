"""A memory draft: the one value object of a memory to render, and the table of its head fields.

Every door that authors a memory (``write``/``correct`` flags, an ``apply`` JSONL op, a sleep phase minting a file)
builds a :class:`MemoryDraft`; :func:`git_memhtml.document.template.render_memory` renders it. Which head meta a
field becomes, whether it repeats, which key of an ``apply`` op and which ``write`` flag fills it is declared once,
in :data:`HEAD_FIELDS`; the op parser (``store/ops.py``), the CLI (``cli/memory_cmds.py``) and the renderer are
driven by that table (docs/store.md "The memory draft").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Final, Literal

from git_memhtml.document.model import Link

FieldKind = Literal["title", "claim", "body", "article", "scalar", "repeatable", "links"]
"""What a head field is: the ``<title>``; one of the two article doors (``claim`` + ``body`` prose, or raw
``article`` HTML); a ``scalar`` meta (one value or none); a ``repeatable`` meta (a tuple of values, blanks skipped);
the head ``links``."""


def format_confidence(value: float) -> str:
    """Two decimals, ties rounded up like ECMAScript ``toFixed(2)`` (docs/format.md §1.2)."""
    return str(Decimal(value).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _integer(value: int) -> str:
    return str(int(value))


@dataclass(frozen=True)
class HeadField:
    """One field of a :class:`MemoryDraft`.

    ``attr`` is the draft attribute; ``meta`` the short on-disk meta name (``None`` for the title, the article
    doors and the links); ``op_key`` the key of an ``apply`` op that fills it (``None``: no op key); ``op_one`` a
    second op key adding one more value to a repeatable (``tag`` beside ``tags``; both merged, stripped and
    deduplicated); ``flag`` the ``write``/``correct`` option that fills it; ``label`` how the render gate names the
    field when it holds a character HTML cannot carry (``None``: not checked); ``text`` renders a scalar's value
    (``str`` unless said).
    """

    attr: str
    kind: FieldKind
    meta: str | None = None
    op_key: str | None = None
    op_one: str | None = None
    flag: str | None = None
    label: str | None = None
    text: Callable[[Any], str] = str


HEAD_FIELDS: Final[tuple[HeadField, ...]] = (
    # Checked fields first, in the order the render gate reports them.
    HeadField("title", "title", op_key="title", flag="--title", label="title"),
    HeadField("claim", "claim", op_key="claim", flag="--claim", label="claim"),
    HeadField("article_html", "article", op_key="article_html", flag="--article-html", label="article_html"),
    HeadField("author", "scalar", meta="author", label="author"),
    HeadField("body", "body", op_key="body", flag="--body", label="body paragraph"),
    HeadField("entities", "repeatable", meta="entity", op_key="entities", op_one="entity", flag="--entity",
              label="entity"),
    HeadField("tags", "repeatable", meta="tag", op_key="tags", op_one="tag", flag="--tag", label="tag"),
    HeadField("aliases", "repeatable", meta="alias", op_key="aliases", label="alias"),
    HeadField("links", "links", op_key="links", label="link href"),
    HeadField("valid_from", "scalar", meta="valid-from", op_key="valid_from", label="valid-from"),
    HeadField("valid_until", "scalar", meta="valid-until", op_key="valid_until", label="valid-until"),
    HeadField("due", "scalar", meta="due", op_key="due", label="due"),
    # Fields the gate does not scan (a closed vocabulary, a number, or an id the op door already refuses).
    HeadField("memory_type", "scalar", meta="type", op_key="type", flag="--type"),
    HeadField("status", "scalar", meta="status"),
    HeadField("confidence", "scalar", meta="confidence", op_key="confidence", flag="--confidence",
              text=format_confidence),
    HeadField("importance", "scalar", meta="importance", op_key="importance", flag="--importance",
              text=_integer),
    HeadField("session_id", "scalar", meta="session", op_key="session_id", flag="--session-id"),
    HeadField("prompt_id", "scalar", meta="prompt", op_key="prompt_id"),
    HeadField("turn_uuid", "scalar", meta="turn", op_key="turn_uuid"),
    HeadField("task_status", "scalar", meta="task-status", op_key="status"),
)
"""The head fields of a draft, each declared once (issue 9 item 4). Adding a head meta is one row here, one
:class:`MemoryDraft` attribute and its name in ``document.model.META_ORDER`` (plus an op field in
``store/ops.py`` and a click option when a door takes it). ``created``, ``updated`` and ``content-hash`` are not
fields: the renderer stamps them. The order of the rows is the order in which the render gate lists the fields
holding characters HTML cannot carry (after them come ``extra_metas``)."""


@dataclass(frozen=True)
class MemoryDraft:
    """A new memory before it is rendered: the title, exactly one article door, and the head fields.

    ``body`` holds prose paragraphs after ``claim`` (blank lines inside a fence kept); ``article_html`` is the
    other door. ``confidence`` is a number in [0, 1] (rendered with two decimals), ``importance`` an integer 1-10;
    instants are ISO strings. Blank entity/tag/alias values are skipped when rendered. ``extra_metas`` are
    ``(short name, value)`` pairs appended after the fields' metas. Sequences are stored as tuples.
    """

    title: str
    memory_type: str
    claim: str | None = None
    body: Sequence[str] = ()
    article_html: str | None = None
    status: str = "active"
    confidence: float | None = None
    importance: int | None = None
    author: str | None = None
    entities: Sequence[str] = ()
    tags: Sequence[str] = ()
    aliases: Sequence[str] = ()
    links: Sequence[Link] = ()
    session_id: str | None = None
    prompt_id: str | None = None
    turn_uuid: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    task_status: str | None = None
    due: str | None = None
    extra_metas: Sequence[tuple[str, str]] = ()

    def __post_init__(self) -> None:
        for name in ("body", "entities", "tags", "aliases", "links", "extra_metas"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    def head_metas(self) -> list[tuple[str, str]]:
        """``(short name, value)`` of every meta the fields give: each scalar that is not ``None`` (through its
        ``text``), then each non-blank repeatable value in field order, then ``extra_metas``. Unsorted: the
        serializer sorts them into ``META_ORDER`` (stable), so a field's value precedes an extra one of its name."""
        metas: list[tuple[str, str]] = []
        for spec in HEAD_FIELDS:
            if spec.kind == "scalar" and spec.meta is not None:
                value = getattr(self, spec.attr)
                if value is not None:
                    metas.append((spec.meta, spec.text(value)))
        for spec in HEAD_FIELDS:
            if spec.kind == "repeatable" and spec.meta is not None:
                metas.extend((spec.meta, value) for value in getattr(self, spec.attr) if value.strip())
        metas.extend(self.extra_metas)
        return metas

    def texts(self) -> list[tuple[str, str | None]]:
        """``(label, value)`` of every text the render gate scans, in :data:`HEAD_FIELDS` order (body paragraphs as
        ``body paragraph N``, 1-based), then ``extra_metas`` under their own names."""
        out: list[tuple[str, str | None]] = []
        for spec in HEAD_FIELDS:
            if spec.label is None:
                continue
            value = getattr(self, spec.attr)
            if spec.kind == "body":
                out.extend((f"{spec.label} {i + 1}", paragraph) for i, paragraph in enumerate(value))
            elif spec.kind == "links":
                out.extend((spec.label, link.href) for link in value)
            elif spec.kind == "repeatable":
                out.extend((spec.label, item) for item in value)
            else:
                out.append((spec.label, value))
        out.extend(self.extra_metas)
        return out

