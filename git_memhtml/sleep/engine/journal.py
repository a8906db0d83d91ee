"""The run journal: what a run says it did to names and files, read back from git alone (docs/ledger.md §2).

A phase that renames entities, refuses a fold or makes one appends an entry to
``.memhtml/sleep/<run stem>.journal.jsonl`` (:func:`runfiles.journal_file`) and stages it, so the line lands in
that phase's own commit. The gate that probes a run's base and tip (issue 10) reads it from the tip's tree
(:func:`read_journal`): it needs no ``state.db``, so forge CI reads the same record as a local merge. The journal is
a record, never state: nothing applies it.

One line per entry: compact JSON, sorted keys, non-ASCII kept (:func:`render_entry`). Three kinds:

=================== ============================================== ========================================
kind                fields                                         written by
=================== ============================================== ========================================
``entity-renamed``  ``entityType``, ``old``, ``new``               entity-resolution, per rewrite it made
``merge-vetoed``    ``keep``, ``drop``, ``reasons``                dedup-merge, per pair the veto refused
``folded``          ``keep``, ``drop``, ``archived``               dedup-merge and compress, per fold made
=================== ============================================== ========================================

:func:`parse_journal` is the one reader and is strict: hostile bytes are normal input and give ``None``, never an
exception.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from git_memhtml.errors import PathRefused, RunRefused
from git_memhtml.gitrepo import GitRepo
from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.sleep.engine.runfiles import journal_file
from git_memhtml.tree.layout import ARCHIVE_MIRROR, is_valid_memory_path
from git_memhtml.tree.paths import tree_file_problem, write_tree_file


@dataclass(frozen=True)
class EntityRenamed:
    """One raw entity name rewritten to another form in the memories' heads.

    ``entity_type`` is the type key the rewritten ``memhtml-entity`` line carries (``domain.entities.name_key`` of
    the prefix); ``old`` and ``new`` are the names after the ``type:`` prefix, exactly as the old and the new line
    write them (``svc_amber`` → ``svc-amber``).
    """

    entity_type: str
    old: str
    new: str
    kind: Literal["entity-renamed"] = "entity-renamed"

    def as_json(self) -> dict[str, object]:
        """The journal line's JSON object."""
        return {"kind": self.kind, "entityType": self.entity_type, "old": self.old, "new": self.new}


@dataclass(frozen=True)
class MergeVetoed:
    """A near-duplicate pair the merge veto refused to fold: tree paths (no leading slash) and the predicates that
    fired (``negation``, ``numeric``, ``variant``; docs/veto.md §3)."""

    keep: str
    drop: str
    reasons: tuple[str, ...]
    kind: Literal["merge-vetoed"] = "merge-vetoed"

    def as_json(self) -> dict[str, object]:
        """The journal line's JSON object."""
        return {"kind": self.kind, "keep": self.keep, "drop": self.drop, "reasons": list(self.reasons)}


@dataclass(frozen=True)
class Folded:
    """A fold made: ``drop`` was archived to ``archived`` with ``superseded-by`` → ``keep`` (tree paths)."""

    keep: str
    drop: str
    archived: str
    kind: Literal["folded"] = "folded"

    def as_json(self) -> dict[str, object]:
        """The journal line's JSON object."""
        return {"kind": self.kind, "keep": self.keep, "drop": self.drop, "archived": self.archived}


JournalEntry = EntityRenamed | MergeVetoed | Folded
"""One line of the run journal."""


def render_entry(entry: JournalEntry) -> str:
    """One journal line (no newline): compact JSON, sorted keys, ``ensure_ascii=False``, so equal entries render
    to equal lines."""
    return json.dumps(entry.as_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _name(value: object) -> str | None:
    """A non-blank string, else ``None``."""
    return value if isinstance(value, str) and value.strip() else None


def _path(value: object) -> str | None:
    """A memory tree path (``tree.layout.is_valid_memory_path``: under a bucket, no leading slash), else ``None``."""
    return value if isinstance(value, str) and is_valid_memory_path(value) else None


def _archived(value: object) -> str | None:
    """A memory tree path under ``archive/<YYYY>/``, else ``None``."""
    path = _path(value)
    return path if path is not None and ARCHIVE_MIRROR.match(path) else None


def _reasons(value: object) -> tuple[str, ...] | None:
    """A JSON list of non-blank strings as a tuple, else ``None``."""
    if not isinstance(value, list):
        return None
    out = tuple(item for item in value if _name(item) is not None)
    return out if len(out) == len(value) else None


_Field = Callable[[object], Any]
_SCHEMAS: Mapping[str, tuple[Callable[..., JournalEntry], Mapping[str, _Field]]] = {
    "entity-renamed": (EntityRenamed, {"entityType": _name, "old": _name, "new": _name}),
    "merge-vetoed": (MergeVetoed, {"keep": _path, "drop": _path, "reasons": _reasons}),
    "folded": (Folded, {"keep": _path, "drop": _path, "archived": _archived}),
}
"""kind → (constructor, JSON key → field check); the constructor takes the checked values positionally in key
order, which is its field order."""


class _Refused(ValueError):
    """A line is not a journal entry (raised inside the JSON decoder's hooks, caught by :func:`_entry`)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The decoder's object hook: an object naming one key twice is refused (which of its values is meant?)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Refused("duplicate key")
    return out


def _no_constant(name: str) -> Any:
    """The decoder's constant hook: ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON and are refused."""
    raise _Refused(name)


def _entry(line: str) -> JournalEntry | None:
    """The entry of one non-blank line, or ``None`` when it is not exactly one."""
    try:
        value = json.loads(line, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except (ValueError, RecursionError):  # JSONDecodeError and _Refused are ValueErrors; a deep nest recurses
        return None
    if not isinstance(value, dict):
        return None
    kind = value.get("kind")
    schema = _SCHEMAS.get(kind) if isinstance(kind, str) else None
    if schema is None:
        return None
    make, checks = schema
    if set(value) != {"kind", *checks}:
        return None
    values = [check(value[key]) for key, check in checks.items()]
    if any(v is None for v in values):
        return None
    return make(*values)


def parse_journal(data: bytes) -> list[JournalEntry] | None:
    """The entries of a journal file, in line order, or ``None`` when any part is not a journal.

    ``None`` when the bytes are not UTF-8, or a non-blank line (lines split on ``\\n`` only: a rendered line may
    hold U+2028 or U+0085 inside a string) is not one JSON object of a known kind with exactly that kind's keys,
    each of the right type: names non-blank strings, paths memory tree paths (``archived`` under
    ``archive/<YYYY>/``), ``reasons`` a list of non-blank strings. ``NaN``/``Infinity``, a key named twice, or
    nesting too deep for the decoder are refusals too. Blank lines are ignored. Never raises.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    entries: list[JournalEntry] = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        entry = _entry(line)
        if entry is None:
            return None
        entries.append(entry)
    return entries


def _checked_line(entry: JournalEntry, path: str) -> bytes:
    """``entry``'s line as UTF-8 bytes, once it reads back as ``entry``.

    Raises:
        RunRefused: it does not (the message names the journal file and the entry).
    """
    text = render_entry(entry)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        data = b""
    if not data or _entry(text) != entry:
        shown = text if len(text) <= 200 else text[:200] + "…"
        raise RunRefused(
            f"{path}: the {entry.kind} entry {shown} would not read back as a journal entry",
            hint="the phase's input holds a name or path no journal line can carry; fix that memory and run again",
            path=path,
        )
    return data


def record_journal(env: PhaseEnv, entries: Sequence[JournalEntry]) -> int:
    """Append each entry's line once to the run's journal in the run's work tree and stage it; return lines added.

    Lines already in the file (or earlier in ``entries``) are not added again, so a resumed or repeated phase adds
    nothing; existing bytes are kept as they are. The runner commits what the phase staged, so the lines land in
    the phase's own commit (docs/ledger.md §2). Nothing is written on a dry run or when no line is new.

    Every line must read back as its entry (:func:`parse_journal`'s rules), checked before anything is written: a
    journal the landing rail would refuse is never recorded, and the phase fails instead (its writes undone).

    Raises:
        RunRefused: an entry would not read back (a blank name, a path that is not a memory path, text that is not
            encodable as UTF-8); nothing is written.
        PathRefused: the journal path is, or goes through, a symlink, or is not a regular file.
        OSError / GitError: the file cannot be written or staged.
    """
    if env.dry_run or not entries:
        return 0
    path = journal_file(env.run_id)
    lines = [_checked_line(entry, path) for entry in entries]
    problem = tree_file_problem(env.repo.root, path)
    if problem is not None:
        raise PathRefused(f"{path}: {problem}", hint="remove it from the run's branch and resume the run", path=path)
    target = env.repo.root / path
    existing = target.read_bytes() if target.is_file() else b""
    seen = set(existing.split(b"\n"))
    added: list[bytes] = []
    for line in lines:
        if line not in seen:
            seen.add(line)
            added.append(line)
    if not added:
        return 0
    head = existing if not existing or existing.endswith(b"\n") else existing + b"\n"
    target.parent.mkdir(parents=True, exist_ok=True)
    write_tree_file(env.repo.root, path, head + b"".join(line + b"\n" for line in added))
    env.repo.stage([path])
    return len(added)


def read_journal(repo: GitRepo, commit: str, run_id: str) -> list[JournalEntry]:
    """The journal of ``run_id`` as committed at ``commit``; empty when the file is absent or not a journal.

    Raises:
        GitError: ``commit`` is not a commit of ``repo``.
    """
    data = repo.read_path_at(commit, journal_file(run_id))
    if data is None:
        return []
    return parse_journal(data) or []


__all__ = [
    "EntityRenamed",
    "Folded",
    "JournalEntry",
    "MergeVetoed",
    "parse_journal",
    "read_journal",
    "record_journal",
    "render_entry",
]
