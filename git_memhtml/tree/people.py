"""Person files, the stubs among them, and the identities they declare (docs/layout.md §2.5; docs/entities.md §6
step 4).

A **person file** is one person's anchor: the memory every ``about_person`` link of that person points at. What
makes a file one is what the file says about itself, never the folder it sits in (issue 27: a fact about Caroline
filed under ``resources/people/`` is a fact, not Caroline's anchor). A memory that is neither a task nor an arc is
person ``P``'s file when it carries ``person:P`` and

- its own name is ``P``'s: its title is the name (one key, ``domain.entities.name_key``), or its file name is the
  name's slug (``resources/people/<slugify(name)>.html`` as ``person-links`` mints it; an ordinal ``-2``…``-1000``
  is ignored); or
- it declares ``P``'s other names (``memhtml-alias``, which only a person file has a use for) and names no other
  person.

An agent's fact is titled by its claim ("Caroline went to a support group"), so it is nobody's person file wherever
it is filed. The other people a person file names are never aliases of its subject.

A **stub** is a memory whose whole article is the sentence ``person-links`` mints (``<name> appears in this agent's
memory.``) or a bare person name: it says nothing but that someone exists. A stub is never a search result
(docs/retrieval.md §4.1); a person file with anything else in its article is an ordinary memory to search.

Pure functions over a path, a title, head metas and bytes, so phases read them from the work tree, the indexer from
a parsed file and the run gate (docs/gate.md §9.2) from a commit's blobs, with one rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath

from git_memhtml.document import editors
from git_memhtml.document.parse import parse_memory
from git_memhtml.domain.entities import PERSON, display_name, name_key
from git_memhtml.errors import InvalidMemory
from git_memhtml.tree.layout import MAX_ORDINAL, slugify

IDENTITY_CLAIM = "{name} appears in this agent's memory."
"""The claim of a minted person file (carried over: spec digest §2.5, ``person-links``)."""

NOT_PERSON_FILE_TYPES: frozenset[str] = frozenset({"task", "arc"})
"""Types that are never a person file: a task is work, an arc a synthesis of other memories."""

ALIAS_MARKER = b"memhtml-alias"
"""The bytes every alias-declaring file holds (a cheap filter before a parse; docs/format.md §1.2)."""


def identity_claim(name: str) -> str:
    """``<name> appears in this agent's memory.`` (:data:`IDENTITY_CLAIM`)."""
    return IDENTITY_CLAIM.format(name=name)


def person_names(entities: Iterable[str]) -> list[str]:
    """The display names of the ``person:`` values of ``entities`` (type matched case-insensitively), one per key,
    in key order; a value with a blank name is skipped."""
    names: dict[str, str] = {}
    for value in entities:
        kind, colon, name = value.partition(":")
        if colon and name_key(kind) == PERSON and name_key(name):
            names.setdefault(name_key(name), display_name(name))
    return [names[key] for key in sorted(names)]


def _stem_names(path: str) -> tuple[str, ...]:
    """The file's stem, and the stem without a collision ordinal ``-2``…``-1000`` when it has one."""
    stem = PurePosixPath(path).stem
    base, dash, ordinal = stem.rpartition("-")
    if dash and base and ordinal.isascii() and ordinal.isdigit() and 2 <= int(ordinal) <= MAX_ORDINAL:
        return stem, base
    return (stem,)


def person_file_subject(path: str, title: str, memory_type: str, persons: Sequence[str], *,
                        declares_aliases: bool) -> str | None:
    """The person whose person file this memory is, or ``None`` for any other memory (module docstring).

    Args:
        path: the repository path (only its file name is read; the folder is not evidence).
        title: the ``<title>``.
        memory_type: the ``memhtml-type``.
        persons: the names of its ``person:`` entities (:func:`person_names`).
        declares_aliases: whether it has a ``memhtml-alias`` meta.
    """
    if memory_type in NOT_PERSON_FILE_TYPES:
        return None
    names = {name_key(n): display_name(n) for n in persons if name_key(n)}
    if not names:
        return None
    titled = names.get(name_key(title))
    if titled is not None:
        return titled
    stems = _stem_names(path)
    slugged = [names[key] for key in sorted(names) if slugify(names[key]) in stems]
    if len(slugged) == 1:
        return slugged[0]
    if declares_aliases and len(names) == 1:
        return next(iter(names.values()))
    return None


def person_file_of(path: str, title: str, html: str) -> str | None:
    """:func:`person_file_subject` of a file read from the tree: type, entities and aliases from its head metas
    (``document.editors``, no parse), ``title`` as the caller read it (the index's row)."""
    return person_file_subject(
        path, title, editors.get_meta(html, "type") or "", person_names(editors.get_metas(html, "entity")),
        declares_aliases=bool(editors.get_metas(html, "alias")),
    )


def is_stub(title: str, body_text: str, persons: Sequence[str]) -> bool:
    """Whether a memory naming ``persons`` says nothing but that one of them exists: its whole article text
    (``body_text``) is, as one key, :func:`identity_claim` of its title or of one of ``persons``, or one of
    ``persons`` bare. A memory naming no person is never a stub."""
    if not persons:
        return False
    text = name_key(body_text)
    empty = {name_key(identity_claim(n)) for n in (title, *persons)} | {name_key(n) for n in persons}
    return text in empty


def alias_group(path: str, data: bytes) -> tuple[str, ...] | None:
    """The key group a person file declares: its subject plus its ``memhtml-alias`` values, as name keys,
    de-duplicated and sorted; ``None`` for a file that does not parse, is no person file (:func:`person_file_subject`)
    or declares fewer than two keys."""
    if ALIAS_MARKER not in data:
        return None
    try:
        doc = parse_memory(data, path=path)
    except InvalidMemory:
        return None
    subject = person_file_subject(path, doc.title, doc.memory_type, person_names(doc.entities),
                                  declares_aliases=bool(doc.aliases))
    if subject is None:
        return None
    names = sorted({name_key(n) for n in (subject, *doc.aliases) if name_key(n)})
    return tuple(names) if len(names) >= 2 else None
