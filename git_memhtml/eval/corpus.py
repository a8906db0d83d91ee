"""The seeded fixture corpus of the discrimination gate (docs/gate.md §8.1–8.2).

``build_corpus`` is a pure function of ``(seed, size, probes)``: the same arguments give byte-identical files,
access rows and probes. Two mulberry32 streams drive it: the jitter stream (``seed``), one draw ``j`` per base
memory, and the access stream (``seed ^ 0x5f3759df``), one draw per base memory, independent of the jitter.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from git_memhtml.eval.controls import FAMILIES, TITLE_MARKERS, build_controls, probe_query
from git_memhtml.eval.defaults import DEFAULT_PROBES, DEFAULT_SEED, DEFAULT_SIZE
from git_memhtml.eval.html import render_file, render_kit
from git_memhtml.eval.rng import Mulberry32
from git_memhtml.eval.vocab import CLAIM_TEMPLATES, CORPUS_TYPES, PEOPLE, SCOPES, TOPICS
from git_memhtml.index.access import AccessSeed
from git_memhtml.tree.layout import ARCS_DIR

ACCESS_SEED_XOR = 0x5F3759DF
"""The access stream is seeded ``seed ^ 0x5f3759df`` (docs/gate.md §8.1)."""

EPOCH = datetime(2026, 1, 1, 9, 0, 0, tzinfo=UTC)
"""Day 0 of the corpus (docs/gate.md §8.1)."""

ARCHIVE_YEAR = "2025"
"""The archive tier lives under ``archive/2025/`` (docs/gate.md §8.1)."""


@dataclass(frozen=True)
class Control:
    """One control file of a probe: ``family`` ∈ negation|numeric|variant, its path, title and claim."""

    family: str
    path: str
    title: str
    claim: str


@dataclass(frozen=True)
class Probe:
    """One probe: the target memory, the query built from its claim, and its valid controls (≥1)."""

    target_path: str
    target_title: str
    target_claim: str
    query: str
    controls: tuple[Control, ...]


@dataclass(frozen=True)
class FixtureCorpus:
    """The generated corpus.

    Attributes:
        seed, size, requested_probes: the arguments.
        files: repository path → whole file text, every one a valid memory (base, people, archive, controls).
        access: access rows for the state plane (base memories with access draw ≤ 0.6 only).
        probes: the probes actually built (≤ ``requested_probes``; fewer when targets run out).
    """

    seed: int
    size: int
    requested_probes: int
    files: Mapping[str, str]
    access: tuple[AccessSeed, ...]
    probes: tuple[Probe, ...]


@dataclass(frozen=True)
class _Memory:
    index: int
    path: str
    title: str
    claim: str
    memory_type: str
    sentences: tuple[str, str, str]
    kit: int
    service: str
    scope: str
    anchor: str
    event_date: str
    metas: tuple[tuple[str, str], ...]
    links: tuple[tuple[str, str], ...]
    updated: datetime


def iso(moment: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` of a UTC datetime."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def slugify(text: str) -> str:
    """Lowercase, runs of non-``[a-z0-9]`` → ``-``, trimmed, capped at 80 (docs/layout.md §2.3, ASCII input only)."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:80].strip("-") or "untitled"


def letter_code(n: int) -> str:
    """A base-26 letter code (``xa``, ``xb`` … ``xba`` …) unique per ``n ≥ 0``; the ``x`` prefix keeps every code
    apart from the veto's marker and qualifier words."""
    letters = ""
    while True:
        n, rest = divmod(n, 26)
        letters = chr(ord("a") + rest) + letters
        if n == 0:
            return "x" + letters


def js_round(x: float) -> int:
    """JavaScript ``Math.round`` (half rounds up), not Python's banker's rounding."""
    return int((x + 0.5) // 1)


def _directory(memory_type: str, i: int, workspace: str) -> str:
    """Directories by type (docs/gate.md §8.1); workspace, area and resource tag are all the service slug."""
    if memory_type == "arc":
        return ARCS_DIR
    if memory_type in ("episodic", "error_pattern"):
        return f"projects/{workspace}"
    if memory_type in ("procedural", "verdict"):
        return f"areas/{workspace}"
    if memory_type in ("semantic", "precedent"):
        return f"resources/{workspace}"
    return f"projects/{workspace}" if i % 2 == 0 else f"areas/{workspace}"


_EDGE_RELS = ("relates_to", "caused_by", "leads_to", "example_of", "supports", "laterally_related", "contradicts")
"""The i → i+12 edge relation cycles through these (docs/gate.md §8.1)."""


def _person_path(name: str) -> str:
    return f"resources/people/{name}.html"


def _base_memory(i: int, j: float) -> _Memory:
    topic = TOPICS[i % len(TOPICS)]
    memory_type = CORPUS_TYPES[i % len(CORPUS_TYPES)]
    day = 30 + (i % 240)
    scope = SCOPES[i % len(SCOPES)]
    noun = topic.nouns[(i // 108) % len(topic.nouns)]
    verb, past = topic.verbs[(i // 12) % len(topic.verbs)]
    _, past2 = topic.verbs[(i // 12 + 1) % len(topic.verbs)]
    number = 3 + i % 37
    claim = CLAIM_TEMPLATES[memory_type].format(
        service=topic.workspace, scope=scope, noun=noun, verb=verb, past=past, anchor=topic.anchor, n=number
    )
    claim = claim[0].upper() + claim[1:]
    sentences = (
        f"The {topic.workspace} owners {past2} the {noun} during the {scope} cycle.",
        f"Dashboards for the {topic.anchor} track each {noun} closely.",
        f"Reference code {letter_code(i)} tags this {memory_type.replace('_', ' ')} record.",
    )
    title = f"{topic.workspace} {noun} {scope} {memory_type} {i}"
    path = f"{_directory(memory_type, i, topic.workspace)}/{slugify(title)}.html"
    created = EPOCH + timedelta(days=day)
    updated = created + timedelta(days=3) if j > 0.7 else created
    metas: list[tuple[str, str]] = [
        ("type", memory_type),
        ("status", "active"),
        ("created", iso(created)),
        ("updated", iso(updated)),
        ("confidence", f"{0.6 + js_round(40 * j) / 100:.2f}"),
        ("importance", str(1 + int(10 * j))),
        ("tag", topic.workspace),
    ]
    if j > 0.9:
        metas.append(("valid-until", iso(EPOCH + timedelta(days=day + 400))))
    if i % 17 == 0:
        metas.append(("session", f"fixture-session-{letter_code(i)}"))
    links: list[tuple[str, str]] = []
    if j > 0.8:
        person = PEOPLE[i % len(PEOPLE)]
        metas.append(("entity", f"person:{person}"))
        links.append(("about_person", "/" + _person_path(person)))
    if i % 11 == 0:
        author = PEOPLE[(i // 11) % len(PEOPLE)]
        metas.append(("author", f"human:{author}"))
        links.append(("authored_by", "/" + _person_path(author)))
    return _Memory(
        index=i, path=path, title=title, claim=claim, memory_type=memory_type, sentences=sentences,
        kit=(i // 9) % 9, service=topic.workspace, scope=scope, anchor=topic.anchor,
        event_date=created.strftime("%Y-%m-%d"), metas=tuple(metas), links=tuple(links), updated=updated,
    )


def _article(memory: _Memory, claim: str, sentences: tuple[str, str, str] | None = None) -> str:
    return render_kit(
        memory.kit, claim=claim, sentences=sentences or memory.sentences, service=memory.service,
        scope=memory.scope, anchor=memory.anchor, event_date=memory.event_date,
    )


def _person_file(name: str) -> str:
    article = f"<p><mark>{name} appears in this agent's memory.</mark></p>"
    metas = [("type", "semantic"), ("status", "active"), ("created", iso(EPOCH)), ("updated", iso(EPOCH)),
             ("author", "agent:sleep"), ("entity", f"person:{name}")]
    return render_file(title=name, metas=metas, links=(), article_html=article)


def _earlier_path(path: str) -> str:
    return f"archive/{ARCHIVE_YEAR}/{path[: -len('.html')]}-earlier.html"


def _earlier_file(memory: _Memory, size: int, ordinal: int) -> str:
    """The archived ``-earlier`` copy a live procedural memory supersedes (docs/gate.md §8.1)."""
    created = EPOCH + timedelta(days=30 + memory.index % 240) - timedelta(days=365)
    archived = created + timedelta(days=30)
    sentences = (*memory.sentences[:2], f"Reference code {letter_code(size + ordinal)} tags this earlier record.")
    metas = [("type", memory.memory_type), ("status", "archived"), ("created", iso(created)),
             ("updated", iso(archived)), ("archived", iso(archived)), ("superseded-by", "/" + memory.path),
             ("tag", memory.service)]
    return render_file(title=f"{memory.title} (earlier)", metas=metas, links=(),
                       article_html=_article(memory, memory.claim, sentences))


def _access_row(path: str, j: float) -> AccessSeed:
    count = max(1, js_round(1 / (0.08 + j)))
    reinforcement = min(count, int(6 * j))
    last = iso(EPOCH + timedelta(days=240 + int(20 * j)))
    return AccessSeed(path=path, access_count=count, reinforcement_count=reinforcement,
                     outcome_score=js_round(100 * j) / 100, last_accessed_at=last,
                     last_reinforced_at=last if reinforcement > 0 else None, updated_at=last)


def _control_file(memory: _Memory, family: str, claim: str) -> tuple[str, str, str]:
    """Return ``(path, title, text)`` of one control: same directory, kit and body; title ``<marker> — T``;
    updated = target + 1 day; no links (docs/gate.md §8.2)."""
    title = f"{TITLE_MARKERS[family]} — {memory.title}"
    directory = memory.path.rsplit("/", 1)[0]
    path = f"{directory}/{slugify(title)}.html"
    metas = [(n, iso(memory.updated + timedelta(days=1)) if n == "updated" else v) for n, v in memory.metas]
    return path, title, render_file(title=title, metas=metas, links=(), article_html=_article(memory, claim))


def _target_order(candidates: list[_Memory], probes: int) -> list[_Memory]:
    """Strided picks first (stride = max(1, n // probes)), then the remainder in order (docs/gate.md §8.2)."""
    stride = max(1, len(candidates) // max(1, probes))
    picked = candidates[::stride]
    chosen = {m.index for m in picked}
    return picked + [m for m in candidates if m.index not in chosen]


def build_corpus(seed: int = DEFAULT_SEED, size: int = DEFAULT_SIZE, probes: int = DEFAULT_PROBES) -> FixtureCorpus:
    """Build the fixture corpus (docs/gate.md §8.1–8.2).

    Args:
        seed: seeds both mulberry32 streams (default 20260802).
        size: number of base memories (default 200); people, archive copies and controls come on top.
        probes: number of probes to build (default 36); fewer when the targets run out.

    Returns:
        A :class:`FixtureCorpus`; ``files`` is sorted by path.

    Raises:
        ValueError: ``size < 1`` or ``probes < 0``.
    """
    if size < 1 or probes < 0:
        raise ValueError(f"size must be ≥ 1 and probes ≥ 0 (got size={size}, probes={probes})")
    jitter = Mulberry32(seed)
    access_stream = Mulberry32(seed ^ ACCESS_SEED_XOR)
    memories = [_base_memory(i, jitter.next()) for i in range(size)]
    access_draws = [access_stream.next() for _ in range(size)]

    arcs = [m for m in memories if m.memory_type == "arc"]
    files: dict[str, str] = {_person_path(name): _person_file(name) for name in PEOPLE}
    archived_of: dict[str, str] = {}
    procedural_ordinal = 0
    for memory in memories:
        if memory.memory_type == "procedural":
            if procedural_ordinal % 6 == 0:
                earlier = _earlier_path(memory.path)
                archived_of[memory.path] = earlier
                files[earlier] = _earlier_file(memory, size, procedural_ordinal)
            procedural_ordinal += 1

    for memory in memories:
        i = memory.index
        links = list(memory.links)
        if i % 4 == 0 and arcs:
            start = (i // 4) % len(arcs)
            for step in range(len(arcs)):
                arc = arcs[(start + step) % len(arcs)]
                if arc.path != memory.path:
                    links.append(("part_of", "/" + arc.path))
                    break
        if size > 1:
            later = memories[(i + 12) % size]
            if later.path != memory.path:
                links.append((_EDGE_RELS[i % len(_EDGE_RELS)], "/" + later.path))
        if memory.path in archived_of:
            links.append(("supersedes", "/" + archived_of[memory.path]))
        files[memory.path] = render_file(title=memory.title, metas=memory.metas, links=links,
                                         article_html=_article(memory, memory.claim))

    access = tuple(_access_row(m.path, j) for m, j in zip(memories, access_draws, strict=True) if j <= 0.6)

    candidates = [m for m in memories if m.memory_type in ("procedural", "semantic")]
    built: list[Probe] = []
    for target in _target_order(candidates, probes):
        if len(built) >= probes:
            break
        claims = build_controls(target.claim, target.sentences, path=target.path)
        if not claims:
            continue
        controls: list[Control] = []
        for control in claims:
            path, title, text = _control_file(target, control.family, control.claim)
            files[path] = text
            controls.append(Control(control.family, path, title, control.claim))
        built.append(Probe(target.path, target.title, target.claim, probe_query(target.claim), tuple(controls)))

    assert all(c.family in FAMILIES for p in built for c in p.controls)
    return FixtureCorpus(seed=seed, size=size, requested_probes=probes, files=dict(sorted(files.items())),
                         access=access, probes=tuple(built))
