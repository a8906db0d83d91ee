"""The predicates over ``files`` that say which rows are live memories (docs/index.md §3.2; docs/phases.md §0
"Exclusions").

A file is *live* when it is not archived (its path is not under ``archive/``: ``files.archived`` is derived from the
path bucket, docs/layout.md §2.4). A live file is an *active memory* when it is not a task: tasks are work items, never
part of the corpus that dedup, recall ranking, sleep reads or the content-uniqueness rule see (docs/phases.md §0.1).
These are the only two variants of the predicate in the package; every query composes them from here, and the partial
unique index ``files_active_content`` of migration 0001 is written with the same text so SQLite can use it.

Each function returns a SQL boolean fragment with no parameters; ``alias`` qualifies the columns (``"f"`` gives
``f.archived = 0``), the empty string leaves them bare.
"""

from __future__ import annotations


def _column(alias: str, name: str) -> str:
    return f"{alias}.{name}" if alias else name


def not_archived(alias: str = "") -> str:
    """``archived = 0``: the file lives outside ``archive/`` (tasks included)."""
    return f"{_column(alias, 'archived')} = 0"


def not_task(alias: str = "") -> str:
    """``memory_type <> 'task'``: the row is a memory, not a task (``memory_type`` is NOT NULL, so no NULL case)."""
    return f"{_column(alias, 'memory_type')} <> 'task'"


def live_file(alias: str = "") -> str:
    """A live file, tasks included: :func:`not_archived` alone."""
    return not_archived(alias)


def active_memory(alias: str = "") -> str:
    """An active memory: a live file that is not a task (``archived = 0 AND memory_type <> 'task'``)."""
    return f"{not_archived(alias)} AND {not_task(alias)}"


ACTIVE_MEMORY = active_memory()
""":func:`active_memory` over bare column names."""
LIVE_FILE = live_file()
""":func:`live_file` over bare column names."""
