"""``sleep review``: what a run changed, classified by article hash on both sides (docs/sleep.md §2.6, docs/sleep.md
§2.6).

Classification of each changed file (docs/sleep.md §2.6 "Review"): added → ``created``; deleted
→ ``deleted``; renamed into ``archive/<YYYY>/`` → ``archived`` (``fromPath`` kept); renamed elsewhere →
``body-changed``; modified in its ``memhtml-`` metas and links only (every other byte identical, the article's
among them) → ``entity-changed`` when its
``memhtml-entity`` values differ (an entity rewrite changes what the memory is about, so it is never hidden
among stamp-only changes; issue 8 item 4), else ``meta-only``; modified otherwise → ``body-changed``. Each entry also
says whether it is a ``memory`` or a generated/run ``artifact`` (``index.html``, ``sitemap.xml``, ``.memhtml/…``), so a
reviewer can skip artifacts.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal, get_args

from git_memhtml.document.editors import get_metas, without_format_tags
from git_memhtml.document.hash import content_hash
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.engine.commit import TRAILER_COUNTS, TRAILER_PHASE
from git_memhtml.sleep.engine.runref import resolve_sleep_run
from git_memhtml.sleep.engine.runs import phase_rows
from git_memhtml.tree.layout import ARCHIVE_MIRROR, has_memory_suffix, is_indexable

ChangeClass = Literal["body-changed", "entity-changed", "created", "archived", "deleted", "meta-only"]
"""How a run changed one file (module docstring)."""

CLASSES: tuple[ChangeClass, ...] = get_args(ChangeClass)
"""Every file class, in the order a reviewer reads them (file list and summary): text changes, then entity
rewrites, …, stamp-only changes last."""

FileKind = Literal["memory", "artifact"]
"""A changed file is a memory (an indexable path) or a generated/run artifact."""


@dataclass(frozen=True)
class FileChange:
    """One changed file of a run."""

    path: str
    classification: ChangeClass
    kind: FileKind
    from_path: str | None = None
    entities_removed: tuple[str, ...] = ()
    entities_added: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        """JSON shape; ``entities`` is ``{"removed": [...], "added": [...]}`` for ``entity-changed``, else null."""
        entities = (
            {"removed": list(self.entities_removed), "added": list(self.entities_added)}
            if self.classification == "entity-changed"
            else None
        )
        return {"path": self.path, "classification": self.classification, "kind": self.kind,
                "fromPath": self.from_path, "entities": entities}


def _article_hash(data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        return content_hash(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None


def _entities(data: bytes | None) -> list[str] | None:
    if data is None:
        return None
    try:
        return sorted(get_metas(data.decode("utf-8"), "entity"))
    except (UnicodeDecodeError, ValueError):
        return None


def _unedited(data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        return without_format_tags(data.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def modified_class(path: str, before: bytes | None, after: bytes | None) -> ChangeClass:
    """Class of a file modified in place: ``meta-only``, ``entity-changed`` or ``body-changed`` (see module doc).

    Only a change of format metas and links may be ``meta-only`` or ``entity-changed``: every other byte
    (:func:`document.editors.without_format_tags`: the article, the body, the rest of the head) must be identical,
    not just the article's canonical text, since markup added without text (an ``<iframe>``, an ``<a href>``, a
    ``<base>`` in the head) leaves the content hash unchanged (issue 8 item 1). Non-HTML files and unreadable HTML are
    ``body-changed`` (nothing proves their text unchanged).
    """
    if not has_memory_suffix(path):
        return "body-changed"
    old_hash = _article_hash(before)
    if old_hash is None or old_hash != _article_hash(after):
        return "body-changed"
    old_rest = _unedited(before)
    if old_rest is None or old_rest != _unedited(after):
        return "body-changed"
    return "meta-only" if _entities(before) == _entities(after) else "entity-changed"


def classify(repo: GitRepo, base: str, tip: str) -> list[FileChange]:
    """Classify every file changed between ``base`` and ``tip`` (rename detection on; no similarity score used)."""
    out: list[FileChange] = []
    for change in repo.diff(base, tip):
        kind: FileKind = (
            "memory" if is_indexable(change.path) or (change.old_path and is_indexable(change.old_path)) else "artifact"
        )
        if change.status == "A":
            out.append(FileChange(change.path, "created", kind))
        elif change.status == "D":
            out.append(FileChange(change.path, "deleted", kind))
        elif change.status == "R":
            into_archive = ARCHIVE_MIRROR.match(change.path) and not ARCHIVE_MIRROR.match(change.old_path or "")
            label: ChangeClass = "archived" if into_archive else "body-changed"
            out.append(FileChange(change.path, label, kind, change.old_path))
        else:
            before = repo.read_path_at(base, change.path)
            after = repo.read_path_at(tip, change.path)
            label = modified_class(change.path, before, after)
            old_values, new_values = set(_entities(before) or ()), set(_entities(after) or ())
            out.append(FileChange(change.path, label, kind, None, tuple(sorted(old_values - new_values)),
                                  tuple(sorted(new_values - old_values))))
    order = {c: i for i, c in enumerate(CLASSES)}
    return sorted(out, key=lambda f: (f.kind != "memory", order[f.classification], f.path))


def review_run(repo: GitRepo, db: IndexDB, run_id: str | None, *, verb: str = "review",
               allow_failed: bool = False) -> dict[str, Any]:
    """Return the review of a run: phases, commits with trailers, classified files, summary and diffstat.

    ``run_id=None`` reviews the latest run. ``verb`` is the verb the review serves (``review``, or ``pr`` for a
    pull-request body), whose run policy applies (:func:`sleep.runref.resolve_sleep_run`).

    Raises:
        RunNotFound / RunVerbRefused: the name is not a finished run the verb accepts.
    """
    run = resolve_sleep_run(repo, db, run_id, verb, allow_failed=allow_failed)
    name, row, base, tip = run.run_id, run.row, run.base_sha, run.tip_sha
    counts = dict(repo.log_trailers(base, tip, TRAILER_COUNTS))
    commits = []
    for sha, phases in repo.log_trailers(base, tip, TRAILER_PHASE):
        raw = counts.get(sha, [])
        try:
            parsed = json.loads(raw[0]) if raw else {}
        except (json.JSONDecodeError, RecursionError):
            parsed = {}
        if not isinstance(parsed, dict):  # a trailer is typed text: `[1]` or `5` counts nothing
            parsed = {}
        commits.append(
            {"sha": sha, "subject": repo.commit_message(sha).split("\n", 1)[0],
             "phase": phases[0] if phases else None, "counts": parsed}
        )
    files = classify(repo, base, tip)
    summary = Counter(f.classification for f in files if f.kind == "memory")
    return {
        "runId": name,
        "status": row.status if row else run.state,
        "baseSha": base,
        "headSha": tip,
        "phases": [p.as_json() for p in phase_rows(db, name)],
        "commits": commits,
        "files": [f.as_json() for f in files],
        "summary": {c: summary.get(c, 0) for c in CLASSES},
        "artifacts": sum(1 for f in files if f.kind == "artifact"),
        "diffStat": repo.run_git(["diff", "--stat", f"{base}..{tip}"]).strip() if base != tip else "",
    }


def diff_text(repo: GitRepo, base: str, tip: str) -> str:
    """Return the raw ``git diff base..tip`` for ``--diff``."""
    return repo.run_git(["diff", f"{base}..{tip}"])
