"""Phase 4, person-links: one file per person, and an ``about_person`` link from every memory that names them.

(docs/phases.md §1.4; docs/layout.md §2.5; docs/phases.md §1.) Runs after entity-resolution, so aliases
have already collapsed. People and their claimants are read from the **tree** (the ``memhtml-entity`` lines of
each active non-task file the index lists): the runner re-indexes between committing phases, but a stale index
must not mint a person file under a name entity-resolution just rewrote away.

A person's file is the person file the tree already holds for them (:func:`git_memhtml.tree.people.person_file_of`:
what the file says about itself, wherever it lives; the first by path when there are several), else a new
``resources/people/<slugify(name)>.html`` (the first free ordinal when that path holds another file). An existing
file is never rewritten. Each other claimant gains ``about_person → /<person file>`` and ``updated``, only when the
link is new.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from git_memhtml.document import editors
from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.model import Link
from git_memhtml.document.template import render_memory
from git_memhtml.domain.entities import name_key
from git_memhtml.index.corpus import active_corpus
from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.store import edits
from git_memhtml.tree.layout import PEOPLE_DIR, free_path, slugify
from git_memhtml.tree.people import identity_claim, person_file_of, person_names

SLEEP_AUTHOR = "agent:sleep"


@dataclass(frozen=True)
class PersonLinksCounts(PhaseCounts):
    """``people`` (distinct person names), ``files_created``, ``links_added``."""

    people: int
    files_created: int
    links_added: int


@dataclass
class PeopleInTree:
    """What the tree says about people: ``claimants`` ``{person name: [paths naming them, sorted]}`` in name order,
    and ``files`` ``{person name key: [paths of their person files, sorted]}``."""

    claimants: dict[str, list[str]] = field(default_factory=dict)
    files: dict[str, list[str]] = field(default_factory=dict)


def render_person(name: str, now: str) -> str:
    """The minted person file: semantic, title = name, claim ``<name> appears in this agent's memory.``
    (``tree.people.identity_claim``), author ``agent:sleep``, entity ``person:<name>`` (docs/layout.md §2.5).

    Raises:
        InvalidMemory: the render gate refused the file.
    """
    return render_memory(MemoryDraft(
        title=name,
        memory_type="semantic",
        claim=identity_claim(name),
        author=SLEEP_AUTHOR,
        entities=(f"person:{name}",),
    ), now=now)


def people_in_tree(env: PhaseEnv) -> PeopleInTree:
    """:class:`PeopleInTree` from the head metas of the active non-task files on disk.

    Names are grouped by key (``domain.entities.name_key``) and shown in display case (the first spelling met in
    corpus order, which after entity-resolution is the only one); the type matches case-insensitively. Candidates are
    the index's active non-task paths; a file gone from the tree, archived on disk or a task on disk is skipped. A
    file's title is the index's (entity-resolution rewrites entity lines, never titles).
    """
    people: dict[str, set[str]] = {}
    shown: dict[str, str] = {}
    found = PeopleInTree()
    for row in active_corpus(env.db):
        target = env.repo.root / row.path
        if not target.is_file():
            continue
        html = target.read_text(encoding="utf-8")
        if editors.get_meta(html, "status") == "archived" or editors.get_meta(html, "type") == "task":
            continue
        for name in person_names(editors.get_metas(html, "entity")):
            shown.setdefault(name_key(name), name)  # entity-resolution already unified the spelling
            people.setdefault(name_key(name), set()).add(row.path)
        subject = person_file_of(row.path, row.title, html)
        if subject is not None:
            found.files.setdefault(name_key(subject), []).append(row.path)
    found.claimants = {shown[key]: sorted(paths) for key, paths in sorted(people.items(), key=lambda kv: shown[kv[0]])}
    found.files = {key: sorted(paths) for key, paths in found.files.items()}
    return found


def person_file_for(env: PhaseEnv, name: str, found: PeopleInTree, minted: Collection[str]) -> str | None:
    """The path of ``name``'s person file: an existing one (the first by path), else the first free of
    ``resources/people/<slug>.html``, ``-2``, … that this run has not minted (``None`` past the ordinals): two names
    entity-resolution kept apart are two people, even when they share a slug."""
    existing = found.files.get(name_key(name))
    if existing:
        return existing[0]
    return free_path(PEOPLE_DIR, slugify(name), lambda p: p in minted or (env.repo.root / p).exists())


def _link_claimants(env: PhaseEnv, claimants: Mapping[str, list[str]], targets: Mapping[str, str]
                    ) -> tuple[int, set[str]]:
    added = 0
    linked: set[str] = set()
    stamped: list[str] = []
    for name, paths in claimants.items():
        target = targets.get(name_key(name))
        if target is None:
            continue
        link = Link("about_person", "/" + target)
        for path in paths:
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
    found = people_in_tree(env)
    minted: set[str] = set()
    targets: dict[str, str] = {}
    for name in found.claimants:
        target = person_file_for(env, name, found, minted)
        if target is None:
            continue
        targets[name_key(name)] = target
        if name_key(name) in found.files or (env.repo.root / target).exists():
            continue
        minted.add(target)
        if env.dry_run:
            continue
        file = env.repo.root / target
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(render_person(name, env.at), encoding="utf-8")
        env.repo.stage([target])
    added, linked = _link_claimants(env, found.claimants, targets)
    counts = PersonLinksCounts(people=len(found.claimants), files_created=len(minted), links_added=added)
    return PhaseOutcome(counts, subject=f"link {len(linked)} memories to {len(found.claimants)} people")


register(PhaseSpec("person-links", run, PersonLinksCounts))
