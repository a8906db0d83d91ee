"""Whom each memory is about: the subject identities the merge veto's subject predicate reads (docs/veto.md §3
"Subjects").

One read for a phase: the entity keys every active memory claims (``index.edge_candidates.entity_claims``) turned
into subject identities (``domain.entities.subject_identities``) under the alias groups the run tree's person files
declare (``entity_resolution.alias_groups``), so a name and an alias a person file joins to it are one subject.
"""

from __future__ import annotations

from collections.abc import Mapping

from git_memhtml.domain.entities import alias_representatives, subject_identities
from git_memhtml.index.edge_candidates import entity_claims
from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.sleep.phases.entity_resolution import alias_groups

NO_SUBJECT: frozenset[str] = frozenset()
"""The subjects of a memory that names none: it has no say in the subject predicate."""


def memory_subjects(env: PhaseEnv) -> Mapping[str, frozenset[str]]:
    """``{path: subject identities}`` of every active memory that names a subject; a path absent names none (read
    it with ``.get(path, NO_SUBJECT)``).

    Raises:
        StorageError: the index cannot be read.
    """
    aliases = alias_representatives(alias_groups(env.repo))
    keys: dict[str, list[str]] = {}
    for key, path in entity_claims(env.db):
        keys.setdefault(path, []).append(key)
    found = {path: subject_identities(values, aliases) for path, values in keys.items()}
    return {path: subjects for path, subjects in found.items() if subjects}
