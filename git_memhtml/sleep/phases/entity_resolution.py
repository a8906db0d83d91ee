"""Phase 3, entity-resolution, no-model stages: key, pairwise rule, complete linkage, alias oracle, union-find.

(docs/phases.md §1.3 and docs/entities.md §6; docs/entities.md §6, docs/tasks.md §7; issue 8 item 4.) Per entity type
(types
compared by key), in sorted order: raw names group by their matching key (``domain.entities.name_key``: NFC, case
folded, collapsed whitespace) and their counts add up; each key is written in its most-claimed display form (case
kept, ties to the smaller string). Different keys are judged pairwise by ``domain.entities.pair_verdict``
(LCS ratio ≥ 0.85, the memory-merge numeric/variant veto, no edit inside a short token, no person-name spelling
edit); the ``merge`` pairs join clusters by complete linkage, so every pair inside a cluster passes the rule. For
persons, each person file (archived ones too; ``tree.people``: what the file is, not where it is filed) declares its
one subject's ``memhtml-alias`` values; the other people it names are not aliases of anyone. Every accepted pair
feeds one union-find whose survivor is the most-claimed key (ties → lexicographically smaller). Each raw value whose
final form differs is rewritten in every active claimant's head. ``review`` pairs (the [0.75, 0.85) band, and ≥ 0.85
pairs the letter rule refused) that did not merge become detected review tasks; ``distinct`` pairs (numeric or
variant divergence) are counted as ``namesKeptApart`` and never asked about. With no model there is no sweep of
vanished review tasks.

The run journal (docs/ledger.md §2) gets one ``entity-renamed`` entry per name rewrite made in at least one file, in
the phase's own commit. Pairs kept apart are only counted: journaled, they would grow with the square of the
numbered names every night.

Only names that can be rewritten are read: the ``concept`` and ``lang`` rows of ``file_entities`` are projections
of article markup (``<dfn>``, ``lang``) and ``unknown`` rows have no ``type:`` prefix, so none of them has a
``memhtml-entity`` line to splice.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from git_memhtml.document import editors
from git_memhtml.document.model import PARA_BUCKETS
from git_memhtml.domain.entities import (
    AUTO_MERGE_RATIO,
    DISTINCT,
    MERGE,
    PERSON,
    REASON_BAND,
    REVIEW,
    REVIEW_RATIO,
    PairVerdict,
    display_name,
    name_key,
    pair_verdicts,
    resolve_names,
)
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.corpus import EntityCount, active_entities
from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.sleep.engine.journal import EntityRenamed, record_journal
from git_memhtml.sleep.engine.model import PhaseModel
from git_memhtml.sleep.phases import entity_model
from git_memhtml.sleep.phases.tasks import Measurement, TaskTally, mint_detected_task, sweep_detections
from git_memhtml.store import edits
from git_memhtml.tree.layout import PEOPLE_DIR, has_memory_suffix
from git_memhtml.tree.paths import tree_file_problem
from git_memhtml.tree.people import ALIAS_MARKER, alias_group

DETECTOR = "entity-resolution"
UNREWRITABLE_TYPES: frozenset[str] = frozenset({"concept", "lang", "unknown"})
"""``file_entities`` types with no ``memhtml-entity`` line behind them (see the module docstring)."""


@dataclass(frozen=True)
class BandPair:
    """A pair of keys the rule sends to review (docs/entities.md §6 step 3, 7), with both display forms."""

    entity_type: str
    a: str
    b: str
    ratio: float
    reason: str = REASON_BAND
    shown_a: str = ""
    shown_b: str = ""
    confidence: float | None = None
    """The model's cluster confidence, for a pair deferred below its floor (reason ``below-floor``)."""


@dataclass
class TypeResolution:
    """The resolution of one entity type: ``{raw: final display}`` for every raw name, plus pair statistics.

    ``normalized`` is each raw name's own key written in that key's display form; ``counts`` is per key.
    """

    entity_type: str
    final: dict[str, str]
    normalized: dict[str, str]
    counts: dict[str, int]
    alias_pairs: int = 0
    kept_apart: int = 0
    band: list[BandPair] = field(default_factory=list)


def alias_file_paths(repo: GitRepo) -> list[str]:
    """Every plain ``.html`` file under the PARA buckets (archive included) whose bytes hold ``memhtml-alias``,
    sorted: the files that may declare aliases. Which of them is a person file is the file's own business
    (``tree.people.person_file_subject``), never its folder. A symlinked file or folder is never read."""
    root = repo.root
    found: list[str] = []
    for bucket in PARA_BUCKETS:
        top = root / bucket
        if top.is_symlink() or not top.is_dir():
            continue
        for folder, _dirs, names in os.walk(top):  # followlinks=False: a linked folder is never entered
            for name in names:
                file = Path(folder) / name
                if has_memory_suffix(name) and _plain_file(root, file) and ALIAS_MARKER in file.read_bytes():
                    found.append(file.relative_to(root).as_posix())
    return sorted(found)


def _plain_file(root: Path, file: Path) -> bool:
    """A regular file with no symlink on its way from ``root`` (a linked person file is never read)."""
    return file.is_file() and tree_file_problem(root, file.relative_to(root).as_posix()) is None


def alias_groups(repo: GitRepo) -> list[tuple[str, ...]]:
    """Key groups the person files declare (docs/entities.md §6 step 4), in path order.

    Each is :func:`git_memhtml.tree.people.alias_group` of a person file, wherever it is filed: its subject plus its
    ``memhtml-alias`` values, as keys, de-duplicated and sorted, with at least two keys. Other people the file names
    are not aliases of its subject. Unparseable files and files that are no person file are skipped.
    """
    groups: list[tuple[str, ...]] = []
    for path in alias_file_paths(repo):
        group = alias_group(path, (repo.root / path).read_bytes())
        if group is not None:
            groups.append(group)
    return groups


def _display_forms(raw_counts: Mapping[str, int]) -> dict[str, str]:
    """``{key: display}``: the display form claimed by most files, ties to the smaller string."""
    per_display: dict[str, int] = {}
    for raw, count in raw_counts.items():
        shown = display_name(raw)
        per_display[shown] = per_display.get(shown, 0) + count
    best: dict[str, tuple[int, str]] = {}
    for shown, count in sorted(per_display.items()):
        key = name_key(shown)
        if key not in best or count > best[key][0]:
            best[key] = (count, shown)
    return {key: shown for key, (_, shown) in best.items()}


@dataclass(frozen=True)
class TypeNames:
    """One type's names before any merge: keys, counts, display forms, pairwise verdicts, declared alias pairs.

    Attributes:
        keys: ``{raw: key}`` for every raw name, in sorted raw order.
        counts: file count per key (the sum over its raw spellings).
        shown: display form per key (:func:`_display_forms`).
        verdicts: :func:`~git_memhtml.domain.entities.pair_verdicts` over the keys.
        alias_pairs: sorted key pairs a person file declares that the pairwise rule did not already merge.
    """

    entity_type: str
    keys: Mapping[str, str]
    counts: Mapping[str, int]
    shown: Mapping[str, str]
    verdicts: tuple[PairVerdict, ...]
    alias_pairs: tuple[tuple[str, str], ...]

    def survivors(self, model_pairs: Iterable[tuple[str, str]] = ()) -> dict[str, str]:
        """``{key: survivor}`` of the character clusters, the alias pairs and ``model_pairs``: one union-find."""
        return resolve_names(self.counts, self.verdicts, [*self.alias_pairs, *model_pairs])


def type_names(entity_type: str, raw_counts: Mapping[str, int], groups: Iterable[Sequence[str]] = ()) -> TypeNames:
    """Key, count and judge one type's raw names (docs/entities.md §6 steps 2-4). Pure.

    Args:
        raw_counts: file count per raw name.
        groups: alias groups (keys); only pairs whose two keys occur among this type's names and that did not
            already merge by the pairwise rule count as alias merges.
    """
    keys = {raw: name_key(raw) for raw in sorted(raw_counts)}
    counts: dict[str, int] = {}
    for raw, key in keys.items():
        counts[key] = counts.get(key, 0) + raw_counts[raw]
    verdicts = tuple(pair_verdicts(counts, entity_type))
    merges = {(v.a, v.b) for v in verdicts if v.verdict == MERGE}
    alias_pairs: set[tuple[str, str]] = set()
    for group in groups:
        present = sorted({n for n in group if n in counts})
        for a, b in combinations(present, 2):
            if (a, b) not in merges:
                alias_pairs.add((a, b))
    return TypeNames(entity_type, keys, counts, _display_forms(raw_counts), verdicts,
                     tuple(sorted(alias_pairs)))


def resolve_names_of(
    names: TypeNames,
    model_pairs: Sequence[tuple[str, str]] = (),
    clustered: Collection[frozenset[str]] = frozenset(),
    deferred: Sequence[BandPair] = (),
) -> TypeResolution:
    """Resolve one type (docs/entities.md §6 steps 7-8). Pure.

    Args:
        model_pairs: merges the model stage accepted; they join the same union-find as the alias pairs.
        clustered: key pairs the model put in one cluster: a review pair among them is the model's, not a
            ``character-band`` task.
        deferred: pairs the model stage deferred to review (below its confidence floor).
    """
    survivors = names.survivors(model_pairs)
    shown = names.shown
    final = {raw: shown[survivors.get(key, key)] for raw, key in names.keys.items()}
    normalized = {raw: shown[key] for raw, key in names.keys.items()}
    pending = [
        BandPair(names.entity_type, v.a, v.b, v.ratio, v.reason, shown[v.a], shown[v.b])
        for v in names.verdicts
        if v.verdict == REVIEW and survivors.get(v.a, v.a) != survivors.get(v.b, v.b)
        and frozenset((v.a, v.b)) not in clustered
    ]
    pending.extend(p for p in deferred if survivors.get(p.a, p.a) != survivors.get(p.b, p.b))
    apart = sum(1 for v in names.verdicts if v.verdict == DISTINCT)
    return TypeResolution(names.entity_type, final, normalized, dict(names.counts), len(names.alias_pairs), apart,
                          pending)


def resolve_type(
    entity_type: str, raw_counts: Mapping[str, int], groups: Iterable[Sequence[str]] = ()
) -> TypeResolution:
    """Resolve one type's raw names with no model (docs/entities.md §6 steps 2-4, 7-8). Pure.

    Args:
        raw_counts: file count per raw name.
        groups: alias groups (keys); only pairs whose two keys occur among this type's names and that did not
            already merge by the pairwise rule count as alias merges.
    """
    return resolve_names_of(type_names(entity_type, raw_counts, groups))


def _by_type(entities: Sequence[EntityCount]) -> dict[str, list[EntityCount]]:
    """Rows grouped by type key (``Person`` and ``person`` are one type), in sorted key order."""
    grouped: dict[str, list[EntityCount]] = {}
    for entity in entities:
        etype = name_key(entity.entity_type)
        if etype in UNREWRITABLE_TYPES:
            continue
        grouped.setdefault(etype, []).append(entity)
    return {t: grouped[t] for t in sorted(grouped)}


def _rewrite_edits(
    html: str, rewrites: Sequence[tuple[str, str]], made: list[tuple[str, str]] | None = None
) -> list[edits.Edit]:
    """Edits turning each ``old`` entity value present in ``html`` into ``new`` (old removed; new added once); each
    ``(old, new)`` that yields an edit is appended to ``made``."""
    present = set(editors.get_metas(html, "entity"))
    out: list[edits.Edit] = []
    for old, new in rewrites:
        if old not in present:
            continue
        if made is not None:
            made.append((old, new))
        out.append(edits.remove_meta("entity", old))
        present.discard(old)
        if new not in present:
            out.append(edits.add_meta("entity", new))
            present.add(new)
    return out


def rewrite_claimants(
    env: PhaseEnv, plan: Mapping[str, list[tuple[str, str]]], made: set[tuple[str, str]] | None = None
) -> int:
    """Apply ``{path: [(old 'type:raw', new 'type:final')]}`` to the tree (plus ``updated``); return files changed.

    A claimant missing from the tree, or no longer carrying the old line, is skipped (the tree is authoritative).
    Every ``(old, new)`` written into at least one file is added to ``made``. On a dry run the number of files
    that would change is returned and nothing is written (``made`` then holds the rewrites that would be made).
    """
    changed = 0
    stamped: list[str] = []
    for path in sorted(plan):
        target: Path = env.repo.root / path
        if not target.is_file():
            continue
        pairs: list[tuple[str, str]] = []
        splice = _rewrite_edits(target.read_text(encoding="utf-8"), plan[path], pairs)
        if not splice:
            continue
        if env.dry_run:
            written = True
        else:
            written = edits.stamp_file(env.repo, path, [*splice, edits.set_meta("updated", env.at)], stage=False)
            if written:
                stamped.append(path)
        if written:
            changed += 1
            if made is not None:
                made.update(pairs)
    if stamped:
        env.repo.stage(stamped)  # once: each stage call rewrites the whole git index
    return changed


def renames(made: Iterable[tuple[str, str]]) -> list[EntityRenamed]:
    """The journal entries of the rewrites made (``(old 'type:raw', new 'type:final')``), sorted and de-duplicated.

    The type is the new line's prefix (its key); a rewrite of the prefix alone (``Person:Ann`` → ``person:Ann``)
    renames no name, matches by the same key before and after, and is left out.
    """
    out: set[EntityRenamed] = set()
    for old, new in made:
        etype, _, new_name = new.partition(":")
        old_name = old.partition(":")[2]
        if old_name != new_name:
            out.add(EntityRenamed(etype, old_name, new_name))
    return sorted(out, key=lambda e: (e.entity_type, e.old, e.new))


def _review_detail(entity_type: str) -> str:
    """What a reviewer does with the task: only a person file's ``memhtml-alias`` is alias evidence (docs/entities.md §6
    step 4)."""
    if entity_type == PERSON:
        return (
            "If they are one person, add the other name as a memhtml-alias in that person's file "
            f"({PEOPLE_DIR}/) and the next sleep merges them; otherwise close this task."
        )
    return (
        "If they are one subject, rewrite the memhtml-entity lines that use one spelling to the other; "
        "otherwise close this task."
    )


def _mint_review_tasks(env: PhaseEnv, pairs: Sequence[BandPair], counts: Mapping[str, Mapping[str, int]]) -> TaskTally:
    tally = TaskTally()
    ordered = sorted(pairs, key=lambda p: (f"{p.entity_type} {p.a} {p.b}", p.ratio))
    seen: set[str] = set()
    for pair in ordered:
        finding = f"{pair.entity_type} {pair.a} {pair.b}"
        if finding in seen:
            continue
        seen.add(finding)
        ca, cb = counts[pair.entity_type].get(pair.a, 0), counts[pair.entity_type].get(pair.b, 0)
        a, b = pair.shown_a or pair.a, pair.shown_b or pair.b
        if pair.confidence is not None:
            measured = (f"model cluster confidence {pair.confidence:.2f} below the "
                        f"{entity_model.ENTITY_CONFIDENCE_FLOOR:.2f} floor")
        elif pair.reason == REASON_BAND:
            measured = (f"character similarity {pair.ratio:.3f} in the review band "
                        f"[{REVIEW_RATIO:.2f}, {AUTO_MERGE_RATIO:.2f})")
        else:
            measured = (f"character similarity {pair.ratio:.3f} at or above {AUTO_MERGE_RATIO:.2f} but refused by "
                        f"the letter rule ({pair.reason})")
        evidence = Measurement(f'{measured}; "{a}" is claimed by {ca} memories, "{b}" by {cb}')
        tally.add(
            mint_detected_task(
                env,
                DETECTOR,
                finding,
                title=f"Confirm {pair.entity_type} alias {a} / {b}",
                claim=f'confirm: are "{a}" and "{b}" the same {pair.entity_type}?',
                evidence=evidence,
                detail=_review_detail(pair.entity_type),
            )
        )
    return tally


@dataclass(frozen=True)
class EntityResolutionCounts(PhaseCounts):
    """See :func:`run`; ``llm_merges``, ``pending_corroboration`` and ``tasks_closed`` stay 0 with no model."""

    entities: int
    names_normalized: int
    fuzzy_merges: int
    llm_merges: int
    alias_merges: int
    pending_corroboration: int
    review_candidates: int
    names_kept_apart: int
    tasks_minted: int
    tasks_refreshed: int
    tasks_framed: int
    tasks_dismissed: int
    tasks_closed: int
    tasks_capped: int
    files_rewritten: int


def run(env: PhaseEnv) -> PhaseOutcome:
    """Normalise and merge entity names (docs/phases.md §1.3, docs/entities.md §6); with a model bound the model core
    (``entity_model``) judges what the characters cannot, and a night whose every call was answered sweeps the review
    tasks it no longer sees.

    Counts: ``entities`` (distinct type:raw names read), ``namesNormalized``, ``fuzzyMerges``, ``llmMerges``
    (model merges accepted; 0 with no model), ``aliasMerges``, ``pendingCorroboration`` (model merges seen once so
    far; 0 with no model), ``reviewCandidates``, ``namesKeptApart`` (related pairs the numeric/variant veto calls
    different entities), ``tasksMinted``, ``tasksRefreshed``, ``tasksFramed``, ``tasksDismissed``, ``tasksClosed``
    (0 with no model), ``tasksCapped``, ``filesRewritten``.

    Raises:
        StorageError: the index could not be read. InvalidMemory: a review task failed the render gate.
        ConfigError: a prompt override in the run's tree is unreadable.
    """
    model = PhaseModel.for_phase(env, DETECTOR)
    judge = entity_model.EntityJudge(env, model) if model.bound else None
    by_type = _by_type(active_entities(env.db))
    groups = alias_groups(env.repo) if PERSON in by_type else []
    plan: dict[str, list[tuple[str, str]]] = {}
    names_normalized = fuzzy = alias = apart = llm = pending = 0
    band: list[BandPair] = []
    type_counts: dict[str, dict[str, int]] = {}
    total = 0
    for etype, all_rows in by_type.items():
        rows = [r for r in all_rows if name_key(r.entity_name)]  # a blank name has no spelling to resolve
        total += len(rows)
        raw_counts: dict[str, int] = {}
        for row in rows:
            raw_counts[row.entity_name] = raw_counts.get(row.entity_name, 0) + row.count
        if judge is None:
            resolution = resolve_type(etype, raw_counts, groups if etype == PERSON else ())
        else:
            names = type_names(etype, raw_counts, groups if etype == PERSON else ())
            verdicts = judge.judge(_evidence(names, rows, groups if etype == PERSON else ()))
            llm += len(verdicts.accepted)
            pending += verdicts.pending
            deferred = [BandPair(etype, a, b, 0.0, entity_model.REASON_BELOW_FLOOR, names.shown[a], names.shown[b],
                                 confidence) for a, b, confidence in verdicts.deferred]
            resolution = resolve_names_of(names, verdicts.accepted, verdicts.clustered, deferred)
        type_counts[etype] = resolution.counts
        alias += resolution.alias_pairs
        apart += resolution.kept_apart
        band.extend(resolution.band)
        for row in rows:
            raw = row.entity_name
            old = f"{row.entity_type}:{raw}"
            norm = f"{etype}:{resolution.normalized[raw]}"
            new = f"{etype}:{resolution.final[raw]}"
            names_normalized += norm != old
            fuzzy += new != norm
            if new == old:
                continue
            for path in row.paths:
                plan.setdefault(path, []).append((old, new))
    made: set[tuple[str, str]] = set()
    rewritten = rewrite_claimants(env, plan, made)
    tally = _mint_review_tasks(env, band, type_counts)
    if judge is not None:
        sweep_detections(env, DETECTOR, tally, judged=model.judged_all and env.embedder is not None)
    record_journal(env, renames(made))
    counts = EntityResolutionCounts(
        entities=total,
        names_normalized=names_normalized,
        fuzzy_merges=fuzzy,
        llm_merges=llm,
        alias_merges=alias,
        pending_corroboration=pending,
        review_candidates=len(band),
        names_kept_apart=apart,
        **tally.count_fields(),
        files_rewritten=rewritten,
    )
    body = f"deferred {tally.minted + tally.refreshed} alias decisions to review tasks"
    if tally.closed:
        body += f"; closed {tally.closed}: no longer detected"
    return PhaseOutcome(
        counts,
        subject=f"normalize {names_normalized} entity names, merge {fuzzy} aliases",
        body=body,
        detail=model.detail if env.services.model is not None else None,
        model=model.usage(),
    )


def _evidence(
    names: TypeNames, rows: Sequence[EntityCount], groups: Sequence[Sequence[str]]
) -> entity_model.TypeEvidence:
    """The model stage's view of one type: claimant paths per key, the pre-model survivors, declared aliases."""
    paths: dict[str, set[str]] = {}
    for row in rows:
        paths.setdefault(names.keys[row.entity_name], set()).update(row.paths)
    aliases: dict[str, list[str]] = {}
    for group in groups:
        for key in group:
            if key in names.counts:
                others = [names.shown.get(k, k) for k in group if k != key]
                aliases.setdefault(key, []).extend(o for o in others if o not in aliases.get(key, []))
    return entity_model.TypeEvidence(
        entity_type=names.entity_type,
        counts=names.counts,
        shown=names.shown,
        paths={k: tuple(sorted(v)) for k, v in paths.items()},
        survivors=names.survivors(),
        aliases={k: tuple(v) for k, v in aliases.items()},
    )


register(PhaseSpec("entity-resolution", run, EntityResolutionCounts, model=True))
