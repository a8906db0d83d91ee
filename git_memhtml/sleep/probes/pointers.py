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
  distinct (``numeric``, ``variant``: ``svc-amber-20`` → ``svc-amber-2``) and the two names are one by evidence
  (else ``unbacked``): the same letters and digits, only case, spacing and separators differing
  (``checkout_api`` → ``checkout-api``), or, for persons, one alias group of a person file on the *base*
  (``Priya`` → ``Priya Raman``). A spelling merge the entity rule makes (``reporting-gateway`` →
  ``recording-gateway``: one word for another) is no explanation: nothing shows the two words name one thing.

:meth:`RunPointers.targets` turns a base path into the places a probe looks on the tip, each with how it got there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from git_memhtml.document.editors import get_metas
from git_memhtml.domain.entities import PERSON, entity_key, name_key, name_tokens, split_entity
from git_memhtml.domain.merge import MergeText, identity_veto_reasons, veto_reasons
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
    veto's reasons, or ``unbacked``."""

    old: str
    new: str
    reasons: tuple[str, ...]

    @property
    def why(self) -> str:
        """Why the rename explains nothing, for a lost probe's message."""
        if self.reasons == (UNBACKED,):
            return "no evidence joins (not the same letters, and no person file on the base declares them one)"
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
    """``(base path, replacement)`` → the merge-veto predicates that fire between them: a replacement the veto would
    never have let fold into it is no replacement (:func:`veto_replacements`)."""

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


UNBACKED = "unbacked"
"""The refusal reason of a journaled rename that no evidence on the tip backs (module docstring)."""


def _backed(old: str, new: str, groups: Sequence[tuple[str, ...]]) -> bool:
    """``old`` and ``new`` (name keys) are one name by evidence the run did not write (module docstring): the same
    letters and digits (only case, spacing and separators differ: ``checkout_api`` / ``checkout-api``), or one
    alias group of a person file on the *base*, directly or with ``old`` written like a member of it."""
    if _same_letters(old, new):
        return True
    for group in groups:
        if new in group and (old in group or any(_same_letters(old, member) for member in group)):
            return True
    return False


def _same_letters(a: str, b: str) -> bool:
    return "".join(name_tokens(a)) == "".join(name_tokens(b))


def _renames(entries: Sequence[JournalEntry], groups: Sequence[tuple[str, ...]]
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
        if not reasons and not _backed(old_name, new_name, people):
            reasons = (UNBACKED,)
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
                      tip_texts: Mapping[str, tuple[str, str]]) -> dict[tuple[str, str], tuple[str, ...]]:
    """``(base path, replacement) → veto predicates`` for every replacement of a base memory that the merge veto
    (``domain.merge.veto_reasons``: negation, numeric, variant over claim and article) would have refused: "should
    not run" folded into "should run" explains nothing. Texts are ``{path: (claim, article)}`` of each side."""
    out: dict[tuple[str, str], tuple[str, ...]] = {}
    for path, (claim, article) in base_texts.items():
        for target in pointers.replacements(path):
            other = tip_texts.get(target.path)
            if other is None:
                continue
            reasons = veto_reasons(MergeText(claim, article), MergeText(*other))
            if reasons:
                out[(path, target.path)] = reasons
    return out


def read_pointers(repo: GitRepo, base: str, tip: str, *, status: Mapping[str, bool],
                  supersedes: Mapping[str, Sequence[str]], journal: Sequence[JournalEntry],
                  groups: Sequence[tuple[str, ...]] = ()) -> RunPointers:
    """Assemble :class:`RunPointers` from the tree diff, the tip's ``{path: archived}`` and ``{superseded: [sources]}``
    (:mod:`git_memhtml.index.probe_rows`), the run journal read from the tip and the alias groups of the tip's person
    files on the base (:func:`alias_groups_at`).

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
    renames, refused = _renames(journal, groups)
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
