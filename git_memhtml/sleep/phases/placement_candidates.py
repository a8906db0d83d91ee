"""placement-triage's candidates (stages 1 and 2 of :mod:`git_memhtml.sleep.phases.placement_triage`): the inbox
singletons, the touched set that pins some of them, and the topic folders offered (docs/phases.md §1.14).

A helper module: it registers no phase.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from git_memhtml.document import editors
from git_memhtml.document.model import PARA_BUCKETS
from git_memhtml.errors import MemhtmlError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.corpus import CorpusRow
from git_memhtml.sleep.engine.commit import TRAILER_PHASE
from git_memhtml.sleep.engine.contract import sweep_phases
from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.sleep.engine.refile import REFILE_BUCKETS
from git_memhtml.sleep.phases.memory_text import claim_once
from git_memhtml.sleep.phases.scoring import active_rows
from git_memhtml.tree.layout import ARCS_DIR, INBOX_DIR, PEOPLE_DIR
from git_memhtml.tree.paths import symlink_problem
from git_memhtml.tree.people import person_file_of

MAX_FOLDERS_OFFERED = 200
"""Existing topic folders listed in a prompt at most, by path (our decision, docs/phases.md §1.14)."""

TOPIC_BUCKETS: tuple[str, ...] = REFILE_BUCKETS
"""Where a topic folder lives (carried over: ``areas/<topic>`` or ``resources/<topic>``); the landing rail reads
the same buckets (``sleep.engine.refile``)."""

RESERVED_TOPICS: frozenset[str] = frozenset({
    posixpath.basename(INBOX_DIR), posixpath.basename(ARCS_DIR), posixpath.basename(PEOPLE_DIR), "tasks", "index",
    *PARA_BUCKETS,
})
"""Names no topic folder takes: the inbox, the arcs and people folders, and names a reader would take for the store's
own structure (our decision)."""

EXEMPT_TYPES: frozenset[str] = frozenset({"arc", "task"})
"""Types never re-filed (carried over, seeds §16)."""

TOPIC_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
"""A topic name: ``[a-z0-9]`` runs joined by single ``-`` (our decision, docs/phases.md §1.14)."""


@dataclass(frozen=True)
class Touched:
    """The paths deciding phases changed on the branch, and how the set was read (``commits`` or ``range``)."""

    paths: frozenset[str]
    read: str


def touched_paths(repo: GitRepo, base: str, head: str | None) -> Touched | None:
    """The touched set of ``base..head`` (the phase module's stage 2), or ``None`` when it cannot be read.

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


def _on_disk_head(env: PhaseEnv, path: str) -> str | None:
    """The file's text (its head metas are what is read), or ``None`` when it is not a plain readable file."""
    if symlink_problem(env.repo.root, path) is not None or not (env.repo.root / path).is_file():
        return None
    try:
        return (env.repo.root / path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def inbox_singletons(env: PhaseEnv) -> list[CorpusRow]:
    """Stage 1: active rows directly in the inbox whose file is still there, neither arc, task (index type and file
    type) nor person file (``tree.people.person_file_of``: a person's anchor stays where its links point), ordered by
    path."""
    out: list[CorpusRow] = []
    for row in active_rows(env.db, env.repo.root):
        if posixpath.dirname(row.path) != INBOX_DIR or row.memory_type in EXEMPT_TYPES:
            continue
        html = _on_disk_head(env, row.path)
        kind = None if html is None else editors.get_meta(html, "type")
        if html is None or kind is None or kind in EXEMPT_TYPES:
            continue
        if person_file_of(row.path, row.title, html) is not None:
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
            if TOPIC_SLUG.fullmatch(entry.name) and entry.name not in RESERVED_TOPICS:
                out.append(f"{bucket}/{entry.name}")
    return out[:MAX_FOLDERS_OFFERED]


def member_text(row: CorpusRow) -> str:
    """``title\\ngist\\nbody``, each fact once (the other phases' member text: ``memory_text.claim_once``)."""
    return claim_once(row.title, row.gist, row.body_text)


def folder_list(folders: Sequence[str]) -> str:
    """The preamble listing the existing folders under keys ``f1..fN`` (names are slugs, checked by
    :func:`topic_folders`)."""
    if not folders:
        return "Existing topic folders: none yet."
    return "Existing topic folders:\n" + "\n".join(f"f{i}: {path}" for i, path in enumerate(folders, 1))


def pinned_paths(rows: Iterable[CorpusRow], touched: Touched) -> frozenset[str]:
    """The candidates' paths the touched set holds: pinned, counted ``touched`` and never offered."""
    return frozenset(row.path for row in rows if row.path in touched.paths)
