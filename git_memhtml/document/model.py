"""Value objects of the memory file format (docs/format.md §1).

Names in this module use the *short* meta names (``type``, ``confidence`` …, i.e. without the ``memhtml-``
prefix) and link rels in their underscore form (``supersedes``, ``about_person`` …). The on-disk token is
``memhtml-`` + name (rels with ``_`` → ``-``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MEMORY_TYPES: tuple[str, ...] = (
    "episodic",
    "semantic",
    "procedural",
    "agent_insight",
    "user_preference",
    "error_pattern",
    "verdict",
    "precedent",
    "arc",
    "task",
)
"""The ten memory types (docs/format.md §1.5)."""

WRITABLE_TYPES: tuple[str, ...] = tuple(t for t in MEMORY_TYPES if t != "arc")
"""Agents write the nine types without ``arc``, which only sleep synthesises (docs/format.md §1.5)."""

TASK_STATUSES: tuple[str, ...] = ("todo", "doing", "blocked", "done")
STATUSES: tuple[str, ...] = ("active", "archived")
PARA_BUCKETS: tuple[str, ...] = ("projects", "areas", "resources", "archive")
"""The four PARA buckets, the top folders whose ``.html`` files are memories (docs/layout.md §2.1). The one
declaration: every other spelling (git prefixes, ``--para`` choices, init's folders) derives from it."""
PARA_PREFIXES: tuple[str, ...] = tuple(f"{bucket}/" for bucket in PARA_BUCKETS)
"""The buckets as path prefixes (``"projects/"`` …), for ``str.startswith`` and git pathspecs."""

META_ORDER: tuple[str, ...] = (
    "type",
    "status",
    "created",
    "updated",
    "confidence",
    "importance",
    "content-hash",
    "author",
    "session",
    "prompt",
    "turn",
    "valid-from",
    "valid-until",
    "reprieves",
    "archived",
    "superseded-by",
    "needs-revision",
    "task-status",
    "due",
    "entity",
    "tag",
    "alias",
)
"""Head meta emission order (docs/format.md §1.2). New scalars append to the scalar block, new
repeatables to the end."""

REPEATABLE_METAS: frozenset[str] = frozenset({"entity", "tag", "alias"})
REQUIRED_METAS: tuple[str, ...] = ("type", "status", "created", "updated")

REL_CLASSES: dict[str, str] = {
    "supersedes": "memory",
    "contradicts": "memory",
    "caused_by": "memory",
    "leads_to": "memory",
    "part_of": "memory",
    "relates_to": "memory",
    "example_of": "memory",
    "supports": "memory",
    "laterally_related": "memory",
    "about_person": "person",
    "authored_by": "person",
    "from_session": "provenance",
    "blocks": "task",
    "subtask_of": "task",
}
"""Closed link vocabulary, rel → edge class (docs/format.md §1.3)."""


def rel_token(rel: str) -> str:
    """Return the ``<link rel>`` token of a rel: ``memhtml-`` + rel with ``_`` → ``-``."""
    return "memhtml-" + rel.replace("_", "-")


def rel_from_token(token: str) -> str | None:
    """Return the rel of a ``memhtml-…`` token, or ``None`` when it is not a known rel."""
    if not token.startswith("memhtml-"):
        return None
    rel = token[len("memhtml-") :].replace("-", "_")
    return rel if rel in REL_CLASSES else None


@dataclass(frozen=True)
class Link:
    """One head ``<link>``: ``rel`` in underscore form, ``href`` root-relative (``/areas/x.html``)."""

    rel: str
    href: str


@dataclass(frozen=True)
class Facet:
    """One ``<dt>``/``<dd>`` pair; ``numeric_value`` is the first finite ``<data value>`` inside the ``<dd>``."""

    name: str
    value: str
    numeric_value: float | None = None


@dataclass(frozen=True)
class Citation:
    """A non-empty ``<cite>`` or ``<q>`` text, with ``q@cite`` as ``href``."""

    text: str
    href: str | None = None


@dataclass(frozen=True)
class ArticleFacts:
    """Everything a memory's ``<article>`` contributes (what a head-only rewrite leaves as it was): the canonical
    inner HTML, the content hash, the gist, the block-spaced text, the first ``<time datetime>``, facets,
    citations, ``<dfn>`` concepts, ``data-lang`` tokens and ``<summary>`` texts; ``source_digest`` is the digest
    of the article's source bytes when the fast parser vouched for the tree (:func:`git_memhtml.document.fast.
    article_digest`), else ``None`` (such facts are never reused)."""

    article_html: str
    content_hash: str
    gist: str
    body_text: str
    event_at: str | None = None
    facets: tuple[Facet, ...] = ()
    citations: tuple[Citation, ...] = ()
    concepts: tuple[str, ...] = ()
    langs: tuple[str, ...] = ()
    summaries: tuple[str, ...] = ()
    source_digest: str | None = None


@dataclass(frozen=True)
class MemoryDocument:
    """A parsed, valid memory file.

    ``metas`` keeps every ``memhtml-`` head meta in source order as ``(short name, value)``; the typed fields are
    read from it. Optional values that failed validation are ``None`` and reported in ``warnings``.
    """

    title: str
    memory_type: str
    status: str
    created: str
    updated: str
    article_html: str
    content_hash: str
    gist: str
    body_text: str
    metas: tuple[tuple[str, str], ...] = ()
    links: tuple[Link, ...] = ()
    confidence: float | None = None
    importance: int | None = None
    content_hash_meta: str | None = None
    author: str | None = None
    session_id: str | None = None
    prompt_id: str | None = None
    turn_uuid: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    reprieves: int | None = None
    archived_at: str | None = None
    superseded_by: str | None = None
    needs_revision: bool = False
    task_status: str | None = None
    due: str | None = None
    entities: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    event_at: str | None = None
    facets: tuple[Facet, ...] = ()
    citations: tuple[Citation, ...] = ()
    concepts: tuple[str, ...] = ()
    langs: tuple[str, ...] = ()
    summaries: tuple[str, ...] = ()
    warnings: tuple[str, ...] = field(default=())
    article_digest: str | None = field(default=None, compare=False)
    """Digest of the article's source bytes (:attr:`ArticleFacts.source_digest`), ``None`` from html5lib: a cache
    key of the bytes, not content, so it takes no part in equality."""

    @property
    def article(self) -> ArticleFacts:
        """The article's share of this document (:class:`ArticleFacts`)."""
        return ArticleFacts(
            article_html=self.article_html, content_hash=self.content_hash, gist=self.gist, body_text=self.body_text,
            event_at=self.event_at, facets=self.facets, citations=self.citations, concepts=self.concepts,
            langs=self.langs, summaries=self.summaries, source_digest=self.article_digest,
        )

    def meta(self, name: str) -> str | None:
        """Return the first value of head meta ``name`` (short form), or ``None``."""
        for key, value in self.metas:
            if key == name:
                return value
        return None


LANG_VALUE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_+#.-]*$")
"""A ``data-lang`` value that becomes a ``lang:`` entity, once trimmed and lowercased (docs/format.md §1.4)."""


def indexed_entity_values(doc: MemoryDocument) -> list[str]:
    """Every entity value a memory is found by, in order, duplicates kept: its ``memhtml-entity`` values (blank ones
    skipped), then ``concept:<dfn>`` and ``lang:<data-lang>`` from its article (docs/format.md §1.4). The one rule the
    index projects (``index.project``) and a fold carries to its keeper (``store.union``)."""
    values = [e for e in doc.entities if e.strip()]
    values += [f"concept:{c.strip()}" for c in doc.concepts if c.strip()]
    langs = [lang.strip().lower() for lang in doc.langs]
    values += [f"lang:{lang}" for lang in langs if LANG_VALUE.match(lang)]
    return values


ENTITY_FORM = "type:name"
"""How an entity is written: a type, a colon, a name (docs/format.md §1.8); the name may itself hold colons."""


def entity_problem(value: str) -> str | None:
    """Why ``value`` is not a ``type:name`` entity, or ``None`` when it is one. The one rule of every door (write and
    apply fields, the ``--entity`` scope flags, a ``memhtml-entity`` meta under ``validate``, issue 8 item 3): split
    at the first colon, as ``domain.entities.split_entity`` does; the type and the name must each hold something
    other than whitespace. ``a:b:c`` is type ``a``, name ``b:c`` (as search scopes it).

    >>> [entity_problem(v) is None for v in ("person:Priya", "url:https://x", "nocolon", ":", "person:", " :x")]
    [True, True, False, False, False, False]
    """
    kind, colon, name = value.partition(":")
    if not colon:
        return f"is not {ENTITY_FORM} (no colon)"
    if not kind.strip():
        return f"is not {ENTITY_FORM} (the type before the colon is empty)"
    if not name.strip():
        return f"is not {ENTITY_FORM} (the name after the colon is empty)"
    return None
