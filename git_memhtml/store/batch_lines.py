"""``apply --continue-on-error`` over a stream that may hold bad lines (docs/store.md §5.2 ``continueOnError``).

The valid ops go through :func:`~git_memhtml.store.writer.apply_batch` with ``continue_on_error`` (one commit of
the survivors); every bad line (not JSON, not an object, refused by the op model) is one failed result in its place,
so ``results[i]`` is always the i-th non-blank line of the stream.
"""

from __future__ import annotations

from collections.abc import Sequence

from git_memhtml.errors import UsageError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.progress import NO_PROGRESS, Progress
from git_memhtml.store.ops import BadLine, WriteOp
from git_memhtml.store.writer import BatchResult, DedupeLookup, DedupeView, OpResult, apply_batch, summarize

BAD_LINE_CODE = UsageError.code
"""The result code of a line the op model refused (``ERR_INVALID_FLAG``: it is bad input)."""


def apply_lines(repo: GitRepo, parsed: Sequence[WriteOp | BadLine], *, now: str, dedupe: DedupeLookup | None = None,
                dedupe_view: DedupeView | None = None, progress: Progress = NO_PROGRESS) -> BatchResult:
    """Commit every op that passes; return results in stream order (0-based ``index`` over non-blank lines).
    ``dedupe``, ``dedupe_view`` and ``progress`` are :func:`apply_batch`'s.

    Raises:
        DirtyTree: as :func:`apply_batch` (the git index already holds staged changes).
    """
    ops = [item for item in parsed if isinstance(item, WriteOp)]
    batch = (apply_batch(repo, ops, now=now, dedupe=dedupe, continue_on_error=True, dedupe_view=dedupe_view,
                         progress=progress) if ops else None)
    ordered: list[OpResult] = []
    done = iter(batch.results if batch is not None else ())
    for index, item in enumerate(parsed):
        if isinstance(item, BadLine):
            ordered.append(OpResult(index, False, code=BAD_LINE_CODE, error=item.reason))
        else:
            r = next(done)
            ordered.append(OpResult(index, r.ok, path=r.path, deduped=r.deduped, existing_path=r.existing_path,
                                    code=r.code, error=r.error, skipped=r.skipped))
    commit = batch.commit_sha if batch is not None else None
    written = batch.written if batch is not None else ()
    return BatchResult(tuple(ordered), commit, written, summarize(ordered),
                       batch.documents if batch is not None else {})
