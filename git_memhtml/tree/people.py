"""Person files and the identities they declare (docs/entities.md §6 step 4; docs/layout.md §2.5).

A person file lives under ``resources/people/`` (or its archive mirror) and declares its one subject's other names
with ``memhtml-alias``. Pure functions over a path and bytes, so entity-resolution reads them from the work tree and
the run gate (docs/gate.md §9.2) from a commit's blobs, with one rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath

from git_memhtml.document.parse import parse_memory
from git_memhtml.domain.entities import PERSON, display_name, name_key
from git_memhtml.errors import InvalidMemory
from git_memhtml.tree.layout import PEOPLE_DIR, slugify, unarchive_path


def is_person_file(path: str) -> bool:
    """``resources/people/**.html``, live or under ``archive/<YYYY>/``."""
    return unarchive_path(path).startswith(PEOPLE_DIR + "/") and path.endswith(".html")


def person_file_subject(path: str, persons: Sequence[str]) -> str | None:
    """The one person a person file is about, or ``None`` when the file does not say (docs/phases.md §1.4).

    A file naming one person is that person's file. A file naming several is the file of the one whose
    ``slugify`` is the file's stem (docs/layout.md §2.5 ``resources/people/<slugify(name)>.html``; an archive collision
    suffix ``-2``…``-1000`` is ignored); otherwise (say, a meeting note placement filed under
    ``resources/people/`` that names two people) it is nobody's person file and asserts no identity. Either way
    the other people a file names are never aliases of its subject.
    """
    names = sorted({display_name(p) for p in persons if name_key(p)}, key=name_key)
    if len({name_key(n) for n in names}) == 1:
        return names[0]
    stem = PurePosixPath(path).stem
    base = stem.rsplit("-", 1)[0] if stem.rsplit("-", 1)[-1].isdigit() else stem
    matches = {name_key(n): n for n in names if slugify(n) in (stem, base)}
    return next(iter(matches.values())) if len(matches) == 1 else None


def alias_group(path: str, data: bytes) -> tuple[str, ...] | None:
    """The key group a person file declares: its subject plus its ``memhtml-alias`` values, as name keys,
    de-duplicated and sorted; ``None`` for a file that does not parse, has no subject or declares fewer than two
    keys."""
    try:
        doc = parse_memory(data, path=path)
    except InvalidMemory:
        return None
    persons = []
    for value in doc.entities:
        kind, colon, name = value.partition(":")
        if colon and name_key(kind) == PERSON and name_key(name):
            persons.append(name)
    subject = person_file_subject(path, persons)
    if subject is None:
        return None
    names = sorted({name_key(n) for n in (subject, *doc.aliases) if name_key(n)})
    return tuple(names) if len(names) >= 2 else None
