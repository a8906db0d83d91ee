"""Pure projection of one parsed memory into index rows (docs/format.md §1.4 "derived columns", §1.8, docs/index.md
§3.5, §3.8).

Nothing here touches the database; :mod:`git_memhtml.index.write` applies a :class:`Projection`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import TypeVar

from git_memhtml.document.model import (
    PARA_PREFIXES,
    REL_CLASSES,
    ArticleFacts,
    Citation,
    Facet,
    MemoryDocument,
    indexed_entity_values,
)
from git_memhtml.domain.entities import entity_key, split_entity
from git_memhtml.tree.layout import ARCHIVE_MIRROR, GENERATED_NAMES, has_memory_suffix

CHUNK_CHARS = 1800
"""Longest chunk in characters (docs/index.md §3.8)."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
"""Sentence boundary: whitespace after ``.``, ``!`` or ``?`` (docs/index.md §3.8)."""
T = TypeVar("T")


def is_indexable(path: str) -> bool:
    """``.html`` (any case) under a PARA bucket whose file name is not ``index.html``/``sitemap.xml`` (docs/layout.md
    §2.1)."""
    name = path.rsplit("/", 1)[-1]
    return path.startswith(PARA_PREFIXES) and has_memory_suffix(name) and name not in GENERATED_NAMES


@dataclass(frozen=True)
class PathFacts:
    """What the path alone says: ``para`` (first segment), ``workspace`` (``projects/<ws>/…`` of the origin
    path), ``archived`` (under ``archive/``), ``origin_path`` (the path with ``archive/<YYYY>/`` stripped)."""

    para: str
    workspace: str | None
    archived: bool
    origin_path: str


def path_facts(path: str) -> PathFacts:
    """Derive :class:`PathFacts` from a repository path (docs/layout.md §2.1, §2.4, docs/index.md §3.2: archived from
    the path bucket)."""
    archived = path.startswith("archive/")
    origin = ARCHIVE_MIRROR.sub("", path, count=1) if archived else path
    parts = origin.split("/")
    workspace = parts[1] if parts[0] == "projects" and len(parts) >= 3 else None
    return PathFacts(para=path.split("/", 1)[0], workspace=workspace, archived=archived, origin_path=origin)


@dataclass(frozen=True)
class FileRow:
    """One ``files`` row; field names are the column names (docs/index.md §3.2)."""

    path: str
    blob_sha: str
    content_hash: str
    memory_type: str
    status: str
    title: str
    body_text: str
    gist: str
    fts_text: str
    disclosure_text: str
    para: str
    workspace: str | None
    confidence: float
    importance: int
    archived: int
    origin_path: str
    word_count: int
    created_at: str
    updated_at: str
    event_at: str | None
    archived_at: str | None
    valid_from: str | None
    valid_until: str | None
    reprieves: int
    needs_revision: int
    author: str
    session_id: str | None
    prompt_id: str | None
    turn_uuid: str | None
    indexed_at: str
    task_status: str | None
    due_at: str | None
    frame_key: str | None
    article_digest: str | None = None
    article_facts: str | None = None
    stub: int = 0


FILE_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(FileRow))
"""Column order of :class:`FileRow` values."""


@dataclass(frozen=True)
class ChunkRow:
    """One chunk: ``chunk_id = hex(sha256("<content_hash>:<ordinal>"))`` (docs/index.md §3.2)."""

    chunk_id: str
    ordinal: int
    text: str


@dataclass(frozen=True)
class EdgeRow:
    """One authored out-edge of the file: ``dst_path`` without the leading ``/``; class from the rel (docs/format.md
    §1.3)."""

    rel: str
    dst_path: str
    edge_class: str


@dataclass(frozen=True)
class Projection:
    """Every row one file contributes to the index plane."""

    file: FileRow
    tags: tuple[str, ...]
    entities: tuple[tuple[str, str], ...]
    facets: tuple[tuple[str, str, float | None], ...]
    citations: tuple[tuple[str, str | None], ...]
    chunks: tuple[ChunkRow, ...]
    edges: tuple[EdgeRow, ...]

    @property
    def path(self) -> str:
        """The file's repository path."""
        return self.file.path

    @property
    def entity_rows(self) -> tuple[tuple[str, str, str], ...]:
        """``(entity_type, entity_name, entity_key)`` per entity: the name as written plus its matching key."""
        return tuple((t, n, entity_row_key(t, n)) for t, n in self.entities)


def article_facts_json(facts: ArticleFacts) -> str:
    """The ``files.article_facts`` value of an article: JSON of every :class:`ArticleFacts` field but ``body_text``
    (its own column) and ``source_digest`` (``files.article_digest``)."""
    return json.dumps({
        "article_html": facts.article_html, "content_hash": facts.content_hash, "gist": facts.gist,
        "event_at": facts.event_at, "facets": [[f.name, f.value, f.numeric_value] for f in facts.facets],
        "citations": [[c.text, c.href] for c in facts.citations], "concepts": list(facts.concepts),
        "langs": list(facts.langs), "summaries": list(facts.summaries),
    }, ensure_ascii=False, separators=(",", ":"))


def article_facts_of(digest: str | None, facts_json: str | None, body_text: str) -> ArticleFacts | None:
    """The :class:`ArticleFacts` stored for a file (inverse of :func:`article_facts_json`), or ``None`` when the
    row has none or it does not read back (then the article is simply extracted again)."""
    if digest is None or facts_json is None:
        return None
    try:
        raw = json.loads(facts_json)
        return ArticleFacts(
            article_html=str(raw["article_html"]), content_hash=str(raw["content_hash"]), gist=str(raw["gist"]),
            body_text=body_text, event_at=raw["event_at"],
            facets=tuple(Facet(str(n), str(v), None if x is None else float(x)) for n, v, x in raw["facets"]),
            citations=tuple(Citation(str(t), None if h is None else str(h)) for t, h in raw["citations"]),
            concepts=tuple(str(c) for c in raw["concepts"]), langs=tuple(str(x) for x in raw["langs"]),
            summaries=tuple(str(x) for x in raw["summaries"]), source_digest=digest,
        )
    except (ValueError, KeyError, TypeError):
        return None


def chunk_id_of(content_hash: str, ordinal: int) -> str:
    """Return ``hex(sha256("<content_hash>:<ordinal>"))`` (docs/index.md §3.2)."""
    return hashlib.sha256(f"{content_hash}:{ordinal}".encode()).hexdigest()


def chunk_text(body_text: str, limit: int = CHUNK_CHARS) -> list[str]:
    """Split ``body_text`` into chunks of at most ``limit`` characters (docs/index.md §3.8).

    Trimmed text ≤ limit → one chunk (possibly empty). Else split after ``.!?`` + whitespace, hard-cut any
    sentence longer than the limit, and pack sentences greedily joined by one space, without overlap.
    """
    text = body_text.strip()
    if len(text) <= limit:
        return [text]
    pieces: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        sentence = sentence.strip()
        while len(sentence) > limit:
            pieces.append(sentence[:limit])
            sentence = sentence[limit:].strip()
        if sentence:
            pieces.append(sentence)
    chunks: list[str] = []
    current = ""
    for piece in pieces:
        if not current:
            current = piece
        elif len(current) + 1 + len(piece) <= limit:
            current = f"{current} {piece}"
        else:
            chunks.append(current)
            current = piece
    if current:
        chunks.append(current)
    return chunks


def entity_row(value: str) -> tuple[str, str]:
    """Split ``type:name`` at the first colon (valid when the colon is neither first nor last), else
    ``("unknown", value)`` (docs/format.md §1.8; ``domain.entities.split_entity``)."""
    return split_entity(value)


def stub_flag(title: str, body_text: str, entity_values: Sequence[str]) -> int:
    """``files.stub``: 1 when the memory says nothing but that a person exists (:func:`git_memhtml.tree.people.is_stub`
    over the ``person:`` values of ``entity_values``), else 0. Migration 0015 backfills through the same function."""
    # loaded on first use: tree.people reads HTML (document.editors, html5lib), and a search on an index already
    # caught up projects nothing (tests/cli/test_search_start_up.py)
    from git_memhtml.tree.people import is_stub, person_names  # noqa: PLC0415

    return int(is_stub(title, body_text, person_names(entity_values)))


def stub_flag_sql(title: str, body_text: str, joined: str | None) -> int:
    """:func:`stub_flag` as the SQL function ``memhtml_stub``: the entity values come joined by U+001F (``None``
    for none)."""
    return stub_flag(title, body_text, joined.split("\x1f") if joined else ())


def entity_row_key(entity_type: str, entity_name: str) -> str:
    """The ``file_entities.entity_key`` of a row: ``domain.entities.entity_key`` of ``type:name``."""
    return entity_key(f"{entity_type}:{entity_name}")


def _dedupe(items: list[T]) -> tuple[T, ...]:
    return tuple(dict.fromkeys(items))


def _frame_key(gist: str) -> str | None:
    from git_memhtml.domain.frame import frame_key_of  # noqa: PLC0415 - sibling package, pure

    return frame_key_of(gist)


def _edge_target(href: str) -> str:
    target = href.split("#", 1)[0].split("?", 1)[0]
    return target.lstrip("/")


def project(doc: MemoryDocument, *, path: str, blob_sha: str, now: str) -> Projection:
    """Project ``doc`` found at ``path`` (blob ``blob_sha``) into rows; ``now`` is ``indexed_at`` (ISO UTC).

    Archived/para/workspace come from the path, not the metas. Entities = metas + ``concept:<dfn>`` +
    ``lang:<data-lang>`` (lowercased, validated), deduped. Edges: head links of known rels, leading ``/``
    stripped, self-loops dropped, deduped on (rel, dst).
    """
    facts = path_facts(path)
    first_facets: dict[tuple[str, str], tuple[str, str, float | None]] = {}
    for f in doc.facets:
        first_facets.setdefault((f.name, f.value), (f.name, f.value, f.numeric_value))
    facets = tuple(first_facets.values())
    first_citations: dict[str, tuple[str, str | None]] = {}
    for c in doc.citations:
        if c.text.strip():
            first_citations.setdefault(c.text, (c.text, c.href))
    citations = tuple(first_citations.values())
    disclosure = [doc.gist, *doc.summaries, *(f"{n}: {v}" for n, v, _ in facets), *(t for t, _ in citations)]
    disclosure_text = "\n".join(s.strip() for s in disclosure if s.strip())
    entity_values = indexed_entity_values(doc)
    edges: dict[tuple[str, str], EdgeRow] = {}
    for link in doc.links:
        edge_class = REL_CLASSES.get(link.rel)
        dst = _edge_target(link.href)
        if edge_class is None or not dst or dst == path:
            continue
        edges.setdefault((link.rel, dst), EdgeRow(link.rel, dst, edge_class))
    texts = chunk_text(doc.body_text)
    entities = _dedupe([entity_row(v) for v in entity_values])
    stub = stub_flag(doc.title, doc.body_text, [f"{t}:{n}" for t, n in entities])
    file_row = FileRow(
        path=path,
        blob_sha=blob_sha,
        content_hash=doc.content_hash,
        memory_type=doc.memory_type,
        status=doc.status,
        title=doc.title,
        body_text=doc.body_text,
        gist=doc.gist,
        fts_text="" if stub else "\n".join((doc.title, doc.gist, doc.body_text)),  # a stub is no lexical document
        disclosure_text=disclosure_text,
        para=facts.para,
        workspace=facts.workspace,
        confidence=1.0 if doc.confidence is None else doc.confidence,
        importance=5 if doc.importance is None else doc.importance,
        archived=int(facts.archived),
        origin_path=facts.origin_path,
        word_count=len(doc.body_text.split()),
        created_at=doc.created,
        updated_at=doc.updated,
        event_at=doc.event_at,
        archived_at=doc.archived_at,
        valid_from=doc.valid_from,
        valid_until=doc.valid_until,
        reprieves=doc.reprieves or 0,
        needs_revision=int(doc.needs_revision),
        author=doc.author or "agent",
        session_id=doc.session_id,
        prompt_id=doc.prompt_id,
        turn_uuid=doc.turn_uuid,
        indexed_at=now,
        task_status=doc.task_status,
        due_at=doc.due,
        frame_key=_frame_key(doc.gist),
        article_digest=doc.article_digest,
        article_facts=article_facts_json(doc.article) if doc.article_digest is not None else None,
        stub=stub,
    )
    return Projection(
        file=file_row,
        tags=_dedupe([t for t in doc.tags if t.strip()]),
        entities=entities,
        facets=facets,
        citations=citations,
        chunks=tuple(ChunkRow(chunk_id_of(doc.content_hash, i), i, t) for i, t in enumerate(texts)),
        edges=tuple(edges.values()),
    )
