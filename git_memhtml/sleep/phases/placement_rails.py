"""placement-triage's answer and its rails (stages 3 and 4 of :mod:`git_memhtml.sleep.phases.placement_triage`): the
answer schema, the checks every placement passes, and the plan of moves what passes joins (docs/phases.md §1.14).

A helper module: it registers no phase.
"""

from __future__ import annotations

import math
import os
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import Field

from git_memhtml.index.corpus import CorpusRow
from git_memhtml.llm.contract import AnswerSchema
from git_memhtml.sleep.engine.batch import KeyedBatch
from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.sleep.engine.model import UNKNOWN_KEY, PhaseModel
from git_memhtml.sleep.phases.placement_candidates import RESERVED_TOPICS, TOPIC_BUCKETS, TOPIC_SLUG
from git_memhtml.tree.paths import symlink_problem

MAX_NEW_FOLDERS = 5
"""New topic folders made per run at most (carried over, seeds §16)."""

FLOOR = 0.7
"""Confidence a placement must reach to be moved (our decision, the detectors' floor: docs/phases.md §1.14)."""

FOLDER_CHARS = 60
"""Longest new topic name accepted (our decision: a topic, not a sentence)."""

KEEP = "keep-inbox"
NEW = "new"


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


REFUSAL_CLASSES: tuple[str, ...] = (
    UNKNOWN_KEY, "repeat-key", "confidence", "bad-folder", "lookalike", "cap", "collision")
"""The rails of stage 4, in the order the counts carry them."""


def new_folder_problem(value: str) -> str | None:
    """Why ``value`` is not a new topic folder ``areas/<name>`` or ``resources/<name>``, or ``None``."""
    parts = value.split("/")
    if len(parts) != 2 or parts[0] not in TOPIC_BUCKETS:
        return "not areas/<name> or resources/<name>"
    name = parts[1]
    if len(name) > FOLDER_CHARS:
        return f"name longer than {FOLDER_CHARS} characters"
    if not TOPIC_SLUG.fullmatch(name):
        return "name is not lowercase letters and digits joined by single hyphens"
    if name in RESERVED_TOPICS:
        return f"{name} is a reserved name"
    return None


def _letters(name: str) -> str:
    return re.sub(r"[^a-z]", "", name)


def _plain(name: str) -> str:
    return name.replace("-", "")


@dataclass
class Plan:
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


def _target_folder(model: PhaseModel, plan: Plan, folders: Mapping[str, str], row: CorpusRow,
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


def decide(env: PhaseEnv, model: PhaseModel, keyed: KeyedBatch, answer: PlacementTriage, plan: Plan,
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
