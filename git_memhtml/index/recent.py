"""The newest active memories: the window task-detection reads (docs/phases.md §1.13).

A separate read from :func:`git_memhtml.index.corpus.active_corpus` because its order and bound differ: newest
first by ``updated_at``, ties broken by path, at most ``limit`` rows. Tasks never appear (docs/phases.md §0.1): a
detected task is not evidence of another task, so the detector never reads its own output.
"""

from __future__ import annotations

from git_memhtml.index.active import active_memory
from git_memhtml.index.corpus import CORPUS_COLUMNS, CorpusRow, corpus_rows
from git_memhtml.index.db import IndexDB


def recent_active_memories(db: IndexDB, *, limit: int) -> list[CorpusRow]:
    """The ``limit`` most recently updated active non-task memories: ``ORDER BY updated_at DESC, path``.

    Args:
        limit: rows at most (task-detection reads 200); ``limit < 1`` reads nothing.

    Raises:
        StorageError: SQLite failed.
    """
    if limit < 1:
        return []
    return corpus_rows(db.query(
        f"SELECT {CORPUS_COLUMNS} FROM files WHERE {active_memory()} ORDER BY updated_at DESC, path LIMIT ?", [limit]))
