"""Authoring doors: prose → article markup and whole new memory files (docs/format.md §1.9).

Exactly one of prose (claim + body paragraphs) or raw ``article_html`` is given. A body paragraph that is one
whole backtick fence becomes ``<figure><pre><code data-lang>``; no language is guessed. The rendered file is
re-validated (the render gate: one html5lib parse, :func:`render_checked`) before it is returned.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from git_memhtml.document.bounds import depth_violation
from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.fast import article_digest, fast_tree
from git_memhtml.document.hash import (
    HASH_PREFIX,
    canonical_text_of,
    collapse,
    content_hash,
    digest,
    first_article,
    iter_elements,
    js_trim,
)
from git_memhtml.document.model import MemoryDocument
from git_memhtml.document.parse import DEPTH_HINT, INVALID_HINT, MAX_FILE_BYTES, decode_memory, document_of
from git_memhtml.document.secret_gate import refuse_secrets
from git_memhtml.document.serialize import (
    canonical_article_html,
    escape_attribute,
    escape_text,
    inner_html,
    meta_line,
    serialize_memory,
)
from git_memhtml.document.validate import LANG_TOKEN, check_tree, head_of
from git_memhtml.document.wellformed import parse_with_errors
from git_memhtml.errors import InvalidMemory

DEFAULT_TASK_STATUS: Final[str] = "todo"
"""``task-status`` stamped on a new task when none is given (docs/format.md §1.8)."""

_FENCE_OPEN: Final = re.compile(r"^(`{3,})([^`]*)$")
_CLAIM: Final = re.compile(r"^(.*?[.!?])(\s|$)", re.DOTALL)


@dataclass(frozen=True)
class FencedBlock:
    """One whole-paragraph backtick fence: ``code`` verbatim, ``lang`` = first info token lowercased or None."""

    code: str
    lang: str | None


def fence_opening(line: str) -> str | None:
    """The backtick run (≥3) of a fence-opening line (info string without backticks), else ``None``."""
    match = _FENCE_OPEN.match(js_trim(line))
    return match.group(1) if match else None


def closes_fence(line: str, opening: str) -> bool:
    """True when ``line`` is only a run of at least ``len(opening)`` backticks (surrounding spaces allowed)."""
    stripped = js_trim(line)
    return len(stripped) >= len(opening) and set(stripped) == {"`"}


def fenced_block(paragraph: str) -> FencedBlock | None:
    """Read a paragraph that is one whole closed fence, else ``None`` (unclosed or mixed prose is text)."""
    lines = paragraph.split("\n")
    if len(lines) < 2:
        return None
    match = _FENCE_OPEN.match(js_trim(lines[0]))
    if match is None or not closes_fence(lines[-1], match.group(1)):
        return None
    info = js_trim(match.group(2)).split()
    token = info[0] if info else ""
    lang = token.lower() if token and LANG_TOKEN.match(token) else None
    return FencedBlock(code="\n".join(lines[1:-1]), lang=lang)


def split_paragraphs(prose: str) -> list[str]:
    """Split prose on blank lines (blank lines inside an open fence are content); trimmed, empties dropped."""
    parts: list[list[str]] = [[]]
    opening: str | None = None
    for line in prose.split("\n"):
        if opening is None and js_trim(line) == "":
            if parts[-1]:
                parts.append([])
            continue
        parts[-1].append(line)
        if opening is None:
            opening = fence_opening(line)
        elif closes_fence(line, opening):
            opening = None
    return [text for lines in parts if (text := js_trim("\n".join(lines)))]


def split_prose(text: str) -> tuple[str, list[str]]:
    """Derive ``(claim, body_paragraphs)`` from free prose (docs/format.md §1.9, MCP/JSONL door).

    The claim is the text through the first ``.``/``!``/``?`` followed by whitespace or the end (the whole text
    when there is none); the remainder is split on blank lines, fence-aware.
    """
    trimmed = js_trim(text)
    match = _CLAIM.match(trimmed)
    claim = js_trim(match.group(1) if match else trimmed)
    remainder = js_trim(trimmed[len(claim) :])
    return claim, (split_paragraphs(remainder) if remainder else [])


def _code_figure(block: FencedBlock) -> str:
    lang = f' data-lang="{escape_attribute(block.lang)}"' if block.lang else ""
    return f"<figure><pre><code{lang}>{escape_text(block.code)}</code></pre></figure>"


def prose_markup(claim: str, body: Sequence[str]) -> str:
    """The article inner HTML of prose (docs/format.md §1.9), before canonicalisation (usually already canonical:
    the render gate checks; ``canonical_article_html(prose_markup(...))`` is the canonical form).

    ``<p><mark>CLAIM</mark> BODY0</p>``, then one ``<p>`` per further paragraph, joined by ``"\\n"``; a
    paragraph that is one whole fence becomes ``<figure><pre><code data-lang="x">…</code></pre></figure>`` and is
    never joined onto the claim. Blank paragraphs are dropped; all text is escaped.
    """
    rendered: list[tuple[str, str | None]] = []  # (html, tail text when it is prose)
    for text in body:
        if js_trim(text) == "":
            continue
        block = fenced_block(text)
        if block is None:
            rendered.append((f"<p>{escape_text(js_trim(text))}</p>", js_trim(text)))
        else:
            rendered.append((_code_figure(block), None))
    mark = f"<mark>{escape_text(js_trim(claim))}</mark>"
    if rendered and rendered[0][1] is not None:
        first, following = f"<p>{mark} {escape_text(rendered[0][1])}</p>", rendered[1:]
    else:
        first, following = f"<p>{mark}</p>", rendered
    return "\n".join([first, *(html for html, _ in following)])


def _article(claim: str | None, body: Sequence[str], article_html: str | None) -> tuple[str, bool]:
    """The article markup of a draft and whether it is canonical already (``article_html`` is canonicalised here,
    one fragment parse; prose markup is checked against the parse of the whole file by :func:`render_checked`)."""
    has_claim = claim is not None and js_trim(claim) != ""
    has_html = article_html is not None and js_trim(article_html) != ""
    if has_claim == has_html:
        which = "both" if has_claim else "neither"
        raise InvalidMemory(
            f"give exactly one of a claim or article_html ({which} given)",
            violations=[f"exactly one of claim or article_html is required ({which} given)"],
            hint="pass a claim (plus body paragraphs) for prose, or article_html with its own <mark>, not both",
        )
    if has_html:
        assert article_html is not None
        size = len(article_html.encode("utf-8", "surrogatepass"))
        if size > MAX_FILE_BYTES:  # refused before the canonicalising parse, like the file it would become
            reason = f"article_html is {size} bytes, over the {MAX_FILE_BYTES}-byte limit of a memory file"
            raise InvalidMemory(reason, violations=[reason], hint="keep one fact per file")
        too_deep = depth_violation(article_html)
        if too_deep is not None:  # refused before the canonicalising parse, whose cost grows with depth
            raise InvalidMemory(f"article_html: {too_deep}", violations=[too_deep], hint=DEPTH_HINT)
        return canonical_article_html(article_html), True
    assert claim is not None
    return prose_markup(claim, body), False


_UNREPRESENTABLE = re.compile(
    "[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ufdd0-\ufdef\ufffe\uffff"
    "\U0001fffe\U0001ffff\U0002fffe\U0002ffff\U0003fffe\U0003ffff\U0004fffe\U0004ffff"
    "\U0005fffe\U0005ffff\U0006fffe\U0006ffff\U0007fffe\U0007ffff\U0008fffe\U0008ffff"
    "\U0009fffe\U0009ffff\U000afffe\U000affff\U000bfffe\U000bffff\U000cfffe\U000cffff"
    "\U000dfffe\U000dffff\U000efffe\U000effff\U000ffffe\U000fffff\U0010fffe\U0010ffff]"
)
"""Code points an HTML document cannot carry: the WHATWG parser reports each as an ``invalid-codepoint`` parse error
(C0 controls but tab, LF, FF and CR; DEL and the C1 controls; noncharacters), so ``validate`` would refuse the file.
Form feed is allowed (an ASCII whitespace); CR is normalised to LF by the parser."""


def unrepresentable(field: str, value: str | None) -> str | None:
    """The violation for the first code point of ``value`` an HTML file cannot carry, naming ``field`` and the
    code point (``"title holds U+001B, …"``), or ``None``."""
    if not value:
        return None
    found = _UNREPRESENTABLE.search(value)
    if found is None:
        return None
    return (f"{field} holds U+{ord(found.group()):04X} at character {found.start() + 1}, a character an HTML file "
            "cannot carry")


@dataclass(frozen=True)
class RenderedMemory:
    """A rendered, validated memory file: its ``text`` and the :class:`MemoryDocument` of that text (from the
    render gate's own parse: no caller needs to parse the file again)."""

    text: str
    document: MemoryDocument

    def as_parsed(self) -> MemoryDocument:
        """What :func:`git_memhtml.document.parse.parse_memory` returns for :attr:`text`, without parsing it again:
        :attr:`document` (html5lib's tree, the gate's verdict) with ``article_digest`` set as the parser sets it,
        the article's source digest when the fast parser vouches for the text, else ``None``. Every other field
        is the same from either parser (the differential test of docs/format.md "Two parsers"); one Lexbor parse
        of the text decides which one ``parse_memory`` takes."""
        vouched = fast_tree(self.text) is not None
        return replace(self.document, article_digest=article_digest(self.text) if vouched else None)


_HASH_PLACEHOLDER: Final[str] = HASH_PREFIX + "0" * 64
"""Written as the ``content-hash`` meta before the one parse; the real digest (same length, same alphabet, so the
tree and every parse error position are unchanged) replaces it in the tree and in the text."""


def render_memory(draft: MemoryDraft, *, now: str) -> str:
    """The text of :func:`render_checked` (same rules, same errors)."""
    return render_checked(draft, now=now).text


def render_checked(draft: MemoryDraft, *, now: str) -> RenderedMemory:
    """Render a new memory file from ``draft`` and re-validate it (the render gate, docs/format.md §1.9).

    Emits the draft's head metas (:meth:`MemoryDraft.head_metas`: each given scalar, ``confidence`` with two
    decimals, non-blank entity/tag/alias values, then ``extra_metas``), ``created`` = ``updated`` = ``now`` (ISO
    UTC) and the ``content-hash`` of the rendered article; a ``task`` without ``task_status`` gets ``todo``. The
    title is whitespace-collapsed.

    The gate is the same check ``validate`` and the pre-commit hook run (WHATWG parse errors included, as
    :func:`check_memory_bytes`), so no command commits a file they would refuse; a text field holding a code point
    HTML cannot carry (:func:`unrepresentable`, over :meth:`MemoryDraft.texts`) is refused first, naming the field.
    One html5lib parse of the whole file gives the verdict, the content hash and the document. ``article_html``
    is canonicalised first (one parse of the fragment in ``<article>`` context, as before); prose markup is used
    as rendered when it writes back to itself from the whole file's parse, else (a CR in the text …) it is
    canonicalised and the file parsed once more, so the bytes are always those of the canonical form.

    Last, the rendered text is scanned for secrets (:func:`document.secret_gate.refuse_secrets`, docs/secrets.md).

    Raises:
        SecretInMemory: the rendered memory carries a detected secret (exit 2; names the draft field and the kind).
        InvalidMemory: neither or both of claim/article_html; unknown meta name or rel; a field with a control
            character; any violation of the rendered file (e.g. bad type, a task status on a non-task, an
            article_html without a leading mark, a parse error in the article HTML).
    """
    bad = [problem for name, value in draft.texts() if (problem := unrepresentable(name, value))]
    if bad:
        raise InvalidMemory("rendered memory is invalid: " + "; ".join(bad), violations=bad,
                            hint="remove the control characters from the text (a terminal escape, a stray NUL, …)")
    article, canonical = _article(draft.claim, draft.body, draft.article_html)
    if draft.memory_type == "task" and draft.task_status is None:
        draft = replace(draft, task_status=DEFAULT_TASK_STATUS)
    rendered = _render_once(draft, article, now=now, verify=not canonical)
    if rendered is None:
        rendered = _render_once(draft, canonical_article_html(article), now=now, verify=False)
    assert rendered is not None
    refuse_secrets(rendered.text, where="rendered memory", draft=draft)
    return rendered


def _invalid(violations: Sequence[str], hint: str | None) -> InvalidMemory:
    return InvalidMemory("rendered memory is invalid: " + "; ".join(violations), violations=list(violations),
                         hint=hint)


def _render_once(draft: MemoryDraft, article: str, *, now: str, verify: bool) -> RenderedMemory | None:
    """Serialize, parse once and judge; ``None`` when ``verify`` and the parsed article does not write back to
    ``article`` byte for byte (the markup was not canonical) or the file could not be parsed at all."""
    placeholder = meta_line("content-hash", _HASH_PLACEHOLDER)
    metas = [("created", now), ("updated", now), ("content-hash", _HASH_PLACEHOLDER), *draft.head_metas()]
    text = serialize_memory(title=collapse(draft.title), metas=metas, links=draft.links, article_html=article,
                            canonical=True)
    try:
        decode_memory(text)
        root, parse_errors = parse_with_errors(text)
    except InvalidMemory as exc:
        if verify:  # judge the canonical form, as the file will hold it
            return None
        raise _invalid(exc.violations, exc.hint) from None
    element = first_article(root)
    if verify and (element is None or inner_html(element) != article):
        return None
    real = digest(canonical_text_of(element)) if element is not None else content_hash(article)
    head = head_of(root)
    for meta in iter_elements(head, "meta") if head is not None else ():
        if meta.get("name") == "memhtml-content-hash" and meta.get("content") == _HASH_PLACEHOLDER:
            meta.set("content", real)
            break
    text = text.replace(placeholder, meta_line("content-hash", real), 1)
    result = check_tree(root)
    if result.violations or result.article is None:
        raise _invalid(list(result.violations) or ["no <article>"], INVALID_HINT)
    if parse_errors:  # what `validate` and the pre-commit hook will say of it
        raise InvalidMemory("rendered memory would not validate: " + "; ".join(parse_errors),
                            violations=parse_errors,
                            hint="fix the article HTML; `git memhtml validate` explains each")
    return RenderedMemory(text, document_of(root, result))
