"""Phase 4, person-links: one file per person, and an ``about_person`` link from every memory that names them.

(docs/phases.md §1.4; docs/layout.md §2.5; docs/phases.md §1.) Runs after entity-resolution, so aliases
have already collapsed. People and their claimants are read from the **tree** (the ``memhtml-entity`` lines of
each active non-task file the index lists): the runner re-indexes between committing phases, but a stale index
must not mint a person file under a name entity-resolution just rewrote away. A missing
``resources/people/<slugify(name)>.html`` is created; an existing one is never rewritten. Each other claimant
gains ``about_person → /<person file>`` and ``updated``, only when the link is new.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from git_memhtml.document import editors
from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.model import Link
from git_memhtml.document.template import render_memory
from git_memhtml.domain.entities import PERSON, display_name, name_key
from git_memhtml.index.corpus import active_corpus
from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.store import edits
from git_memhtml.tree.layout import PEOPLE_DIR, slugify

SLEEP_AUTHOR = "agent:sleep"


@dataclass(frozen=True)
class PersonLinksCounts(PhaseCounts):
    """``people`` (distinct person names), ``files_created``, ``links_added``."""

    people: int
    files_created: int
    links_added: int


def person_path(name: str) -> str:
    """``resources/people/<slugify(name)>.html`` (docs/layout.md §2.5)."""
    return f"{PEOPLE_DIR}/{slugify(name)}.html"


def render_person(name: str, now: str) -> str:
    """The minted person file: semantic, title = name, claim ``<name> appears in this agent's memory.``,
    author ``agent:sleep``, entity ``person:<name>`` (docs/layout.md §2.5).

    Raises:
        InvalidMemory: the render gate refused the file.
    """
    return render_memory(MemoryDraft(
        title=name,
        memory_type="semantic",
        claim=f"{name} appears in this agent's memory.",
        author=SLEEP_AUTHOR,
        entities=(f"person:{name}",),
    ), now=now)


def people_in_tree(env: PhaseEnv) -> dict[str, list[str]]:
    """``{person name: [claimant paths, sorted]}`` from the head metas of the active non-task files on disk.

    Names are grouped by key (``domain.entities.name_key``) and shown in display case (the first spelling met in
    corpus order, which after entity-resolution is the only one); the type matches case-insensitively. Candidates are
    the index's active non-task paths; a file gone from the tree, archived on disk or a task on disk is skipped.
    """
    people: dict[str, set[str]] = {}
    shown: dict[str, str] = {}
    for row in active_corpus(env.db):
        target = env.repo.root / row.path
        if not target.is_file():
            continue
        html = target.read_text(encoding="utf-8")
        if editors.get_meta(html, "status") == "archived" or editors.get_meta(html, "type") == "task":
            continue
        for value in editors.get_metas(html, "entity"):
            kind, colon, name = value.partition(":")
            key = name_key(name)
            if colon and key and name_key(kind) == PERSON:
                shown.setdefault(key, display_name(name))  # entity-resolution already unified the spelling
                people.setdefault(key, set()).add(row.path)
    return {shown[key]: sorted(paths) for key, paths in sorted(people.items(), key=lambda kv: shown[kv[0]])}


def _link_claimants(env: PhaseEnv, people: Mapping[str, list[str]]) -> tuple[int, set[str]]:
    added = 0
    linked: set[str] = set()
    stamped: list[str] = []
    for name, claimants in people.items():
        target = person_path(name)
        link = Link("about_person", "/" + target)
        for path in claimants:
            if path == target:
                continue
            html = (env.repo.root / path).read_text(encoding="utf-8")
            if link in editors.get_links(html):
                continue
            if env.dry_run or edits.stamp_file(
                env.repo, path, [edits.link(link.rel, link.href), edits.set_meta("updated", env.at)], stage=False
            ):
                added += 1
                linked.add(path)
                stamped.append(path)
    if stamped and not env.dry_run:
        env.repo.stage(stamped)  # once: each stage call rewrites the whole git index
    return added, linked


def run(env: PhaseEnv) -> PhaseOutcome:
    """Create missing person files and link their claimants (docs/phases.md §1.4).

    Counts: ``people`` (distinct person names), ``filesCreated``, ``linksAdded``. Subject
    ``link <linked> memories to <people> people`` where ``linked`` is the number of files that gained a link.

    Raises:
        StorageError: the index could not be read. InvalidMemory: a person file failed the render gate.
    """
    people = people_in_tree(env)
    created: set[str] = set()
    for name in people:
        target = person_path(name)
        if target in created or (env.repo.root / target).exists():
            continue
        created.add(target)
        if env.dry_run:
            continue
        text = render_person(name, env.at)
        file = env.repo.root / target
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
        env.repo.stage([target])
    added, linked = _link_claimants(env, people)
    counts = PersonLinksCounts(people=len(people), files_created=len(created), links_added=added)
    return PhaseOutcome(counts, subject=f"link {len(linked)} memories to {len(people)} people")


register(PhaseSpec("person-links", run, PersonLinksCounts))
