"""Writes: ``write``, ``apply``, ``correct`` and ``archive`` — one operation, one commit (``spec/memhtml-core.md`` §5).

Every refusal happens before any byte is written. A failure after writing began restores the touched paths to
HEAD, so the tree is left byte-identical.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from git_memhtml.document.hash import content_hash
from git_memhtml.document.model import Link
from git_memhtml.document.parse import parse_memory
from git_memhtml.document.template import render_memory, split_paragraphs, split_prose
from git_memhtml.document.wellformed import check_memory_bytes
from git_memhtml.errors import DirtyTree, InvalidMemory, MemhtmlError, PathRefused, UsageError, WriteConflict
from git_memhtml.gitrepo import GitRepo
from git_memhtml.store.edits import Edit, archive_file, link, set_meta, stamp_file
from git_memhtml.store.layout import (
    archive_path_for,
    filename_stem,
    free_path,
    placement_for,
    slugify,
)
from git_memhtml.store.ops import WriteOp
from git_memhtml.store.paths import Need, read_tree_file, resolve_memory_path, symlink_problem

DedupeLookup = Callable[[str], str | None]
"""Maps a content hash to the path of the active non-task memory holding it, or ``None`` (core §5.1)."""


@dataclass(frozen=True)
class OpResult:
    """Per-op outcome of a batch (core §5.2)."""

    index: int
    ok: bool
    path: str | None = None
    deduped: bool = False
    existing_path: str | None = None
    code: str | None = None
    error: str | None = None
    skipped: bool = False


@dataclass(frozen=True)
class BatchResult:
    """Outcome of ``apply``: per-op results, the commit (``None`` when nothing was written) and a summary."""

    results: tuple[OpResult, ...]
    commit_sha: str | None
    written: tuple[str, ...] = ()
    summary: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether no op failed."""
        return not any(r.code for r in self.results)


def commit_subject(verb: str, text: str) -> str:
    """Return ``memhtml(<verb>): <text>`` with whitespace collapsed and the text capped at 72 chars (``…``)."""
    flat = re.sub(r"\s+", " ", text).strip() or "(untitled)"
    if len(flat) > 72:
        flat = flat[:71].rstrip() + "…"
    return f"memhtml({verb}): {flat}"


def _gate_staged(repo: GitRepo, paths: Sequence[str]) -> None:
    """Re-check the bytes about to be committed (the pre-commit ``validate`` rules) after a stamp or a move.

    Raises:
        InvalidMemory: listing the first file's violations (the caller restores the tree).
    """
    for path in paths:
        check = check_memory_bytes(read_tree_file(repo.root, path))
        if check.violations:
            raise InvalidMemory(f"{path}: the stamped file would not validate; nothing committed",
                                violations=check.violations, hint=f"git memhtml validate {path}", path=path)


def _placed(repo: GitRepo, path: str) -> str:
    """Refuse a placed path whose folders (or the name itself) are symlinks: a write never follows one."""
    problem = symlink_problem(repo.root, path)
    if problem is not None:
        raise PathRefused(f"{path}: {problem}", hint="replace the linked folder by a real one", path=path)
    return path


def _render(op: WriteOp, *, now: str, extra_links: Sequence[Link] = (), **extra: str | None) -> str:
    claim: str | None = None
    body: Sequence[str] = ()
    if op.claim and op.claim.strip():
        claim, body = op.claim.strip(), split_paragraphs(op.body or "")
    elif op.body and op.body.strip():
        claim, body = split_prose(op.body)
    links = [Link(l.rel, l.href) for l in op.links] + list(extra_links)
    task_status = (op.status or "todo") if op.type == "task" else None
    return render_memory(
        title=op.title,
        memory_type=op.type,
        now=now,
        claim=claim,
        body=tuple(body),
        article_html=op.article_html if op.article_html and op.article_html.strip() else None,
        confidence=op.confidence,
        importance=op.importance,
        entities=op.all_entities(),
        tags=op.all_tags(),
        aliases=op.aliases,
        links=tuple(links),
        session_id=op.session_id,
        prompt_id=op.prompt_id,
        turn_uuid=op.turn_uuid,
        valid_from=extra.get("valid_from") or op.valid_from,
        valid_until=op.valid_until,
        task_status=task_status,
        due=op.due,
    )


def _check_workspace(workspace: str | None) -> None:
    """Refuse a workspace that is not one folder name (it becomes ``projects/<slug>/``)."""
    if workspace is None:
        return
    if "/" in workspace or "\\" in workspace or workspace.strip() in ("", ".", "..") or slugify(workspace) == "untitled":
        raise UsageError(
            f"workspace {workspace!r} is not a folder name",
            hint="use a name like checkout-v2 (letters, digits, hyphens); it becomes projects/<name>/",
        )


def _require_clean_index(repo: GitRepo) -> None:
    if repo.head_sha() is not None and repo.staged_changes():
        raise DirtyTree(
            f"{repo.root}: the git index holds staged changes; a memory commit would carry them",
            hint="commit them (`git commit`) or unstage them (`git restore --staged .`)",
        )


def _trailers(op: WriteOp) -> list[tuple[str, str]]:
    out = []
    if op.session_id:
        out.append(("Memhtml-Session", op.session_id))
    if op.prompt_id:
        out.append(("Memhtml-Prompt", op.prompt_id))
    return out


def apply_batch(
    repo: GitRepo,
    ops: Sequence[WriteOp],
    *,
    now: str,
    dedupe: DedupeLookup,
    continue_on_error: bool = False,
    verb: str = "batch",
) -> BatchResult:
    """Validate every op, then write the survivors as one commit (core §5.2).

    Atomic by default: the first refusal fails the batch, every other op is reported ``skipped`` and nothing is
    written. ``continue_on_error`` commits the ops that passed. Tasks are exempt from content-hash dedup.

    Raises:
        DirtyTree: the git index already holds staged changes.
    """
    _require_clean_index(repo)
    head = repo.head_sha()
    tracked = set(repo.tree_blobs(head, prefixes=())) if head else set()
    claimed: set[str] = set()
    batch_hashes: dict[str, str] = {}
    planned: list[tuple[int, str, str]] = []  # (index, path, text)
    results: dict[int, OpResult] = {}

    def taken(candidate: str) -> bool:
        return candidate in claimed or candidate in tracked or (repo.root / candidate).exists()

    for i, op in enumerate(ops):
        try:
            explicit = resolve_memory_path(repo.root, op.path, need=Need.NEW, name="path").path if op.path else None
            text = _render(op, now=now)
            digest = content_hash(text)
            if op.type != "task":
                earlier = batch_hashes.get(digest) or dedupe(digest)
                if earlier:
                    results[i] = OpResult(i, True, path=earlier, deduped=True, existing_path=earlier)
                    continue
            if explicit is not None:
                if taken(explicit):
                    raise WriteConflict(
                        f"{explicit} already exists", hint="choose another path, or `git memhtml correct` it"
                    )
                path = explicit
            else:
                _check_workspace(op.workspace)
                directory = placement_for(
                    op.type, workspace=op.workspace, tags=op.all_tags(), entities=op.all_entities()
                )
                found = free_path(directory, filename_stem(op.title, op.type, date=now), taken)
                if found is None:
                    raise WriteConflict(f"no free file name for {op.title!r} in {directory}", hint="change the title")
                path = _placed(repo, found)
            claimed.add(path)
            if op.type != "task":
                batch_hashes[digest] = path
            planned.append((i, path, text))
            results[i] = OpResult(i, True, path=path)
        except MemhtmlError as exc:
            reason = exc.message
            if isinstance(exc, InvalidMemory) and exc.violations:
                reason = "; ".join(exc.violations)
            results[i] = OpResult(i, False, code=exc.code, error=reason)
            if not continue_on_error:
                break
    failed = [r for r in results.values() if not r.ok]
    if failed and not continue_on_error:
        final = [
            results[i] if i in results and not results[i].ok else OpResult(i, False, skipped=True)
            for i in range(len(ops))
        ]
        return BatchResult(tuple(final), None, (), _summary(final))
    written = [p for _, p, _ in planned]
    sha = None
    if planned:
        try:
            for _, path, text in planned:
                target = repo.root / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
            repo.stage(written)
            first = ops[planned[0][0]]
            label = first.title if len(planned) == 1 else f"{len(planned)} memories"
            sha = repo.commit(commit_subject(verb, label), trailers=_trailers(first))
        except BaseException:
            repo.restore_paths(written)
            raise
    final = [results.get(i, OpResult(i, False, skipped=True)) for i in range(len(ops))]
    return BatchResult(tuple(final), sha, tuple(written), _summary(final))


def summarize(results: Sequence[OpResult]) -> dict[str, int]:
    """``{"total", "written", "deduped", "failed", "skipped"}`` counts of a batch's results."""
    return _summary(results)


def _summary(results: Sequence[OpResult]) -> dict[str, int]:
    return {
        "total": len(results),
        "written": sum(1 for r in results if r.ok and not r.deduped),
        "deduped": sum(1 for r in results if r.deduped),
        "failed": sum(1 for r in results if r.code),
        "skipped": sum(1 for r in results if r.skipped),
    }


@dataclass(frozen=True)
class CorrectResult:
    """Outcome of ``correct``: the new memory, where the loser was archived, and the commit."""

    path: str
    archived_path: str
    commit_sha: str | None


def _live_file(repo: GitRepo, path: str, *, name: str = "PATH") -> str:
    return resolve_memory_path(repo.root, path, need=Need.LIVE, name=name).path


def correct_memory(repo: GitRepo, target: str, op: WriteOp, *, reason: str | None, now: str) -> CorrectResult:
    """Write ``op`` as a new memory that supersedes ``target``; archive the target; one commit (core §5.3).

    Unless the op says otherwise, the correction keeps the target's type, entities and tags and is written in the
    target's directory (our decision: a correction replaces the memory where it lived; docs/store.md).

    The new file links ``supersedes`` → the target's archive path and carries ``valid-from`` (its own, else its
    first ``<time>``, else ``now``); the target moves to ``archive/<YYYY>/`` with status, updated, archived,
    ``superseded-by`` and ``valid-until`` (unless already earlier) spliced in.

    Raises:
        PathRefused, PathNotFound, UsageError, InvalidMemory, DirtyTree: before anything is written.
    """
    target = _live_file(repo, target, name="TARGET")
    if op.path:
        resolve_memory_path(repo.root, op.path, need=Need.NEW, name="path")
    _require_clean_index(repo)
    old = parse_memory(read_tree_file(repo.root, target), path=target)
    memory_type = op.type or old.memory_type
    op = op.model_copy(
        update={
            "type": memory_type,
            "entities": op.all_entities() or old.entities,
            "tags": op.all_tags() or old.tags,
            "entity": None,
            "tag": None,
        }
    )
    archived = archive_path_for(target, now[:4])
    if (repo.root / archived).exists():
        raise WriteConflict(f"{archived} already exists", hint="archive the older copy under another year first")
    event = parse_memory(_render(op, now=now)).event_at
    valid_from = op.valid_from or event or now
    text = _render(op, now=now, extra_links=(Link("supersedes", "/" + archived),), valid_from=valid_from)
    head = repo.head_sha()
    tracked = set(repo.tree_blobs(head, prefixes=())) if head else set()
    _check_workspace(op.workspace)
    if op.workspace or op.path:
        directory = placement_for(memory_type, path=op.path, workspace=op.workspace, tags=op.all_tags(),
                                  entities=op.all_entities())
    else:
        directory = target.rsplit("/", 1)[0]  # a correction stays where the memory it corrects lived
    new_path = free_path(
        directory,
        filename_stem(op.title, memory_type, date=now),
        lambda c: c in tracked or (repo.root / c).exists(),
    )
    if new_path is None:
        raise WriteConflict(f"no free file name for {op.title!r}", hint="change the title")
    _placed(repo, new_path)
    _placed(repo, archived)
    touched = [target, archived, new_path]
    try:
        (repo.root / new_path).parent.mkdir(parents=True, exist_ok=True)
        (repo.root / new_path).write_text(text, encoding="utf-8")
        repo.stage([new_path])
        extra: list[Edit] = [set_meta("superseded-by", "/" + new_path)]
        if old.valid_until is None or old.valid_until > valid_from:
            extra.append(set_meta("valid-until", valid_from))
        moved = archive_file(repo, target, at=now, extra=extra)
        assert moved == archived
        _gate_staged(repo, [new_path, archived])
        body = f"  reason: {reason}" if reason else None
        sha = repo.commit(commit_subject("correct", op.title), body=body, trailers=_trailers(op))
    except BaseException:
        repo.restore_paths(touched)
        raise
    return CorrectResult(new_path, archived, sha)


@dataclass(frozen=True)
class ArchiveResult:
    """Outcome of ``archive``."""

    path: str
    archive_path: str
    commit_sha: str | None


def archive_memory(repo: GitRepo, path: str, *, reason: str, now: str) -> ArchiveResult:
    """Move ``path`` into ``archive/<YYYY>/`` by ``git mv`` and commit ``memhtml(archive): <path> — <reason>``."""
    path = _live_file(repo, path)
    _require_clean_index(repo)
    if not reason.strip():
        raise UsageError("--reason is empty", hint="say why the memory is archived: --reason 'superseded by …'")
    target: str | None = None
    try:
        target = archive_file(repo, path, at=now)
        if target is None:
            raise WriteConflict(f"no free archive path for {path}", hint="inspect archive/ for stale copies")
        _gate_staged(repo, [target])
        sha = repo.commit(commit_subject("archive", f"{path} — {reason}"))
    except BaseException:
        repo.restore_paths([path, *([target] if target else [])])
        raise
    return ArchiveResult(path, target, sha)


def link_memories(repo: GitRepo, src: str, rel: str, dst: str) -> str | None:
    """Add head link ``rel`` → ``/dst`` to ``src`` and commit it when the bytes changed (core §5.5).

    Both ends go through the resolver: ``src`` must be a live memory (it is edited), ``dst`` an existing memory,
    live or archived (``VERB_NEEDS``). The stamped bytes are re-validated before the commit.

    Raises:
        PathRefused, PathNotFound, UsageError, InvalidMemory, DirtyTree: before anything is committed.
    """
    src = _live_file(repo, src, name="SRC")
    dst_norm = resolve_memory_path(repo.root, dst, need=Need.EXISTING, name="DST").path
    if src == dst_norm:
        raise UsageError("a memory cannot link to itself", hint="give two different paths")
    _require_clean_index(repo)
    if not stamp_file(repo, src, [link(rel.replace("-", "_"), "/" + dst_norm)]):
        return None
    try:
        _gate_staged(repo, [src])
        return repo.commit(commit_subject("link", f"{rel} {src} -> {dst_norm}"))
    except BaseException:
        repo.restore_paths([src])
        raise
