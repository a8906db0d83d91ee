"""Writes: ``write``, ``apply``, ``correct`` and ``archive`` — one operation, one commit (docs/store.md §5).

Each operation holds the repository-wide write lock from its first read of ``HEAD`` to its commit, computes every
file's new bytes in memory, and hands them to :meth:`GitRepo.commit_files`, which commits them on the ``HEAD`` it
read (compare-and-swap) before writing them into the work tree. So a refusal or a crash before the commit leaves
the work tree and index untouched, and an acknowledged write is in ``HEAD`` (docs/store.md "The write lock").
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

from git_memhtml.document.hash import content_hash
from git_memhtml.document.model import Link, MemoryDocument
from git_memhtml.document.parse import parse_memory
from git_memhtml.document.secret_gate import refuse_secrets
from git_memhtml.document.template import RenderedMemory, render_checked, render_memory
from git_memhtml.document.wellformed import check_memory_bytes
from git_memhtml.errors import GitError, InvalidMemory, MemhtmlError, PathRefused, UsageError, WriteConflict
from git_memhtml.gitrepo import GitRepo
from git_memhtml.gitrepo.message import fold_line
from git_memhtml.index.memories import HashHolders
from git_memhtml.index.source import git_blob_sha
from git_memhtml.progress import NO_PROGRESS, Progress
from git_memhtml.store.edits import Edit, apply_edits, free_archive_path, link, set_meta
from git_memhtml.store.ops import WriteOp, distinct
from git_memhtml.tree.layout import (
    archive_path_for,
    filename_stem,
    free_path,
    is_archived_path,
    is_valid_memory_path,
    placement_for,
    slugify,
)
from git_memhtml.tree.paths import Need, read_tree_file, resolve_memory_path, symlink_problem

DedupeLookup = Callable[[str], "str | Sequence[str] | None"]
"""Maps a content hash to the paths of active non-task memories the index says hold it (docs/store.md §5.1). Only a path
tracked in ``HEAD`` whose committed bytes have that hash counts: the index also covers uncommitted work-tree files,
such as what a killed writer left, and those are never "already stored"."""

DedupeView = Callable[[Sequence[str]], HashHolders]
"""Content hashes → what one snapshot of the index says about them (:func:`index.memories.hash_holders`): the
holders, and which committed files the index cannot vouch for (changed since its watermark, or in its work-tree
overlay). With it the writer's "already stored" is exact against ``HEAD`` (docs/store.md §5.1)."""


@dataclass(frozen=True)
class OpResult:
    """Per-op outcome of a batch (docs/store.md §5.2)."""

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
    documents: Mapping[str, MemoryDocument] = field(default_factory=dict)
    """``{git blob id: what parse_memory gives for those bytes}`` of every file the commit wrote (the render
    gate's documents, :meth:`RenderedMemory.as_parsed`): the post-commit index pass parses none of them again."""

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


def _gate_bytes(changes: dict[str, bytes | None]) -> None:
    """Re-check the bytes about to be committed (the pre-commit ``validate`` rules) after a stamp or a move.

    Raises:
        InvalidMemory: listing the first file's violations; nothing has been written yet.
    """
    for path, data in changes.items():
        if data is None:
            continue
        check = check_memory_bytes(data)
        if check.violations:
            raise InvalidMemory(f"{path}: the stamped file would not validate; nothing committed",
                                violations=check.violations, hint=f"git memhtml validate {path}", path=path)


def _placed(repo: GitRepo, path: str) -> str:
    """Refuse a placed path whose folders (or the name itself) are symlinks: a write never follows one."""
    problem = symlink_problem(repo.root, path)
    if problem is not None:
        raise PathRefused(f"{path}: {problem}", hint="replace the linked folder by a real one", path=path)
    return path


def _check_workspace(workspace: str | None) -> None:
    """Refuse a workspace that is not one folder name (it becomes ``projects/<slug>/``), or that carries a
    detected secret (scanned before slugging, which lower-cases a token out of the detector's reach)."""
    if workspace is None:
        return
    refuse_secrets(workspace, where="workspace")
    if (
        "/" in workspace or "\\" in workspace or workspace.strip() in ("", ".", "..")
        or slugify(workspace) == "untitled"
    ):
        raise UsageError(
            f"workspace {workspace!r} is not a folder name",
            hint="use a name like checkout-v2 (letters, digits, hyphens); it becomes projects/<name>/",
        )


def _refuse_secret_path(path: str) -> str:
    """Refuse a memory path (folders and file name) that carries a detected secret: a path is in every commit,
    the index and ``git log --name-only`` for good (docs/secrets.md "The gate"). The refusal names ``path`` and
    the kind, never the path itself.

    Raises:
        SecretInMemory: exit 2; nothing has been written.
    """
    refuse_secrets(path, where="path")
    return path


def _trailers(op: WriteOp) -> list[tuple[str, str]]:
    out = []
    if op.draft.session_id:
        out.append(("Memhtml-Session", op.draft.session_id))
    if op.draft.prompt_id:
        out.append(("Memhtml-Prompt", op.draft.prompt_id))
    return out


def apply_batch(
    repo: GitRepo,
    ops: Sequence[WriteOp],
    *,
    now: str,
    dedupe: DedupeLookup | None = None,
    continue_on_error: bool = False,
    verb: str = "batch",
    dedupe_view: DedupeView | None = None,
    progress: Progress = NO_PROGRESS,
) -> BatchResult:
    """Validate every op, then write the survivors as one commit (docs/store.md §5.2).

    Atomic by default: the first refusal fails the batch, every other op is reported ``skipped`` and nothing is
    written. ``continue_on_error`` commits the ops that passed. Tasks are exempt from content-hash dedup.

    Staged changes of others in the git index are neither committed nor lost (the commit is HEAD plus these
    files). Under the write lock from the read of HEAD to the commit. A memory is "already stored" only when
    ``HEAD`` holds its content hash at an active non-task path (the committed blob is hashed to confirm). With
    ``dedupe_view`` (the CLI's: the index, asked once under the lock for the whole batch) that answer is exact: the
    index's holders, plus HEAD's bytes of every path the index cannot vouch for (changed since its watermark, in
    its work-tree overlay; all of HEAD when it has no usable watermark), so racing writers of one fact commit it
    once and a committed fact the work tree deletes or edits is still found. ``dedupe`` alone (callers without an
    index) trusts its answer for everything else; neither given: nothing is deduplicated but the batch itself.
    per op. Each op's file is parsed once (the render gate), which also gives its content hash; a committed blob is
    read only to confirm a hash hit. ``progress`` gets the stages ``rendering`` and ``placing``, one item per op.

    Raises:
        WriteLocked: another writer held the lock too long. HeadMoved: HEAD moved under us (nothing committed).
    """
    with repo.write_lock(verb):
        return _apply_locked(repo, ops, now=now, dedupe=dedupe, continue_on_error=continue_on_error, verb=verb,
                             dedupe_view=dedupe_view, progress=progress)


def committed_holder(repo: GitRepo, tracked: dict[str, str], candidates: str | Sequence[str] | None,
                     digest: str) -> str | None:
    """Return the first of ``candidates`` that ``HEAD`` tracks with content hash ``digest``, or ``None``.

    ``tracked`` is ``{path: blob sha}`` of HEAD. The committed blob is read and hashed, so a stale index row or an
    uncommitted file can never make a write report "deduplicated".
    """
    if candidates is None:
        return None
    for candidate in [candidates] if isinstance(candidates, str) else candidates:
        blob = tracked.get(candidate)
        if blob is not None and content_hash(repo.read_blob(blob).decode("utf-8", "replace")) == digest:
            return candidate
    return None


def committed_hashes(repo: GitRepo, tracked: Mapping[str, str], paths: Iterable[str]) -> dict[str, str]:
    """``{content hash: smallest path}`` of the active non-task memories among ``paths``, hashed from their
    committed blobs (``tracked``: ``{path: blob sha}`` of HEAD), not the work tree. Paths HEAD lacks, archived and
    unparseable files are skipped."""
    out: dict[str, str] = {}
    for path in sorted(set(paths)):
        blob = tracked.get(path)
        if blob is None or is_archived_path(path) or not is_valid_memory_path(path):
            continue
        try:
            doc = parse_memory(repo.read_blob(blob), path=path)
        except MemhtmlError:
            continue
        if doc.memory_type != "task" and doc.status != "archived":
            out.setdefault(doc.content_hash, path)
    return out


def unvouched_paths(repo: GitRepo, view: HashHolders, head: str | None, tracked: Mapping[str, str]) -> set[str]:
    """The paths of ``HEAD`` whose committed bytes the index ``view`` does not describe: changed between its
    watermark and ``head``, or in its work-tree overlay; every tracked path when the watermark is unknown or its
    commit cannot be read (then the index vouches for nothing)."""
    if head is None:
        return set()
    overlay = {p for p in view.overlay if p in tracked}
    if view.watermark == head:
        return overlay
    if view.watermark is None:
        return set(tracked)
    try:
        changes = repo.tree_delta(view.watermark, head)
    except GitError:
        return set(tracked)
    return overlay | {c.path for c in changes if c.status != "D" and c.path in tracked}


def _apply_locked(
    repo: GitRepo, ops: Sequence[WriteOp], *, now: str, dedupe: DedupeLookup | None, continue_on_error: bool,
    verb: str, dedupe_view: DedupeView | None, progress: Progress,
) -> BatchResult:
    head = repo.head_sha()
    tracked = repo.tree_blobs(head, prefixes=()) if head else {}
    claimed: set[str] = set()
    batch_hashes: dict[str, str] = {}
    planned: list[tuple[int, str, str]] = []  # (index, path, text)
    results: dict[int, OpResult] = {}
    listings: dict[str, frozenset[str]] = {}

    def listed(candidate: str) -> bool:
        """Whether the work tree has an entry at ``candidate``: one directory listing per folder, not a stat per op."""
        folder, _, name = candidate.rpartition("/")
        if folder not in listings:
            try:
                listings[folder] = frozenset(os.listdir(repo.root / folder))
            except (FileNotFoundError, NotADirectoryError):
                listings[folder] = frozenset()
        return name in listings[folder]

    def taken(candidate: str, text: str) -> bool:
        """A path is free when nothing claims it, or when it holds an uncommitted leftover of exactly ``text``
        (what a killed writer left: the retry commits it in place)."""
        if candidate in claimed or candidate in tracked:
            return True
        if not listed(candidate):
            return False
        target = repo.root / candidate
        if not target.exists():
            return False
        return not (target.is_file() and not target.is_symlink() and target.read_bytes() == text.encode("utf-8"))

    progress.stage("rendering", len(ops))
    rendered: dict[int, RenderedMemory | MemhtmlError] = {}
    for i, op in enumerate(ops):
        try:
            rendered[i] = render_checked(op.draft, now=now)
        except MemhtmlError as exc:
            rendered[i] = exc
            if not continue_on_error:
                break
        finally:
            progress.advance()
    digests = sorted({r.document.content_hash for i, r in rendered.items()
                      if isinstance(r, RenderedMemory) and ops[i].draft.memory_type != "task"})
    holders: Mapping[str, str | Sequence[str] | None]
    recent: dict[str, str] = {}
    if dedupe_view is not None and digests:
        view = dedupe_view(digests)  # under the lock: no writer of ours can commit until we are done
        holders = view.holders
        recent = committed_hashes(repo, tracked, unvouched_paths(repo, view, head, tracked))
    else:
        holders = {d: dedupe(d) for d in digests} if dedupe is not None else {}
    progress.stage("placing", len(rendered))
    for i, op in enumerate(ops):
        if i not in rendered:
            break
        draft = op.draft
        progress.advance()
        try:
            explicit = (_refuse_secret_path(resolve_memory_path(repo.root, op.path, need=Need.NEW, name="path").path)
                        if op.path else None)
            outcome = rendered[i]
            if isinstance(outcome, MemhtmlError):
                raise outcome
            text, digest = outcome.text, outcome.document.content_hash
            if draft.memory_type != "task":
                earlier = batch_hashes.get(digest) or recent.get(digest) or committed_holder(
                    repo, tracked, holders.get(digest), digest)
                if earlier:
                    results[i] = OpResult(i, True, path=earlier, deduped=True, existing_path=earlier)
                    continue
            if explicit is not None:
                if taken(explicit, text):
                    raise WriteConflict(
                        f"{explicit} already exists", hint="choose another path, or `git memhtml correct` it"
                    )
                path = explicit
            else:
                _check_workspace(op.workspace)
                directory = placement_for(draft.memory_type, workspace=op.workspace, tags=draft.tags)
                found = free_path(directory, filename_stem(draft.title, draft.memory_type, date=now),
                                  partial(taken, text=text))
                if found is None:
                    raise WriteConflict(f"no free file name for {draft.title!r} in {directory}",
                                        hint="change the title")
                path = _placed(repo, found)
            _refuse_secret_path(path)
            claimed.add(path)
            if draft.memory_type != "task":
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
    progress.close()
    failed = [r for r in results.values() if not r.ok]
    if failed and not continue_on_error:
        final = [
            results[i] if i in results and not results[i].ok else OpResult(i, False, skipped=True)
            for i in range(len(ops))
        ]
        return BatchResult(tuple(final), None, (), _summary(final))
    written = [p for _, p, _ in planned]
    sha = None
    documents: dict[str, MemoryDocument] = {}
    if planned:
        first = ops[planned[0][0]]
        label = first.draft.title if len(planned) == 1 else f"{len(planned)} memories"
        files = {p: t.encode("utf-8") for _, p, t in planned}
        sha = repo.commit_files(files, commit_subject(verb, label), trailers=_trailers(first), parent=head,
                                purpose=verb)
        if sha is not None:
            for i, path, _ in planned:
                outcome = rendered[i]
                assert isinstance(outcome, RenderedMemory)
                documents[git_blob_sha(files[path])] = outcome.as_parsed()
    final = [results.get(i, OpResult(i, False, skipped=True)) for i in range(len(ops))]
    return BatchResult(tuple(final), sha, tuple(written), _summary(final), documents)


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


def _archived_bytes(html: bytes, *, at: str, extra: Sequence[Edit] = ()) -> bytes:
    """The archived copy's bytes: status, updated and archived stamped (and ``extra``), as ``archive_file`` does."""
    edits = [set_meta("status", "archived"), set_meta("updated", at), set_meta("archived", at), *extra]
    return apply_edits(html.decode("utf-8"), edits).encode("utf-8")


def correct_memory(repo: GitRepo, target: str, op: WriteOp, *, reason: str | None, now: str) -> CorrectResult:
    """Write ``op`` as a new memory that supersedes ``target``; archive the target; one commit (docs/store.md §5.3).

    Unless the op says otherwise, the correction keeps the target's type, entities and tags and is written in the
    target's directory (our decision: a correction replaces the memory where it lived; docs/store.md).

    The new file links ``supersedes`` → the target's archive path and carries ``valid-from`` (its own, else its
    first ``<time>``, else ``now``); the target moves to ``archive/<YYYY>/`` with status, updated, archived,
    ``superseded-by`` and ``valid-until`` (unless already earlier) spliced in. ``reason`` is folded onto one body
    line.

    Raises:
        PathRefused, PathNotFound, UsageError, InvalidMemory, WriteConflict: before anything is written.
    """
    with repo.write_lock("correct"):
        return _correct_locked(repo, target, op, reason=reason, now=now)


def _correct_locked(repo: GitRepo, target: str, op: WriteOp, *, reason: str | None, now: str) -> CorrectResult:
    target = _live_file(repo, target, name="TARGET")
    if reason:
        refuse_secrets(reason, where="--reason")
    if op.path:
        resolve_memory_path(repo.root, op.path, need=Need.NEW, name="path")
    original = read_tree_file(repo.root, target)
    old = parse_memory(original, path=target)
    memory_type = op.draft.memory_type or old.memory_type
    draft = replace(op.draft, memory_type=memory_type, entities=op.draft.entities or distinct(old.entities),
                    tags=op.draft.tags or distinct(old.tags))
    head = repo.head_sha()
    tracked = set(repo.tree_blobs(head, prefixes=())) if head else set()
    archived = archive_path_for(target, now[:4])
    if (repo.root / archived).exists() or archived in tracked:
        raise WriteConflict(f"{archived} already exists", hint="archive the older copy under another year first")
    event = render_checked(draft, now=now).document.event_at
    valid_from = draft.valid_from or event or now
    text = render_memory(replace(draft, links=(*draft.links, Link("supersedes", "/" + archived)),
                                 valid_from=valid_from), now=now)
    _check_workspace(op.workspace)
    if op.workspace or op.path:
        directory = placement_for(memory_type, path=op.path, workspace=op.workspace, tags=draft.tags)
    else:
        directory = target.rsplit("/", 1)[0]  # a correction stays where the memory it corrects lived
    new_path = free_path(
        directory,
        filename_stem(draft.title, memory_type, date=now),
        lambda c: c in tracked or c == archived or (repo.root / c).exists(),
    )
    if new_path is None:
        raise WriteConflict(f"no free file name for {draft.title!r}", hint="change the title")
    _refuse_secret_path(_placed(repo, new_path))
    _placed(repo, archived)
    extra: list[Edit] = [set_meta("superseded-by", "/" + new_path)]
    if old.valid_until is None or old.valid_until > valid_from:
        extra.append(set_meta("valid-until", valid_from))
    changes: dict[str, bytes | None] = {
        new_path: text.encode("utf-8"),
        target: None,
        archived: _archived_bytes(original, at=now, extra=extra),
    }
    _gate_bytes(changes)
    body = f"reason: {fold_line(reason)}" if reason and reason.strip() else None
    sha = repo.commit_files(changes, commit_subject("correct", draft.title), body=body, trailers=_trailers(op),
                            parent=head, purpose="correct")
    return CorrectResult(new_path, archived, sha)


@dataclass(frozen=True)
class ArchiveResult:
    """Outcome of ``archive``."""

    path: str
    archive_path: str
    commit_sha: str | None


def archive_memory(repo: GitRepo, path: str, *, reason: str, now: str) -> ArchiveResult:
    """Move ``path`` into ``archive/<YYYY>/`` (a rename in one commit) and commit
    ``memhtml(archive): <path> — <reason>`` (the reason folded into the one-line subject)."""
    with repo.write_lock("archive"):
        head = repo.head_sha()
        path = _live_file(repo, path)
        if not reason.strip():
            raise UsageError("--reason is empty", hint="say why the memory is archived: --reason 'superseded by …'")
        refuse_secrets(reason, where="--reason")  # the reason becomes the commit subject
        target = free_archive_path(repo, path, now[:4])
        if target is None:
            raise WriteConflict(f"no free archive path for {path}", hint="inspect archive/ for stale copies")
        _placed(repo, target)
        changes: dict[str, bytes | None] = {
            path: None, target: _archived_bytes(read_tree_file(repo.root, path), at=now)
        }
        _gate_bytes(changes)
        sha = repo.commit_files(changes, commit_subject("archive", f"{path} — {reason}"), parent=head,
                                purpose="archive")
    return ArchiveResult(path, target, sha)


def link_memories(repo: GitRepo, src: str, rel: str, dst: str) -> str | None:
    """Add head link ``rel`` → ``/dst`` to ``src`` and commit it when the bytes changed (docs/store.md §5.5)."""
    with repo.write_lock("link"):
        head = repo.head_sha()
        src = _live_file(repo, src, name="SRC")
        dst_norm = resolve_memory_path(repo.root, dst, need=Need.EXISTING, name="DST").path
        if src == dst_norm:
            raise UsageError("a memory cannot link to itself", hint="give two different paths")
        before = read_tree_file(repo.root, src)
        after = apply_edits(before.decode("utf-8"), [link(rel.replace("-", "_"), "/" + dst_norm)]).encode("utf-8")
        if after == before:
            return None
        _gate_bytes({src: after})
        return repo.commit_files({src: after}, commit_subject("link", f"{rel} {src} -> {dst_norm}"), parent=head,
                                 purpose="link")
