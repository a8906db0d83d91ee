"""Parse a memory file into a :class:`MemoryDocument` (docs/format.md §1.2-§1.4, §1.7, §1.8).

The file is parsed once (the fast Lexbor parse when it vouches for the markup, else html5lib); the same tree feeds
validation, extraction and the content hash.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final
from xml.etree.ElementTree import Element

from git_memhtml.document.bounds import MAX_DEPTH, depth_violation
from git_memhtml.document.fast import article_digest, fast_tree
from git_memhtml.document.hash import canonical_text_of, collapse, digest, iter_elements, parse_document
from git_memhtml.document.model import ArticleFacts, Citation, Facet, Link, MemoryDocument, rel_from_token
from git_memhtml.document.serialize import inner_html
from git_memhtml.document.validate import (
    LANG_TOKEN,
    META_PREFIX,
    CheckResult,
    check_tree,
    head_metas,
    head_of,
    js_number,
    read_meta_values,
)
from git_memhtml.errors import InvalidMemory

MAX_FILE_BYTES: Final[int] = 1024 * 1024
"""Largest accepted memory file, in bytes of UTF-8 (1 MiB)."""

INVALID_HINT: Final[str] = (
    "fix every listed violation (format rules: docs/format.md §1.7); a memory needs one <article> whose "
    "first <p>/<li> holds one non-empty <mark>, a <title>, and metas type/status/created/updated"
)


DEPTH_HINT: Final[str] = f"flatten the markup: a memory nests at most {MAX_DEPTH} elements deep (docs/format.md)"


def _fail(path: str | None, violations: list[str], hint: str = INVALID_HINT) -> InvalidMemory:
    where = path or "<memory>"
    return InvalidMemory(f"{where}: " + "; ".join(violations), violations=violations, hint=hint, path=path)


def decode_memory(data: bytes | str, *, path: str | None = None) -> str:
    """Decode and size-check memory bytes; a leading BOM is dropped.

    Raises:
        InvalidMemory: empty (or whitespace-only) input, more than :data:`MAX_FILE_BYTES`, bytes that are
            not UTF-8, or elements nested deeper than :data:`~git_memhtml.document.bounds.MAX_DEPTH` (checked by a
            linear pre-scan before any HTML parse) — each with a one-line reason.
    """
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > MAX_FILE_BYTES:
        raise _fail(path, [f"file is {size} bytes, over the {MAX_FILE_BYTES}-byte limit"], "keep one fact per file")
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            reason = f"not UTF-8 (invalid byte at offset {exc.start})"
            raise _fail(path, [reason], "re-save the file as UTF-8") from None
    else:
        text = data
    text = text.removeprefix("\ufeff")
    if text.strip() == "":
        raise _fail(path, ["empty file"], "write the memory's HTML into the file, or delete it")
    too_deep = depth_violation(text)
    if too_deep is not None:
        raise _fail(path, [too_deep], DEPTH_HINT)
    return text


def _text(element: Element) -> str:
    return collapse(canonical_text_of(element))


def _facets(article: Element) -> tuple[Facet, ...]:
    facets: list[Facet] = []
    for definition_list in iter_elements(article, "dl"):
        name: str | None = None
        for child in definition_list:
            if child.tag == "dt":
                name = _text(child)
            elif child.tag == "dd" and name is not None:
                facets.append(Facet(name=name, value=_text(child), numeric_value=_data_value(child)))
    return tuple(facets)


def _data_value(definition: Element) -> float | None:
    for data in iter_elements(definition, "data"):
        raw = data.get("value")
        if raw is None:
            continue
        number = js_number(raw)
        if number is not None and number not in (float("inf"), float("-inf")):
            return number
    return None


def _citations(article: Element) -> tuple[Citation, ...]:
    citations: list[Citation] = []
    for element in iter_elements(article, "cite", "q"):
        text = _text(element)
        if text:
            citations.append(Citation(text=text, href=element.get("cite") if element.tag == "q" else None))
    return tuple(citations)


def _unique(values: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(value for value in values if value))


def _links(root: Element) -> tuple[Link, ...]:
    head = head_of(root)
    if head is None:
        return ()
    links: list[Link] = []
    for element in iter_elements(head, "link"):
        token, href = element.get("rel"), element.get("href")
        rel = rel_from_token(token) if token is not None else None
        if rel is not None and href:
            links.append(Link(rel=rel, href=href))
    return tuple(links)


ArticleExtractor = Callable[[Element], ArticleFacts]
"""Extracts the :class:`ArticleFacts` of an ``<article>`` element (:func:`extract_article`; tests wrap it to count)."""


def extract_article(article: Element) -> ArticleFacts:
    """The article's share of a document: canonical inner HTML, content hash (docs/format.md §1.6), gist (mark text
    without pre/code), block-spaced collapsed text, first ``<time datetime>``, facets, citations, ``<dfn>`` terms
    (raw, unique), valid ``<code data-lang>`` tokens (lowercased, unique) and ``<summary>`` texts."""
    mark = next(iter_elements(article, "mark"))
    time = next(iter_elements(article, "time"), None)
    article_text = canonical_text_of(article)
    return ArticleFacts(
        article_html=inner_html(article),
        content_hash=digest(article_text),
        gist=collapse(canonical_text_of(mark, skip_code=True)),
        body_text=collapse(article_text),
        event_at=time.get("datetime") if time is not None else None,
        facets=_facets(article),
        citations=_citations(article),
        concepts=_unique([_text(element) for element in iter_elements(article, "dfn")]),
        langs=_unique(
            [
                lang
                for element in iter_elements(article, "code")
                if (lang := (element.get("data-lang") or "").strip().lower()) and LANG_TOKEN.match(lang)
            ]
        ),
        summaries=tuple(text for element in iter_elements(article, "summary") if (text := _text(element))),
    )


def parse_memory(data: bytes | str, *, path: str | None = None, reuse: ArticleFacts | None = None,
                 extract: ArticleExtractor = extract_article, fast: bool = True) -> MemoryDocument:
    """Parse and validate one memory file.

    The tree comes from the fast parser (:func:`git_memhtml.document.fast.fast_tree`) when it vouches for the
    markup and the tree is valid; otherwise html5lib parses the file and its tree gives the verdict (so a refusal
    is always html5lib's). ``reuse`` is the article of an earlier version of the file: when its
    ``source_digest`` equals this file's (the fast path only: an unchanged article under a head-only rewrite),
    the article is not extracted again and ``reuse`` is the article share (docs/format.md "Two parsers").

    Args:
        data: file bytes (must be UTF-8) or text; at most :data:`MAX_FILE_BYTES`.
        path: repository path, used only in error messages.
        reuse: the :class:`ArticleFacts` of the file's indexed version, or ``None``.
        extract: the article extractor (:func:`extract_article`).
        fast: try the fast parser first (``False``: html5lib only, the reference of the differential test).

    Returns:
        A :class:`MemoryDocument`: typed metas (bad optionals dropped and named in ``warnings``), links, the
        canonical article inner HTML, ``content_hash`` (docs/format.md §1.6), ``gist`` (mark text without pre/code),
        ``body_text`` (all article text, block-spaced, fully collapsed), ``event_at`` (first ``<time datetime>``
        verbatim), facets, citations, ``concepts`` (``<dfn>`` terms, raw, unique), ``langs`` (valid
        ``<code data-lang>`` tokens, lowercased, unique), ``summaries``; entities/tags/aliases skip empty values;
        ``article_digest`` when the fast parser built the tree.

    Raises:
        InvalidMemory: any violation of docs/format.md §1.2/§1.3/§1.7, all listed in ``violations`` (message
            ``"<path>: v1; v2"``); undecodable, empty or oversized input.
    """
    try:
        text = decode_memory(data, path=path)
    except InvalidMemory as exc:
        if exc.path is not None or path is None:
            raise
        raise _fail(path, list(exc.violations), exc.hint or INVALID_HINT) from None
    root = fast_tree(text) if fast else None
    if root is not None:
        result = check_tree(root)
        if not result.violations and result.article is not None:
            return document_of(root, result, source_digest=article_digest(text), reuse=reuse, extract=extract)
    try:
        root = parse_document(text)
    except InvalidMemory as exc:
        raise _fail(path, list(exc.violations), exc.hint or INVALID_HINT) from None
    result = check_tree(root)
    if result.violations or result.article is None:
        raise _fail(path, list(result.violations) or ["no <article>"])
    return document_of(root, result, extract=extract)


def document_of(root: Element, result: CheckResult, *, source_digest: str | None = None,
                reuse: ArticleFacts | None = None, extract: ArticleExtractor = extract_article) -> MemoryDocument:
    """The :class:`MemoryDocument` of a valid tree (``result`` = :func:`check_tree` of ``root``, no violations).
    ``reuse`` replaces the article extraction when ``source_digest`` is not ``None`` and equals its digest."""
    article = result.article
    assert article is not None and not result.violations
    metas = tuple(
        (name[len(META_PREFIX) :], value) for name, value in head_metas(root) if name.startswith(META_PREFIX)
    )
    first: dict[str, str] = {}
    for name, value in metas:
        first.setdefault(name, value)
    values = read_meta_values(metas)
    title = next(iter_elements(root, "title"))
    assert values.memory_type is not None and values.status is not None  # guaranteed by check_tree
    if source_digest is not None and reuse is not None and reuse.source_digest == source_digest:
        facts = reuse
    else:
        facts = extract(article)

    def repeated(name: str) -> tuple[str, ...]:
        return tuple(value for key, value in metas if key == name and value != "")

    return MemoryDocument(
        title=_text(title),
        memory_type=values.memory_type,
        status=values.status,
        created=first["created"],
        updated=first["updated"],
        article_html=facts.article_html,
        content_hash=facts.content_hash,
        gist=facts.gist,
        body_text=facts.body_text,
        metas=metas,
        links=_links(root),
        confidence=values.confidence,
        importance=values.importance,
        content_hash_meta=first.get("content-hash"),
        author=first.get("author"),
        session_id=first.get("session"),
        prompt_id=first.get("prompt"),
        turn_uuid=first.get("turn"),
        valid_from=first.get("valid-from"),
        valid_until=first.get("valid-until"),
        reprieves=values.reprieves,
        archived_at=first.get("archived"),
        superseded_by=first.get("superseded-by"),
        needs_revision=values.needs_revision,
        task_status=values.task_status,
        due=values.due,
        entities=repeated("entity"),
        tags=repeated("tag"),
        aliases=repeated("alias"),
        event_at=facts.event_at,
        facets=facts.facets,
        citations=facts.citations,
        concepts=facts.concepts,
        langs=facts.langs,
        summaries=facts.summaries,
        warnings=result.warnings,
        article_digest=source_digest,
    )
