"""Phase 14, placement-triage: re-file inbox singletons into topic folders, deep runs only (docs/phases.md §1.14).

Only ``sleep run --deep`` runs it (else ``deep only``); it needs a model (else ``no model bound``). Five stages,
and only the third is the model's:

1. **Candidates** (code): the inbox *singletons*, active memories directly in ``areas/inbox/`` that no group
   absorbed (compress and dedup-merge ran before and archived what they folded, so what is still live was absorbed
   by none); never an arc, a task or a person file, by the index's type and the file's own (the tree wins). A
   candidate a deciding phase touched on this branch is *pinned* (counted ``touched``) and never offered.
2. **The touched set** (git): the union of the per-commit diffs of ``base..HEAD`` whose ``Memhtml-Phase`` trailer is
   not a uniform sweep (:func:`~git_memhtml.sleep.engine.contract.sweep_phases`: confidence-decay, integrity,
   state-export, report), both sides of a move included; a commit with no phase trailer pins too. It is read from
   the commits, never from memory of the run, so a resume reads the same set. A per-commit read that fails widens
   to the whole range's diff (sweeps included) instead of emptying; when neither can be read the phase stops with
   the detail :data:`TOUCHED_UNREADABLE` before any call.
3. **Ask**: :data:`BATCH_SIZE` members a call, keyed ``m1..mN`` by the batch kernel; the existing topic folders
   (``areas/<topic>``, ``resources/<topic>``: one plain folder level, never the inbox, the arcs, the people folder
   or a symlink) are listed under keys ``f1..fN``. The answer names a member key, and a folder key, ``new`` with a
   new folder ``areas/<name>`` or ``resources/<name>``, or ``keep-inbox``, and a confidence.
4. **Decide** (code, the rails; each refusal counted by class and logged with its payload): a member key never
   offered, or a folder key never offered (``unknown-key``); a second placement of one member (``repeat-key``); a
   confidence outside [0, 1] (``confidence``); a new folder that is not ``areas|resources`` + one slug segment
   (``[a-z0-9]`` runs joined by single ``-``, at most :data:`FOLDER_CHARS`), or a reserved name (``bad-folder``);
   a new name with the letters of an existing topic, or of one planned this run, but other digits (``lookalike``:
   ``oncall-2025`` beside ``oncall-2024`` is another topic or a typo, and code cannot tell which); a sixth new
   folder (``cap``, :data:`MAX_NEW_FOLDERS`); a target whose file name is taken, on disk or by an earlier placement
   (``collision``). A new name equal to an existing folder (separators aside; its own bucket first, then the other)
   is *mapped* onto that folder, not made again. A confidence under :data:`FLOOR` keeps the memory where it is
   (``unconfident``), as ``keep-inbox`` does.
5. **Move** (store): ``git mv`` keeping the file name and bytes, then every inbound reference to a moved file in
   the whole tree (head ``memhtml-`` links, and the ``superseded-by`` meta of archived copies) is rewritten to the
   new path, in the same commit. Article text is never edited.

On ``--dry-run --deep`` only the candidates are counted: no call, no write.
"""

from __future__ import annotations

import math
import os
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import Field

from git_memhtml.artifacts.listings import scan_tree
from git_memhtml.document import editors
from git_memhtml.document.model import PARA_BUCKETS
from git_memhtml.errors import MemhtmlError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.corpus import CorpusRow
from git_memhtml.llm.contract import AnswerSchema, ModelRequest
from git_memhtml.sleep.engine.batch import KeyedBatch, Member, assemble_batches, key_members
from git_memhtml.sleep.engine.commit import TRAILER_PHASE
from git_memhtml.sleep.engine.contract import PhaseSpec, register, sweep_phases
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.sleep.engine.model import UNKNOWN_KEY, PhaseModel
from git_memhtml.sleep.engine.prompts import load_prompt
from git_memhtml.sleep.engine.refile import REFILE_BUCKETS
from git_memhtml.sleep.phases.scoring import active_rows
from git_memhtml.store import edits
from git_memhtml.tree.layout import ARCS_DIR, INBOX_DIR, PEOPLE_DIR
from git_memhtml.tree.paths import symlink_problem
from git_memhtml.tree.people import is_person_file

PHASE = "placement-triage"

DEEP_ONLY = "deep only"
"""Detail of a run without ``--deep`` (docs/phases.md §1.14)."""

TOUCHED_UNREADABLE = "touched set unreadable: nothing moved"
"""Detail when neither read of the touched set succeeds (carried over: the phase reports a reason before its first
model call)."""

MAX_NEW_FOLDERS = 5
"""New topic folders made per run at most (carried over, seeds §16)."""

BATCH_SIZE = 20
"""Members per model call (our decision: task-detection's size, docs/phases.md §1.14)."""

MEMBER_CHARS = 1200
"""Characters of each member's ``title\\ngist\\nbody`` shown (carried over: the kernel's per-member budget)."""

MAX_FOLDERS_OFFERED = 200
"""Existing topic folders listed in a prompt at most, by path (our decision, docs/phases.md §1.14)."""

FLOOR = 0.7
"""Confidence a placement must reach to be moved (our decision, the detectors' floor: docs/phases.md §1.14)."""

FOLDER_CHARS = 60
"""Longest new topic name accepted (our decision: a topic, not a sentence)."""

TOPIC_BUCKETS: tuple[str, ...] = REFILE_BUCKETS
"""Where a topic folder lives (carried over: ``areas/<topic>`` or ``resources/<topic>``); the landing rail reads
the same buckets (``sleep.engine.refile``)."""

RESERVED_TOPICS: frozenset[str] = frozenset({
    posixpath.basename(INBOX_DIR), posixpath.basename(ARCS_DIR), posixpath.basename(PEOPLE_DIR), "tasks", "index",
    *PARA_BUCKETS,
})
"""Names no topic folder takes: the inbox, the arcs and people folders, and names a reader would take for the store's
own structure (our decision)."""

KEEP = "keep-inbox"
NEW = "new"
EXEMPT_TYPES: frozenset[str] = frozenset({"arc", "task"})
"""Types never re-filed (carried over, seeds §16)."""

_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


class Placement(AnswerSchema):
    """One placement: the member's key, the folder key (``f<n>``, ``new`` or ``keep-inbox``), the new folder
    (``areas/<name>`` or ``resources/<name>``, ``""`` unless ``new``) and a confidence in [0, 1]."""

    member_key: str
    folder_key: str
    new_folder: str = Field(description='"areas/<name>" or "resources/<name>" when folderKey is "new", else ""')
    confidence: float = Field(strict=True)


class PlacementTriage(AnswerSchema):
    """The answer of one batch: ``{"placements": [...]}``; an empty list keeps every member in the inbox."""

    placements: list[Placement]


@dataclass(frozen=True)
class PlacementTriageCounts(PhaseCounts):
    """``candidates`` (inbox singletons) and ``moved`` always; a deep night with a model also measures ``touched``
    (pinned, never offered), ``offered``, ``batches``, ``kept`` (keep-inbox or left out), ``unconfident`` (under the
    floor), ``newFolders``, ``mapped`` (a new name that was an existing folder), ``rewritten`` (inbound references
    rewritten), ``refused`` (the total of the refusal classes: ``touched`` and the rails that follow, one count per
    class: ``unknownKey, repeatKey, confidence, badFolder, lookalike, cap, collision``); ``skipped`` batches got no
    answer. Unmeasured counts are ``None`` and stay off the wire."""

    candidates: int = 0
    moved: int = 0
    touched: int | None = None
    offered: int | None = None
    batches: int | None = None
    kept: int | None = None
    unconfident: int | None = None
    new_folders: int | None = None
    mapped: int | None = None
    rewritten: int | None = None
    refused: int | None = None
    unknown_key: int | None = None
    repeat_key: int | None = None
    confidence: int | None = None
    bad_folder: int | None = None
    lookalike: int | None = None
    cap: int | None = None
    collision: int | None = None
    skipped: int | None = None


REFUSAL_CLASSES: tuple[str, ...] = (
    UNKNOWN_KEY, "repeat-key", "confidence", "bad-folder", "lookalike", "cap", "collision")
"""The rails of stage 4, in the order the counts carry them."""


# ------------------------------------------------------------------------------------------------ the touched set


@dataclass(frozen=True)
class Touched:
    """The paths deciding phases changed on the branch, and how the set was read (``commits`` or ``range``)."""

    paths: frozenset[str]
    read: str


def touched_paths(repo: GitRepo, base: str, head: str | None) -> Touched | None:
    """The touched set of ``base..head`` (module docstring, stage 2), or ``None`` when it cannot be read.

    Every commit's changes against its first parent are unioned unless its ``Memhtml-Phase`` trailer names only
    sweep phases; a commit with no trailer pins what it changed. A failed per-commit read widens to the diff of
    the whole range (every commit, sweeps included); a failure of that too returns ``None``.
    """
    if head is None or head == base:
        return Touched(frozenset(), "commits")
    sweeps = sweep_phases()
    try:
        phases = dict(repo.log_trailers(base, head, TRAILER_PHASE))
        out: set[str] = set()
        for sha in repo.commits_between(base, head):
            named = phases.get(sha, [])
            if named and all(phase in sweeps for phase in named):
                continue
            parents = repo.parents(sha)
            if not parents:
                continue
            out.update(change.path for change in repo.tree_changes(parents[0], sha))
        return Touched(frozenset(out), "commits")
    except (MemhtmlError, KeyError, ValueError):
        pass
    try:
        return Touched(frozenset(change.path for change in repo.tree_changes(base, head)), "range")
    except (MemhtmlError, KeyError, ValueError):
        return None


# ------------------------------------------------------------------------------------------------ candidates


def _on_disk_type(env: PhaseEnv, path: str) -> str | None:
    """The file's own ``memhtml-type``, or ``None`` when it is not a plain readable file."""
    if symlink_problem(env.repo.root, path) is not None or not (env.repo.root / path).is_file():
        return None
    try:
        return editors.get_meta((env.repo.root / path).read_text(encoding="utf-8", errors="replace"), "type")
    except OSError:
        return None


def inbox_singletons(env: PhaseEnv) -> list[CorpusRow]:
    """Stage 1: active rows directly in the inbox whose file is still there, neither arc, task nor person file
    (index type and file type), ordered by path."""
    out: list[CorpusRow] = []
    for row in active_rows(env.db, env.repo.root):
        if posixpath.dirname(row.path) != INBOX_DIR:
            continue
        if row.memory_type in EXEMPT_TYPES or is_person_file(row.path):
            continue
        kind = _on_disk_type(env, row.path)
        if kind is None or kind in EXEMPT_TYPES:
            continue
        out.append(row)
    return sorted(out, key=lambda r: r.path)


def topic_folders(env: PhaseEnv) -> list[str]:
    """The existing topic folders, ``areas/<topic>`` and ``resources/<topic>`` whose name is a slug and not reserved,
    plain folders only (a symlink is never offered), by path, the first :data:`MAX_FOLDERS_OFFERED`."""
    out: list[str] = []
    for bucket in TOPIC_BUCKETS:
        base = env.repo.root / bucket
        if base.is_symlink() or not base.is_dir():
            continue
        for entry in sorted(base.iterdir(), key=lambda p: p.name):
            if entry.is_symlink() or not entry.is_dir():
                continue
            if _SLUG.fullmatch(entry.name) and entry.name not in RESERVED_TOPICS:
                out.append(f"{bucket}/{entry.name}")
    return out[:MAX_FOLDERS_OFFERED]


def member_text(row: CorpusRow) -> str:
    """``title\\ngist\\nbody`` (the other phases' member text)."""
    return f"{row.title}\n{row.gist}\n{row.body_text}"


def folder_list(folders: Sequence[str]) -> str:
    """The preamble listing the existing folders under keys ``f1..fN`` (names are slugs, checked by
    :func:`topic_folders`)."""
    if not folders:
        return "Existing topic folders: none yet."
    return "Existing topic folders:\n" + "\n".join(f"f{i}: {path}" for i, path in enumerate(folders, 1))


# ------------------------------------------------------------------------------------------------ decide


def new_folder_problem(value: str) -> str | None:
    """Why ``value`` is not a new topic folder ``areas/<name>`` or ``resources/<name>``, or ``None``."""
    parts = value.split("/")
    if len(parts) != 2 or parts[0] not in TOPIC_BUCKETS:
        return "not areas/<name> or resources/<name>"
    name = parts[1]
    if len(name) > FOLDER_CHARS:
        return f"name longer than {FOLDER_CHARS} characters"
    if not _SLUG.fullmatch(name):
        return "name is not lowercase letters and digits joined by single hyphens"
    if name in RESERVED_TOPICS:
        return f"{name} is a reserved name"
    return None


def _letters(name: str) -> str:
    return re.sub(r"[^a-z]", "", name)


def _plain(name: str) -> str:
    return name.replace("-", "")


@dataclass
class _Plan:
    """The night's decisions so far."""

    existing: tuple[str, ...]
    moves: dict[str, str] = field(default_factory=dict)
    """source path → target folder."""
    new: list[str] = field(default_factory=list)
    targets: set[str] = field(default_factory=set)
    kept: int = 0
    unconfident: int = 0
    mapped: int = 0
    skipped: int = 0


def _target_folder(model: PhaseModel, plan: _Plan, folders: Mapping[str, str], row: CorpusRow,
                   item: Placement) -> tuple[str, bool] | None:
    """``(folder, is new)`` that ``item`` names after the folder rails, or ``None`` when refused (counted there).

    A new name whose letters, digits and bucket are an existing (or already planned) folder's, separators aside, is
    mapped onto it; one matching an existing folder of the other bucket too (a second ``oncall`` folder beside
    ``areas/oncall`` is the same topic)."""
    if item.folder_key != NEW:
        folder = folders.get(item.folder_key)
        if folder is None:
            model.reject(UNKNOWN_KEY, {"path": row.path, "folderKey": item.folder_key})
            return None
        return folder, False
    problem = new_folder_problem(item.new_folder)
    if problem is not None:
        model.reject("bad-folder", {"path": row.path, "newFolder": item.new_folder, "problem": problem})
        return None
    bucket, name = item.new_folder.split("/")
    known = [*plan.existing, *plan.new]
    same = sorted((f for f in known if _plain(f.split("/")[1]) == _plain(name)),
                  key=lambda f: (f.split("/")[0] != bucket, f))
    if same:
        if same[0] in plan.existing:
            plan.mapped += 1
        return same[0], False
    for folder in known:
        other = folder.split("/")[1]
        if _letters(other) == _letters(name) and re.search(r"\d", name + other):
            model.reject("lookalike", {"path": row.path, "newFolder": item.new_folder, "existing": folder})
            return None
    if len(plan.new) >= MAX_NEW_FOLDERS:
        model.reject("cap", {"path": row.path, "newFolder": item.new_folder, "cap": MAX_NEW_FOLDERS})
        return None
    return item.new_folder, True


def _decide(env: PhaseEnv, model: PhaseModel, keyed: KeyedBatch, answer: PlacementTriage, plan: _Plan,
            folders: Mapping[str, str], by_path: Mapping[str, CorpusRow], pinned: frozenset[str]) -> None:
    """Stage 4 over one answer: every placement checked against the rails; what passes joins ``plan``."""
    answered: set[str] = set()
    for item in answer.placements:
        member = keyed.member(item.member_key)
        if member is None:
            model.reject(UNKNOWN_KEY, {"memberKey": item.member_key, "folderKey": item.folder_key})
            continue
        if item.member_key in answered:
            model.reject("repeat-key", {"memberKey": item.member_key, "path": member.ref})
            continue
        answered.add(item.member_key)
        row = by_path[member.ref]
        if not (math.isfinite(item.confidence) and 0.0 <= item.confidence <= 1.0):
            model.reject("confidence", {"path": row.path, "confidence": item.confidence})
            continue
        if item.folder_key == KEEP:
            plan.kept += 1
            continue
        if item.confidence < FLOOR:
            plan.unconfident += 1
            continue
        chosen = _target_folder(model, plan, folders, row, item)
        if chosen is None:
            continue
        folder, is_new = chosen
        target = f"{folder}/{posixpath.basename(row.path)}"
        if row.path in pinned:  # never offered; kept as a second guard
            continue
        if target in plan.targets or _taken(env, target):
            model.reject("collision", {"path": row.path, "target": target})
            continue
        plan.targets.add(target)
        plan.moves[row.path] = folder
        if is_new:
            plan.new.append(folder)
    plan.kept += sum(1 for key in keyed.keys if key not in answered)


def _taken(env: PhaseEnv, target: str) -> bool:
    """``target`` (or a folder on its way) already has something of that name, or passes through a symlink."""
    if symlink_problem(env.repo.root, target) is not None:
        return True
    folder = env.repo.root / posixpath.dirname(target)
    if os.path.lexists(folder) and not folder.is_dir():
        return True
    return os.path.lexists(env.repo.root / target)


# ------------------------------------------------------------------------------------------------ move


def _target_of(href: str, moved: Mapping[str, str]) -> str | None:
    """The new href for ``href`` when it names a moved path (query and fragment kept), else ``None``."""
    cut = len(href)
    for mark in ("?", "#"):
        at = href.find(mark)
        if at != -1:
            cut = min(cut, at)
    path, suffix = href[:cut], href[cut:]
    new = moved.get(path.lstrip("/"))
    if new is None or not path.startswith("/"):
        return None
    return "/" + new + suffix


def rewrite_inbound(env: PhaseEnv, moved: Mapping[str, str]) -> tuple[int, list[str], list[str]]:
    """Rewrite every head link and ``superseded-by`` meta in the tree that names a moved path (``old → new``).

    Returns:
        ``(references rewritten, body lines, paths changed)``; nothing is staged here.
    """
    rewritten = 0
    lines: list[str] = []
    changed: list[str] = []
    for path, file in scan_tree(env.repo.root).items():
        html = file.data.decode("utf-8", errors="replace")
        todo: list[edits.Edit] = []
        for link in editors.get_links(html):
            new = _target_of(link.href, moved)
            if new is not None:
                todo += [edits.unlink(link.rel, link.href), edits.link(link.rel, new)]
                lines.append(f"rewrite {path} {link.rel} {link.href} -> {new}")
        supersede = editors.get_meta(html, "superseded-by")
        new_meta = _target_of(supersede, moved) if supersede else None
        if new_meta is not None:
            todo.append(edits.set_meta("superseded-by", new_meta))
            lines.append(f"rewrite {path} superseded-by {supersede} -> {new_meta}")
        if todo and edits.stamp_file(env.repo, path, todo, stage=False):
            rewritten += len([t for t in todo if t.kind != "unlink"])
            changed.append(path)
    return rewritten, lines, changed


# ------------------------------------------------------------------------------------------------ the phase


def _pinned(rows: Iterable[CorpusRow], touched: Touched) -> frozenset[str]:
    return frozenset(row.path for row in rows if row.path in touched.paths)


def run(env: PhaseEnv) -> PhaseOutcome:
    """placement-triage (module docstring): deep only, model only; one commit re-filing what passed the rails.

    Raises:
        StorageError: the index cannot be read. ConfigError: a prompt override is unreadable. GitError / OSError /
        PathRefused: a move or an edit failed (the runner undoes the phase).
    """
    model = PhaseModel.for_phase(env, PHASE)
    if not env.deep:
        return PhaseOutcome(PlacementTriageCounts(), detail=DEEP_ONLY)
    if env.services.model is None:
        return PhaseOutcome(PlacementTriageCounts(), detail=model.detail, model=model.usage())
    rows = inbox_singletons(env)
    if not model.bound:  # a dry run: count the candidates, ask nothing
        return PhaseOutcome(PlacementTriageCounts(candidates=len(rows)), detail=model.detail, model=model.usage())
    touched = touched_paths(env.repo, env.base_sha, env.repo.head_sha())
    if touched is None:
        return PhaseOutcome(PlacementTriageCounts(candidates=len(rows)), detail=TOUCHED_UNREADABLE,
                            model=model.usage())
    pinned = _pinned(rows, touched)
    offered = [row for row in rows if row.path not in pinned]
    existing = topic_folders(env)
    folders = {f"f{i}": path for i, path in enumerate(existing, 1)}
    batches = assemble_batches([Member(row.path, member_text(row)) for row in offered], BATCH_SIZE)
    plan = _Plan(tuple(existing))
    by_path = {row.path: row for row in offered}
    if batches:
        system = load_prompt(env.repo, PHASE)
        instruction = load_prompt(env.repo, f"{PHASE}.task")
        preamble = folder_list(existing)
        for batch in batches:
            keyed = key_members(batch, label="memory", member_chars=MEMBER_CHARS)
            answer = model.call(ModelRequest(PlacementTriage, system, keyed.prompt(instruction, preamble=preamble)))
            if answer is None:
                plan.skipped += 1
                continue
            _decide(env, model, keyed, answer, plan, folders, by_path, pinned)
    moved: dict[str, str] = {}
    staged: list[str] = []
    lines: list[str] = []
    for path, folder in plan.moves.items():
        target = f"{folder}/{posixpath.basename(path)}"
        if edits.move_file(env.repo, path, target, stage=False):
            moved[path] = target
            staged += [path, target]
            lines.append(f"move {path} -> {target}")
    rewritten, rewrites, changed = rewrite_inbound(env, moved) if moved else (0, [], [])
    if staged or changed:
        env.repo.stage([*staged, *changed])  # once: each stage call rewrites the whole git index
    made = [folder for folder in plan.new if any(posixpath.dirname(t) == folder for t in moved.values())]
    lines = [*(f"new folder {folder}" for folder in made), *lines]
    rails = model.rails
    counts = PlacementTriageCounts(
        candidates=len(rows), moved=len(moved), touched=len(pinned), offered=len(offered), batches=len(batches),
        kept=plan.kept, unconfident=plan.unconfident, new_folders=len(made), mapped=plan.mapped,
        rewritten=rewritten, refused=len(pinned) + sum(rails.get(rail, 0) for rail in REFUSAL_CLASSES),
        unknown_key=rails.get(UNKNOWN_KEY, 0), repeat_key=rails.get("repeat-key", 0),
        confidence=rails.get("confidence", 0), bad_folder=rails.get("bad-folder", 0),
        lookalike=rails.get("lookalike", 0), cap=rails.get("cap", 0), collision=rails.get("collision", 0),
        skipped=plan.skipped,
    )
    n_folders = len({posixpath.dirname(t) for t in moved.values()})
    return PhaseOutcome(
        counts,
        subject=f"re-file {len(moved)} inbox memories into {n_folders} folders ({len(made)} new)",
        body="\n".join([*lines, *rewrites]) if moved else None,
        detail=None if touched.read == "commits" else "touched set read from the whole range",
        model=model.usage(),
    )


register(PhaseSpec(PHASE, run, PlacementTriageCounts, model=True))
