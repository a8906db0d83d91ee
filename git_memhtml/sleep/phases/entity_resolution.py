"""Phase 3, entity-resolution, no-model stages: normalise, character auto-merge, alias oracle, one union-find.

(``spec/memhtml-sleep-eval.md`` §1 phase 3 and §6; seed 000 §8, §10.) Per entity type, in sorted order: raw
names normalise (NFC, lowercase, collapsed whitespace) and their counts add up; normalised pairs with an LCS ratio
of at least 0.85 merge; for persons, every person file in the tree (archived ones too) that declares
``memhtml-alias`` values asserts identity for all of its names; every accepted pair feeds one union-find whose
survivor is the most-claimed name (ties → lexicographically smaller). Each raw name whose final form differs is
rewritten in every active claimant's head. Pairs in the [0.75, 0.85) review band that did not merge become
detected review tasks. With no model there is no sweep of vanished review tasks.

Only names that can be rewritten are read: the ``concept`` and ``lang`` rows of ``file_entities`` are projections
of article markup (``<dfn>``, ``lang``) and ``unknown`` rows have no ``type:`` prefix, so none of them has a
``memhtml-entity`` line to splice.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from git_memhtml.document import editors
from git_memhtml.document.parse import parse_memory
from git_memhtml.domain.entities import AUTO_MERGE_RATIO, REVIEW_RATIO, lcs_ratio, merge_names, normalize_name
from git_memhtml.errors import InvalidMemory
from git_memhtml.gitrepo import GitRepo
from git_memhtml.sleep.env import PhaseEnv, PhaseOutcome
from git_memhtml.sleep.queries import EntityCount, active_entities
from git_memhtml.sleep.tasks import Measurement, TaskTally, mint_detected_task
from git_memhtml.store import edits
from git_memhtml.store.paths import tree_file_problem

DETECTOR = "entity-resolution"
PEOPLE_DIR = "resources/people"
PERSON = "person"
UNREWRITABLE_TYPES: frozenset[str] = frozenset({"concept", "lang", "unknown"})
"""``file_entities`` types with no ``memhtml-entity`` line behind them (see the module docstring)."""


@dataclass(frozen=True)
class BandPair:
    """A normalised pair in the review band [0.75, 0.85) (sleep-eval §6 step 3)."""

    entity_type: str
    a: str
    b: str
    ratio: float


@dataclass
class TypeResolution:
    """The resolution of one entity type: ``{raw: final}`` for every raw name, plus pair statistics."""

    entity_type: str
    final: dict[str, str]
    normalized: dict[str, str]
    counts: dict[str, int]
    fuzzy_pairs: int = 0
    alias_pairs: int = 0
    band: list[BandPair] = field(default_factory=list)


def _ratio_may_reach(a: str, b: str, floor: float) -> bool:
    """Cheap upper bound: LCS ≤ min length, so ``2·min/(|a|+|b|) < floor`` can never reach ``floor``."""
    total = len(a) + len(b)
    return total > 0 and 2 * min(len(a), len(b)) / total >= floor


def character_pairs(names: Sequence[str]) -> tuple[list[tuple[str, str, float]], list[tuple[str, str, float]]]:
    """``(auto, band)`` pairs over sorted normalised ``names``: ratio ≥ 0.85, and 0.75 ≤ ratio < 0.85.

    Pure; pairs are ``(a, b, ratio)`` with ``a < b``, in sorted order (sleep-eval §6 step 3).
    """
    auto: list[tuple[str, str, float]] = []
    band: list[tuple[str, str, float]] = []
    for a, b in combinations(sorted(set(names)), 2):
        if not _ratio_may_reach(a, b, REVIEW_RATIO):
            continue
        ratio = lcs_ratio(a, b)
        if ratio >= AUTO_MERGE_RATIO:
            auto.append((a, b, ratio))
        elif ratio >= REVIEW_RATIO:
            band.append((a, b, ratio))
    return auto, band


def person_file_paths(repo: GitRepo) -> list[str]:
    """Every ``resources/people/**.html`` and ``archive/<Y>/resources/people/**.html`` in the tree, sorted."""
    root = repo.root
    found: set[str] = set()
    live = root / PEOPLE_DIR
    if live.is_dir():
        found.update(p.relative_to(root).as_posix() for p in live.rglob("*.html") if _plain_file(root, p))
    archive = root / "archive"
    if archive.is_dir():
        for year in archive.iterdir():
            folder = year / PEOPLE_DIR
            if folder.is_dir():
                found.update(p.relative_to(root).as_posix() for p in folder.rglob("*.html") if _plain_file(root, p))
    return sorted(found)


def _plain_file(root: Path, file: Path) -> bool:
    """A regular file with no symlink on its way from ``root`` (a linked person file is never read)."""
    return file.is_file() and tree_file_problem(root, file.relative_to(root).as_posix()) is None


def alias_groups(repo: GitRepo) -> list[tuple[str, ...]]:
    """Normalised name groups the person files declare (sleep-eval §6 step 4), in path order.

    A group is the file's ``person:`` entity names plus its ``memhtml-alias`` values, normalised and de-duplicated
    (sorted); it counts only with at least one person entity and at least two names. Unparseable files are skipped.
    """
    groups: list[tuple[str, ...]] = []
    for path in person_file_paths(repo):
        try:
            doc = parse_memory((repo.root / path).read_bytes(), path=path)
        except InvalidMemory:
            continue
        persons = [e.split(":", 1)[1] for e in doc.entities if e.startswith(f"{PERSON}:") and e[len(PERSON) + 1 :]]
        if not persons:
            continue
        names = sorted({normalize_name(n) for n in (*persons, *doc.aliases) if normalize_name(n)})
        if len(names) >= 2:
            groups.append(tuple(names))
    return groups


def resolve_type(
    entity_type: str, raw_counts: Mapping[str, int], groups: Iterable[Sequence[str]] = ()
) -> TypeResolution:
    """Resolve one type's raw names (sleep-eval §6 steps 2-4, 7-8). Pure.

    Args:
        raw_counts: file count per raw name.
        groups: alias groups (normalised names); only pairs whose two names occur among this type's names and
            that did not already auto-merge count as alias merges.
    """
    normalized = {raw: normalize_name(raw) for raw in sorted(raw_counts)}
    counts: dict[str, int] = {}
    for raw, norm in normalized.items():
        counts[norm] = counts.get(norm, 0) + raw_counts[raw]
    auto, band = character_pairs(list(counts))
    accepted: list[tuple[str, str]] = [(a, b) for a, b, _ in auto]
    auto_set = {(a, b) for a, b, _ in auto}
    alias_pairs: set[tuple[str, str]] = set()
    for group in groups:
        present = sorted({n for n in group if n in counts})
        for a, b in combinations(present, 2):
            if (a, b) not in auto_set:
                alias_pairs.add((a, b))
    accepted.extend(sorted(alias_pairs))
    survivors = merge_names(counts, accepted)
    final = {raw: survivors.get(norm, norm) for raw, norm in normalized.items()}
    pending = [BandPair(entity_type, a, b, r) for a, b, r in band if survivors.get(a, a) != survivors.get(b, b)]
    return TypeResolution(entity_type, final, normalized, counts, len(auto), len(alias_pairs), pending)


def _by_type(entities: Sequence[EntityCount]) -> dict[str, list[EntityCount]]:
    grouped: dict[str, list[EntityCount]] = {}
    for entity in entities:
        if entity.entity_type in UNREWRITABLE_TYPES:
            continue
        grouped.setdefault(entity.entity_type, []).append(entity)
    return {t: grouped[t] for t in sorted(grouped)}


def _rewrite_edits(html: str, rewrites: Sequence[tuple[str, str]]) -> list[edits.Edit]:
    """Edits turning each ``old`` entity value present in ``html`` into ``new`` (old removed; new added once)."""
    present = set(editors.get_metas(html, "entity"))
    out: list[edits.Edit] = []
    for old, new in rewrites:
        if old not in present:
            continue
        out.append(edits.remove_meta("entity", old))
        present.discard(old)
        if new not in present:
            out.append(edits.add_meta("entity", new))
            present.add(new)
    return out


def rewrite_claimants(env: PhaseEnv, plan: Mapping[str, list[tuple[str, str]]]) -> int:
    """Apply ``{path: [(old 'type:raw', new 'type:final')]}`` to the tree (plus ``updated``); return files changed.

    A claimant missing from the tree, or no longer carrying the old line, is skipped (the tree is authoritative).
    On a dry run the number of files that would change is returned and nothing is written.
    """
    changed = 0
    stamped: list[str] = []
    for path in sorted(plan):
        target: Path = env.repo.root / path
        if not target.is_file():
            continue
        splice = _rewrite_edits(target.read_text(encoding="utf-8"), plan[path])
        if not splice:
            continue
        if env.dry_run:
            changed += 1
        elif edits.stamp_file(env.repo, path, [*splice, edits.set_meta("updated", env.at)], stage=False):
            changed += 1
            stamped.append(path)
    if stamped:
        env.repo.stage(stamped)  # once: each stage call rewrites the whole git index
    return changed


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
        evidence = Measurement(
            f"character similarity {pair.ratio:.3f} in the review band [{REVIEW_RATIO:.2f}, {AUTO_MERGE_RATIO:.2f}); "
            f'"{pair.a}" is claimed by {ca} memories, "{pair.b}" by {cb}'
        )
        tally.add(
            mint_detected_task(
                env,
                DETECTOR,
                finding,
                title=f"Confirm {pair.entity_type} alias {pair.a} / {pair.b}",
                claim=f'confirm: are "{pair.a}" and "{pair.b}" the same {pair.entity_type}?',
                evidence=evidence,
                detail=(
                    "If they are one subject, add the shorter name as a memhtml-alias of the fuller one (for a "
                    "person, in the person file) and the next sleep merges them; otherwise close this task."
                ),
            )
        )
    return tally


def run(env: PhaseEnv) -> PhaseOutcome:
    """Normalise and merge entity names with no model bound (sleep-eval §1 phase 3, §6).

    Counts: ``entities`` (distinct type:raw names read), ``namesNormalized``, ``fuzzyMerges``, ``llmMerges`` (0),
    ``aliasMerges``, ``pendingCorroboration`` (0), ``reviewCandidates``, ``tasksMinted``, ``tasksRefreshed``,
    ``tasksFramed``, ``tasksDismissed``, ``tasksClosed`` (0), ``tasksCapped``, ``filesRewritten``.

    Raises:
        StorageError: the index could not be read. InvalidMemory: a review task failed the render gate.
    """
    by_type = _by_type(active_entities(env.db))
    groups = alias_groups(env.repo) if PERSON in by_type else []
    plan: dict[str, list[tuple[str, str]]] = {}
    names_normalized = fuzzy = alias = 0
    band: list[BandPair] = []
    type_counts: dict[str, dict[str, int]] = {}
    total = 0
    for etype, rows in by_type.items():
        total += len(rows)
        resolution = resolve_type(etype, {r.entity_name: r.count for r in rows}, groups if etype == PERSON else ())
        type_counts[etype] = resolution.counts
        alias += resolution.alias_pairs
        band.extend(resolution.band)
        for row in rows:
            raw = row.entity_name
            norm, final = resolution.normalized[raw], resolution.final[raw]
            names_normalized += norm != raw
            fuzzy += final != norm
            if final == raw:
                continue
            for path in row.paths:
                plan.setdefault(path, []).append((f"{etype}:{raw}", f"{etype}:{final}"))
    rewritten = rewrite_claimants(env, plan)
    tally = _mint_review_tasks(env, band, type_counts)
    counts = {
        "entities": total,
        "namesNormalized": names_normalized,
        "fuzzyMerges": fuzzy,
        "llmMerges": 0,
        "aliasMerges": alias,
        "pendingCorroboration": 0,
        "reviewCandidates": len(band),
        **tally.counts(),
        "filesRewritten": rewritten,
    }
    return PhaseOutcome(
        counts,
        subject=f"normalize {names_normalized} entity names, merge {fuzzy} aliases",
        body=f"deferred {tally.minted + tally.refreshed} alias decisions to review tasks",
    )
