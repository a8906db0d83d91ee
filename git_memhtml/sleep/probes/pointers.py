"""What a run says replaced what: the pointers a probe may follow from a base memory to the tip (docs/gate.md §9.2).

Read from git and the tip's index only, so forge CI reads the same thing:

- **archive moves**: a live memory ``P`` of the base that is gone on the tip while ``archive/<YYYY>/P`` (or its
  ordinal form) appeared, over the tree diff ``base..tip``;
- **re-filings**: an inbox memory placement-triage moved into a topic folder, the same article at its new path
  (:func:`git_memhtml.sleep.engine.refile.refiled_moves`); a probe of it looks at the new path, as itself;
- **successors**: the keeper an archived copy names, by its own ``memhtml-superseded-by`` meta or by an authored
  ``supersedes`` link of another file into it (a fold's keeper, a compress canonical); a live memory another file
  ``supersedes`` has that file as a successor too. The journal's ``folded`` lines are not read: they say no more
  than those files, and a line is a claim, the files are what search sees (docs/ledger.md §2);
- **entity renames**: the journal's ``entity-renamed`` lines, each a claim checked against evidence the run did not
  write, whoever wrote it. A rename explains a loss only when the identity veto does not call the two names
  distinct (``numeric``, ``variant``: ``svc-amber-20`` → ``svc-amber-2``) and the two names are one by evidence: for
  persons, one alias group of a person file on the *base* (``Priya`` → ``Priya Raman``); else the rule the model stage's
  rail reads (:func:`git_memhtml.domain.entities.name_merge_refusal`): the same letters and digits, only case, spacing
  and separators differing (``checkout_api`` → ``checkout-api``), or one name in a shorter and a fuller form (``Caroline
  M.`` → ``Caroline``; ``notifications-worker`` → ``notifications``) whose centroids on the *base* agree (``cosine``,
  read from the base index). A spelling merge the entity rule makes (``reporting-gateway`` → ``recording-gateway``: one
  word for another) is no explanation: nothing shows the two words name one thing.

:meth:`RunPointers.targets` turns a base path into the places a probe looks on the tip, each with how it got there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from git_memhtml.document.editors import get_metas
from git_memhtml.domain.entities import (
    CENTROID_AGREEMENT,
    PERSON,
    REASON_CENTROIDS_DISAGREE,
    REASON_NO_CENTROID,
    REASON_NOT_ONE_NAME,
    alias_representatives,
    entity_key,
    name_key,
    name_merge_refusal,
    same_letters,
    split_entity,
    subject_identities,
)
from git_memhtml.domain.merge import MergeText, carry_gaps, identity_veto_reasons
from git_memhtml.gitrepo import GitRepo
from git_memhtml.sleep.engine.journal import EntityRenamed, JournalEntry, MergeVetoed
from git_memhtml.sleep.engine.refile import refiled_moves
from git_memhtml.tree.layout import archive_sources, has_memory_suffix
from git_memhtml.tree.people import alias_group

How = Literal["self", "superseded", "folded", "archived"]
"""How a probe reached its target: the memory itself, a live successor of a live memory, the live keeper of an
archived memory, or the archived copy itself (searched with archived files admitted)."""

MAX_HOPS = 8
"""Successor links followed from one memory before the chain counts as broken (a cycle or a runaway chain)."""


@dataclass(frozen=True)
class Target:
    """One place a probe looks on the tip: ``path``, reached ``how``; ``archived`` targets are searched with archived
    files admitted."""

    path: str
    how: How
    archived: bool = False


@dataclass(frozen=True)
class RefusedRename:
    """A journaled rename the gate does not accept: ``old`` → ``new`` (``type:name`` values) and why: the identity
    veto's reasons, or one refusal of :func:`~git_memhtml.domain.entities.name_merge_refusal` (``not-one-name``,
    ``no-centroid``, ``centroids-disagree``)."""

    old: str
    new: str
    reasons: tuple[str, ...]

    @property
    def why(self) -> str:
        """Why the rename explains nothing, for a lost probe's message."""
        if self.reasons == (UNBACKED,):
            return ("no evidence joins (not the same letters, not one name in a shorter and a fuller form, "
                    "and no person file on the base declares them one)")
        if self.reasons == (REASON_NO_CENTROID,):
            return "one person's name in two forms, but no vector on the base shows their memories agree"
        if self.reasons == (REASON_CENTROIDS_DISAGREE,):
            return (f"one person's name in two forms, but their memories do not agree on the base (centroid cosine "
                    f"below {CENTROID_AGREEMENT:.2f})")
        return f"the identity veto refuses ({', '.join(self.reasons)})"


def _key(entity_type: str, name: str) -> str:
    return entity_key(f"{entity_type}:{name}")


@dataclass
class RunPointers:
    """The pointers of one run (module docstring). Build with :func:`read_pointers`."""

    archived_at: dict[str, str]
    """live base path → its archive path on the tip."""
    keepers: dict[str, list[str]]
    """path (archived copy or live memory) → the files the run says replace it, sorted."""
    status: Mapping[str, bool]
    """tip path → archived (every indexed file of the tip)."""
    renames: dict[str, set[str]] = field(default_factory=dict)
    """entity key → the keys the journal renamed it to and the rule accepts (transitively closed)."""
    refused: dict[str, list[RefusedRename]] = field(default_factory=dict)
    """entity key → journaled renames of it the identity veto refuses."""
    vetoed: tuple[tuple[str, str], ...] = ()
    """Memory pairs the merge veto refused to fold, ``(keep, drop)``, sorted."""
    shown: dict[str, str] = field(default_factory=dict)
    """entity key → the ``type:name`` a journaled rename wrote it as (for messages)."""
    refiled: dict[str, str] = field(default_factory=dict)
    """live base path → the topic path placement-triage moved it to (the same memory)."""
    vetoed_replacements: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    """``(base path, replacement)`` → what of the base memory the replacement drops (negation, numeric, variant, time,
    commitment, subject): a replacement that does not carry a memory is no replacement for it
    (:func:`veto_replacements`)."""

    def replacements(self, path: str) -> list[Target]:
        """The targets of ``path`` that stand in for it (a keeper, a successor), before any veto."""
        return [t for t in self._targets(path, frozenset()) if t.how in ("folded", "superseded")]

    def live(self, path: str) -> bool:
        """``path`` is an indexed, non-archived file of the tip."""
        return self.status.get(path) is False

    def targets(self, path: str, *, exclude: frozenset[str] = frozenset()) -> list[Target]:
        """Where a probe of base memory ``path`` looks on the tip (:meth:`_targets`), never through a replacement
        the merge veto refuses for it (:attr:`vetoed_replacements`)."""
        refused = frozenset(k for (p, k) in self.vetoed_replacements if p == path)
        return self._targets(path, exclude | refused)

    def _targets(self, path: str, exclude: frozenset[str]) -> list[Target]:
        """Where a probe of base memory ``path`` looks on the tip, best first; ``[]`` when the run left nothing.

        A re-filed memory is looked for at its new path. A live memory is its own target, then its live successors.
        An archived one is followed through its keepers (up to :data:`MAX_HOPS` links) to the live memories that
        replace it; with none, its archived copy is the target. Paths in ``exclude`` are never a target (a control
        probe excludes its vetoed twin), and a memory folded only into excluded paths has no target at all.
        """
        path = self.refiled.get(path, path)
        if self.live(path):
            out = [Target(path, "self")]
            out += [Target(k, "superseded") for k in self.keepers.get(path, []) if self.live(k) and k not in exclude]
            return out
        archived = self.archived_at.get(path)
        if archived is None or self.status.get(archived) is not True:
            return []
        every = self._live_keepers(archived)
        live = [k for k in every if k not in exclude]
        if every and not live:  # folded only into what it must never be replaced by (a control's twin)
            return []
        return [Target(k, "folded") for k in live] or [Target(archived, "archived", archived=True)]

    def _live_keepers(self, start: str) -> list[str]:
        seen = {start}
        frontier = [start]
        found: list[str] = []
        for _ in range(MAX_HOPS):
            step: list[str] = []
            for node in frontier:
                for keeper in self.keepers.get(node, []):
                    if keeper in seen:
                        continue
                    seen.add(keeper)
                    (found if self.live(keeper) else step).append(keeper)
            if not step:
                break
            frontier = step
        return sorted(set(found))

    def entity_names(self, key: str) -> frozenset[str]:
        """``key`` and every key the run renamed it to under an accepted rename."""
        return frozenset({key, *self.renames.get(key, set())})


def archive_moves(repo: GitRepo, base: str, tip: str) -> dict[str, str]:
    """``{live path on the base: its archive path on the tip}`` over the tree diff ``base..tip`` (deletion of ``P`` +
    addition of ``archive/<YYYY>/P`` or its ordinal form; the first addition in path order wins)."""
    changes = repo.tree_changes(base, tip)
    deleted = {c.path for c in changes if c.new_sha is None and c.old_sha is not None}
    moves: dict[str, str] = {}
    for change in sorted(changes, key=lambda c: c.path):
        if change.old_sha is not None or change.new_sha is None:
            continue
        for source in archive_sources(change.path):
            if source in deleted and source not in moves:
                moves[source] = change.path
                break
    return moves


def _meta_keepers(repo: GitRepo, tip: str, archived: Iterable[str]) -> dict[str, list[str]]:
    """``{archived path: the keepers its own superseded-by metas name}`` (leading ``/`` dropped), read from the tip."""
    out: dict[str, list[str]] = {}
    for path in archived:
        data = repo.read_path_at(tip, path)
        if data is None:
            continue
        try:
            values = get_metas(data.decode("utf-8"), "superseded-by")
        except (UnicodeDecodeError, ValueError):
            continue
        named = [v.strip().lstrip("/") for v in values if v.strip().lstrip("/")]
        if named:
            out[path] = named
    return out


UNBACKED = REASON_NOT_ONE_NAME
"""The refusal reason of a journaled rename that no evidence the run did not write backs (module docstring)."""

Cosine = Callable[[str, str], float | None]
"""``cosine(old key, new key)`` of two entity keys (``type:name``): their centroids' cosine on the base, ``None``
when either has none (:func:`git_memhtml.index.corpus.name_centroids`)."""


def no_centroids(_old: str, _new: str) -> float | None:
    """The :data:`Cosine` of a gate with no vectors: no centroid is known."""
    return None


def _alias_backed(old: str, new: str, groups: Sequence[tuple[str, ...]]) -> bool:
    """``old`` and ``new`` (name keys) are one alias group of a person file on the *base*, directly or with ``old``
    written like a member of it (the same letters)."""
    return any(new in group and (old in group or any(same_letters(old, member) for member in group))
               for group in groups)


def _renames(entries: Sequence[JournalEntry], groups: Sequence[tuple[str, ...]], cosine: Cosine = no_centroids
             ) -> tuple[dict[str, set[str]], dict[str, list[RefusedRename]]]:
    """Accepted renames (transitively closed) and refused ones, by the old name's key (module docstring)."""
    wanted = [e for e in entries if isinstance(e, EntityRenamed)]
    direct: dict[str, set[str]] = {}
    refused: dict[str, list[RefusedRename]] = {}
    for entry in wanted:
        old, new = _key(entry.entity_type, entry.old), _key(entry.entity_type, entry.new)
        if old == new:
            continue
        etype = name_key(entry.entity_type)
        _, old_name = split_entity(old)
        _, new_name = split_entity(new)
        reasons = identity_veto_reasons(old_name, new_name)
        people = groups if etype == PERSON else ()
        if not reasons and not _alias_backed(old_name, new_name, people):
            refusal = name_merge_refusal(old_name, new_name, etype, cosine(old, new))
            reasons = () if refusal is None else (refusal,)
        if reasons:
            refused.setdefault(old, []).append(RefusedRename(
                f"{entry.entity_type}:{entry.old}", f"{entry.entity_type}:{entry.new}", reasons))
            continue
        direct.setdefault(old, set()).add(new)
    closed: dict[str, set[str]] = {}
    for start in direct:
        reach: set[str] = set()
        frontier = list(direct[start])
        while frontier:
            key = frontier.pop()
            if key in reach or key == start:
                continue
            reach.add(key)
            frontier.extend(direct.get(key, ()))
        closed[start] = reach
    return closed, refused


def renamed_keys(journal: Sequence[JournalEntry]) -> set[str]:
    """The entity keys (``type:name``) on either side of the journal's ``entity-renamed`` lines: the names whose
    centroids the gate reads (:func:`read_pointers`' ``cosine``)."""
    return {_key(e.entity_type, n) for e in journal if isinstance(e, EntityRenamed) for n in (e.old, e.new)}


def alias_groups_at(repo: GitRepo, commit: str) -> list[tuple[str, ...]]:
    """The alias groups the person files of ``commit`` declare (:func:`git_memhtml.tree.people.alias_group`), by
    path; read from the commit's blobs, never from a work tree. The gate reads the *base*'s: an alias the run itself
    declares is what the run says, not evidence for it."""
    groups: list[tuple[str, ...]] = []
    for path, sha in sorted(repo.tree_blobs(commit).items()):  # every memory: a person file is no folder's
        if has_memory_suffix(path):
            group = alias_group(path, repo.read_blob(sha))
            if group is not None:
                groups.append(group)
    return groups


def veto_replacements(pointers: RunPointers, base_texts: Mapping[str, tuple[str, str]],
                      tip_texts: Mapping[str, tuple[str, str]], *,
                      base_subjects: Mapping[str, frozenset[str]] | None = None,
                      tip_subjects: Mapping[str, frozenset[str]] | None = None,
                      ) -> dict[tuple[str, str], tuple[str, ...]]:
    """``(base path, replacement) → dropped markers`` for every replacement of a base memory that does not carry it
    (``domain.merge.carry_gaps``, docs/veto.md §4): a replacement that drops a number, a qualifier or a time of the
    base memory's claim, turns its promise into a completion (or back), states the claim with the other polarity
    ("should not run" folded into "should run"), or is about other subjects, explains nothing. The rule compress folds
    by, read one way: a replacement may say more than the memory (a canonical carries many members; a keeper its own
    facts), never less or the opposite.

    Texts are ``{path: (claim, article)}`` of each side; subjects ``{path: subject identities}`` of each side (the
    subject check runs only when both maps are given; a path absent names no subject).
    """
    out: dict[tuple[str, str], tuple[str, ...]] = {}
    for path, (claim, article) in base_texts.items():
        mine = None if base_subjects is None or tip_subjects is None else base_subjects.get(path, frozenset())
        for target in pointers.replacements(path):
            other = tip_texts.get(target.path)
            if other is None:
                continue
            theirs = None if mine is None or tip_subjects is None else tip_subjects.get(target.path, frozenset())
            reasons = carry_gaps(MergeText(claim, article, mine), MergeText(*other, theirs))
            if reasons:
                out[(path, target.path)] = reasons
    return out


def subjects_by_path(keys: Mapping[str, frozenset[str]], groups: Sequence[tuple[str, ...]],
                     pointers: RunPointers | None = None) -> dict[str, frozenset[str]]:
    """``{path: subject identities}`` from ``{path: entity keys}`` (``index.probe_rows.entity_keys_by_path``) under
    the base's person alias groups; with ``pointers``, each key also stands for the names the run renamed it to under
    an accepted rename (a base memory's subject under its new name is still its subject)."""
    aliases = alias_representatives(groups)
    out: dict[str, frozenset[str]] = {}
    for path, found in keys.items():
        names = {name for key in found for name in (pointers.entity_names(key) if pointers else {key})}
        subjects = subject_identities(names, aliases)
        if subjects:
            out[path] = subjects
    return out


def read_pointers(repo: GitRepo, base: str, tip: str, *, status: Mapping[str, bool],
                  supersedes: Mapping[str, Sequence[str]], journal: Sequence[JournalEntry],
                  groups: Sequence[tuple[str, ...]] = (), cosine: Cosine = no_centroids) -> RunPointers:
    """Assemble :class:`RunPointers` from the tree diff, the tip's ``{path: archived}`` and ``{superseded: [sources]}``
    (:mod:`git_memhtml.index.probe_rows`), the run journal read from the tip, the alias groups of the tip's person
    files on the base (:func:`alias_groups_at`) and the centroid cosine of two entity keys on the base (``cosine``,
    :func:`renamed_keys` names the keys it is asked about).

    Raises:
        GitError: a commit cannot be read.
    """
    moves = archive_moves(repo, base, tip)
    refiled = refiled_moves(repo, repo.tree_changes(base, tip))
    keepers: dict[str, set[str]] = {}
    for dst, sources in supersedes.items():
        keepers.setdefault(dst, set()).update(s for s in sources if s != dst)
    for path, named in _meta_keepers(repo, tip, moves.values()).items():
        keepers.setdefault(path, set()).update(n for n in named if n != path)
    renames, refused = _renames(journal, groups, cosine)
    shown = {_key(e.entity_type, e.new): f"{e.entity_type}:{e.new}" for e in journal if isinstance(e, EntityRenamed)}
    vetoed = sorted({(e.keep, e.drop) for e in journal if isinstance(e, MergeVetoed) and e.keep != e.drop})
    return RunPointers(
        archived_at=moves,
        keepers={path: sorted(found) for path, found in keepers.items()},
        status=status,
        renames=renames,
        refused=refused,
        vetoed=tuple(vetoed),
        shown=shown,
        refiled=refiled,
    )
