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

This module registers the phase and runs the stages; their nouns live in helper modules that register nothing:
stages 1-2 in :mod:`~.placement_candidates`; 3-4 (the answer schema, the rails, the plan, and :data:`FLOOR`,
:data:`FOLDER_CHARS`, :data:`MAX_NEW_FOLDERS`) in :mod:`~.placement_rails`; 5 in :mod:`~.placement_moves`.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from git_memhtml.llm.contract import ModelRequest
from git_memhtml.sleep.engine.batch import KeyedBatch, Member, assemble_batches
from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.sleep.engine.model import UNKNOWN_KEY, PhaseModel
from git_memhtml.sleep.engine.prompts import load_prompt, stated
from git_memhtml.sleep.phases.placement_candidates import (
    folder_list,
    inbox_singletons,
    member_text,
    pinned_paths,
    topic_folders,
    touched_paths,
)
from git_memhtml.sleep.phases.placement_moves import refile
from git_memhtml.sleep.phases.placement_rails import (
    FLOOR,
    MAX_NEW_FOLDERS,
    REFUSAL_CLASSES,
    PlacementTriage,
    Plan,
    decide,
)

PHASE = "placement-triage"


def prompt_values() -> dict[str, str]:
    """What the placement prompt states the code decides regardless of the answer (docs/models.md §10)."""
    return {"floor": stated(FLOOR), "max_new_folders": stated(MAX_NEW_FOLDERS)}


DEEP_ONLY = "deep only"
"""Detail of a run without ``--deep`` (docs/phases.md §1.14)."""

TOUCHED_UNREADABLE = "touched set unreadable: nothing moved"
"""Detail when neither read of the touched set succeeds (carried over: the phase reports a reason before its first
model call)."""

BATCH_SIZE = 20
"""Members per model call (our decision: task-detection's size, docs/phases.md §1.14)."""

MEMBER_CHARS = 1200
"""Characters of each member's ``title\\ngist\\nbody`` (each fact once) shown (carried over: the kernel's per-member
budget); a batch over ``memhtml.llmmaxprompt`` is split (docs/models.md §11)."""


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
    pinned = pinned_paths(rows, touched)
    offered = [row for row in rows if row.path not in pinned]
    existing = topic_folders(env)
    folders = {f"f{i}": path for i, path in enumerate(existing, 1)}
    batches = assemble_batches([Member(row.path, member_text(row)) for row in offered], BATCH_SIZE)
    plan = Plan(tuple(existing))
    by_path = {row.path: row for row in offered}
    if batches:
        system = load_prompt(env.repo, PHASE, prompt_values())
        instruction = load_prompt(env.repo, f"{PHASE}.task", prompt_values())
        preamble = folder_list(existing)

        def render(keyed: KeyedBatch) -> ModelRequest[PlacementTriage]:
            return ModelRequest(PlacementTriage, system, keyed.prompt(instruction, preamble=preamble))

        for batch in batches:
            for keyed, request in model.fit([[m] for m in batch], render, label="memory", member_chars=MEMBER_CHARS):
                answer = model.call(request)
                if answer is None:
                    plan.skipped += 1
                    continue
                decide(env, model, keyed, answer, plan, folders, by_path, pinned)
    done = refile(env, plan.moves)
    moved = done.moved
    made = [folder for folder in plan.new if any(posixpath.dirname(t) == folder for t in moved.values())]
    lines = [*(f"new folder {folder}" for folder in made), *done.lines]
    rails = model.rails
    counts = PlacementTriageCounts(
        candidates=len(rows), moved=len(moved), touched=len(pinned), offered=len(offered), batches=len(batches),
        kept=plan.kept, unconfident=plan.unconfident, new_folders=len(made), mapped=plan.mapped,
        rewritten=done.rewritten, refused=len(pinned) + sum(rails.get(rail, 0) for rail in REFUSAL_CLASSES),
        unknown_key=rails.get(UNKNOWN_KEY, 0), repeat_key=rails.get("repeat-key", 0),
        confidence=rails.get("confidence", 0), bad_folder=rails.get("bad-folder", 0),
        lookalike=rails.get("lookalike", 0), cap=rails.get("cap", 0), collision=rails.get("collision", 0),
        skipped=plan.skipped,
    )
    n_folders = len({posixpath.dirname(t) for t in moved.values()})
    return PhaseOutcome(
        counts,
        subject=f"re-file {len(moved)} inbox memories into {n_folders} folders ({len(made)} new)",
        body="\n".join([*lines, *done.rewrites]) if moved else None,
        detail=None if touched.read == "commits" else "touched set read from the whole range",
        model=model.usage(),
    )


register(PhaseSpec(PHASE, run, PlacementTriageCounts, model=True))
