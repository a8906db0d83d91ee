"""Memory verbs: write, apply (a batch), correct, archive, link, read, list (docs/store.md, docs/mcp.md).

Each writing verb is one commit (the store functions take the write lock), then the door catches its index up;
the access row follows a moved file (``index/access.py:rename_access``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from git_memhtml.document.secret_gate import SECRET_HINT
from git_memhtml.errors import InvalidMemory, MemhtmlError, PathNotFound, SecretInMemory, UsageError, WriteConflict
from git_memhtml.progress import NO_PROGRESS, Progress

if TYPE_CHECKING:
    from git_memhtml.index.db import IndexDB
    from git_memhtml.service.door import Door
    from git_memhtml.store.ops import BadLine, WriteOp
    from git_memhtml.store.writer import ArchiveResult, BatchResult, CorrectResult, OpResult

OP_ERROR_CLASSES: tuple[type[MemhtmlError], ...] = (UsageError, WriteConflict, PathNotFound, SecretInMemory,
                                                   InvalidMemory)
"""The error class (so exit code and error code) of a refused op, matched by its result ``code``; anything else
is an :class:`InvalidMemory`."""


def raise_first_error(results: Sequence[OpResult], hints: Mapping[str, str]) -> None:
    """Raise the first failed op's error as its own class (a bad path stays a usage error); ``hints`` maps an
    error code to the door's hint (the CLI names flags, the MCP server tool arguments). Returns when no op failed.

    Raises:
        MemhtmlError: the subclass of :data:`OP_ERROR_CLASSES` whose code the op reported.
    """
    for r in results:
        if r.code:
            cls = next((c for c in OP_ERROR_CLASSES if c.code == r.code), InvalidMemory)
            hint = hints.get(r.code, hints.get(InvalidMemory.code))
            error = cls(f"write: {r.error}" if not issubclass(cls, InvalidMemory) else f"invalid memory: {r.error}",
                        hint=hint)
            error.code = r.code
            raise error


@dataclass(frozen=True)
class Written:
    """One memory written (or found already stored): ``json()`` is ``write --json``'s data."""

    path: str | None
    deduped: bool
    existing_path: str | None
    commit_sha: str | None

    def json(self) -> dict[str, Any]:
        """``{path, created, deduped, existingPath, commitSha}``."""
        return {"path": self.path, "created": not self.deduped, "deduped": self.deduped,
                "existingPath": self.existing_path, "commitSha": self.commit_sha}


def write_one(door: Door, db: IndexDB, op: WriteOp, *, now: str, hints: Mapping[str, str]) -> Written:
    """Write ``op`` as one commit, deduplicated by content hash against ``db`` (docs/store.md §5.1), and catch the
    index up.

    Raises:
        MemhtmlError: the op was refused (:func:`raise_first_error`); nothing was written.
    """
    from git_memhtml.index.memories import hash_holders
    from git_memhtml.store.writer import apply_batch

    result = apply_batch(door.repo(), [op], now=now, verb="write", dedupe_view=partial(hash_holders, db))
    raise_first_error(result.results, hints)
    if result.commit_sha:
        door.catch_up_after_commit(db, result.documents)
    first = result.results[0]
    return Written(first.path, first.deduped, first.existing_path, result.commit_sha)


@dataclass(frozen=True)
class Applied:
    """A batch applied: ``json()`` is ``apply --json``'s data; ``failed`` the refused ops."""

    result: BatchResult

    @property
    def failed(self) -> list[OpResult]:
        """The ops that did not go in (bad lines and refusals), in order."""
        return [r for r in self.result.results if r.code]

    def json(self) -> dict[str, Any]:
        """``{results: [{index, ok, path, deduped, existing_path, code, error, skipped}], summary, commitSha}``."""
        return {"results": [asdict(r) for r in self.result.results], "summary": self.result.summary,
                "commitSha": self.result.commit_sha}


def apply_ops(door: Door, db: IndexDB, parsed: Sequence[WriteOp | BadLine], *, now: str, label: str,
              continue_on_error: bool, retry_hint: str, progress: Progress = NO_PROGRESS) -> Applied:
    """Write the parsed ops of one batch as one commit (docs/apply.md): atomic unless ``continue_on_error``, which
    commits the ops that pass. ``label`` names the batch in messages (a file, ``ops``); ``retry_hint`` is how the
    door says "commit the others" (``--continue-on-error``, ``continue_on_error: true``).

    Raises:
        UsageError: the batch holds no operation.
        MemhtmlError: with the first refused op's code and the :class:`Applied` data in ``details``, when the batch
            was refused (atomic), or every op failed; nothing was written then.
    """
    from git_memhtml.index.memories import hash_holders
    from git_memhtml.store.batch_lines import apply_lines
    from git_memhtml.store.ops import WriteOp
    from git_memhtml.store.writer import apply_batch

    if not parsed:
        raise UsageError(f"{label}: the batch holds no operations", hint="give at least one op")
    if continue_on_error:
        result = apply_lines(door.repo(), parsed, now=now, dedupe_view=partial(hash_holders, db), progress=progress)
    else:
        ops = [op for op in parsed if isinstance(op, WriteOp)]
        result = apply_batch(door.repo(), ops, now=now, dedupe_view=partial(hash_holders, db), progress=progress)
    if result.commit_sha:
        door.catch_up_after_commit(db, result.documents)
    applied = Applied(result)
    failed = applied.failed
    if failed and (not continue_on_error or not any(r.ok for r in result.results)):
        first = failed[0]
        error = MemhtmlError(
            f"apply {label}: batch refused, nothing written: op #{first.index + 1}: {first.error}"
            + (f" (+{len(failed) - 1} more failed)" if len(failed) > 1 else ""),
            hint=(SECRET_HINT if first.code == SecretInMemory.code else "fix the listed ops")
            + ("" if continue_on_error else f", or pass {retry_hint} to commit the others"),
        )
        error.code = first.code or error.code
        error.details = applied.json()
        raise error
    return applied


def correct(door: Door, db: IndexDB, target: str, op: WriteOp, *, reason: str | None, now: str) -> CorrectResult:
    """Write ``op`` superseding the live memory ``target`` (a resolved repository path), which is archived, in one
    commit (docs/store.md §5.3); its access row moves with it. ``asdict`` of the result is ``correct --json``'s data
    (``path``, ``archived_path``, ``commit_sha``).

    Raises:
        PathNotFound, InvalidMemory, WriteConflict: as ``store/writer.py:correct_memory``.
    """
    from git_memhtml.index.access import rename_access
    from git_memhtml.store.writer import correct_memory

    result = correct_memory(door.repo(), target, op, reason=reason, now=now)
    rename_access(db, target, result.archived_path)
    door.catch_up_after_commit(db)
    return result


def target_type(door: Door, target: str) -> str:
    """The memory type of the memory at repository path ``target`` (``correct``'s default type).

    Raises:
        InvalidMemory: the file does not parse; PathNotFound, PathRefused: see ``tree/paths.py:read_memory_file``.
    """
    from git_memhtml.document.parse import parse_memory
    from git_memhtml.tree.paths import read_memory_file

    return parse_memory(read_memory_file(door.repo().root, target, name="TARGET"), path=target).memory_type


def archive(door: Door, db: IndexDB, path: str, *, reason: str, now: str) -> ArchiveResult:
    """Move the live memory ``path`` into ``archive/<YYYY>/`` in one commit (docs/store.md §5.4); ``asdict`` of the
    result is ``archive --json``'s data (``path``, ``archive_path``, ``commit_sha``).

    Raises:
        UsageError: ``reason`` is blank; PathNotFound, WriteConflict: as ``store/writer.py:archive_memory``.
    """
    from git_memhtml.index.access import rename_access
    from git_memhtml.store.writer import archive_memory

    result = archive_memory(door.repo(), path, reason=reason, now=now)
    rename_access(db, result.path, result.archive_path)
    door.catch_up_after_commit(db)
    return result


@dataclass(frozen=True)
class Linked:
    """A link added (``commit_sha`` ``None``: it was already there): ``json()`` is ``link --json``'s data."""

    rel: str
    src: str
    dst: str
    commit_sha: str | None

    def json(self) -> dict[str, Any]:
        """``{ok, rel, srcPath, dstPath, commitSha}``."""
        return {"ok": True, "rel": self.rel, "srcPath": self.src, "dstPath": self.dst, "commitSha": self.commit_sha}


def link(door: Door, db: IndexDB, src: str, rel: str, dst: str) -> Linked:
    """Add the head link ``src --rel--> dst`` (resolved repository paths), one commit when the file changes
    (docs/store.md §5.5).

    Raises:
        InvalidMemory: a self-link, or a rel that does not fit the two memories' types.
    """
    from git_memhtml.store.writer import link_memories

    sha = link_memories(door.repo(), src, rel, dst)
    if sha:
        door.catch_up_after_commit(db)
    return Linked(rel, src, dst, sha)


def read(door: Door, db: IndexDB, path: str, *, now: str) -> dict[str, Any]:
    """The memory at repository path ``path`` as ``read --json``'s data (``path, title, gist, body, memoryType,
    status, meta, links, archived, warnings``); an explicit read, so it bumps the access row.

    Raises:
        InvalidMemory: the file does not parse; PathNotFound, PathRefused: see ``tree/paths.py:read_memory_file``.
    """
    from git_memhtml.document.parse import parse_memory
    from git_memhtml.index.access import record_read
    from git_memhtml.tree.paths import read_memory_file

    doc = parse_memory(read_memory_file(door.repo().root, path), path=path)
    record_read(db, path, now=now)
    return {"path": path, "title": doc.title, "gist": doc.gist, "body": doc.body_text, "memoryType": doc.memory_type,
            "status": doc.status, "meta": dict(doc.metas), "links": [asdict(link) for link in doc.links],
            "archived": path.startswith("archive/"), "warnings": list(doc.warnings)}


def list_page(db: IndexDB, *, memory_type: str | None = None, workspace: str | None = None, tag: str | None = None,
              entity: str | None = None, para: str | None = None, include_archived: bool = False, limit: int = 50,
              cursor: str | None = None) -> dict[str, Any]:
    """One page of memories in path order as ``list --json``'s data ``{files, nextCursor}`` (tasks included).

    Raises:
        UsageError: ``entity`` is not ``type:name``.
    """
    from git_memhtml.store.reads import list_memories

    check_entity(entity, "entity")
    rows, next_cursor = list_memories(db, memory_type=memory_type, workspace=workspace, tag=tag, entity=entity,
                                      para=para, include_archived=include_archived, limit=limit, cursor=cursor)
    return {"files": rows, "nextCursor": next_cursor}


def check_entity(value: str | None, argument: str) -> str | None:
    """``value`` unchanged when it is ``type:name`` (or absent), the one rule of
    ``document/model.py:entity_problem`` shared by search, recall and list.

    Raises:
        UsageError: naming ``argument`` (also in ``details["argument"]``).
    """
    from git_memhtml.document.model import entity_problem
    from git_memhtml.service.door import naming

    problem = None if value is None else entity_problem(value)
    if problem is not None:
        raise naming(UsageError(f"{argument} {value!r} {problem}", hint=f"e.g. {argument} person:Priya"), argument)
    return value
