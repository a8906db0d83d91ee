"""The progress seam: how long work tells the terminal how far it is (issue 12 item 5, docs/design.md §3.8).

Core functions that walk many files (``indexer.rebuild``/``update``, ``writer.apply_batch``,
``validate_files``) take a ``progress: Progress`` argument and call it; they never draw anything. The CLI passes
``output.py``'s bar when stderr is a terminal and ``--quiet`` is off, and :data:`NO_PROGRESS` otherwise, so piped
and ``--json`` output is byte-for-byte what it was. A sleep run reports per phase through ``run_sleep(after_phase=)``.

Shape of one report: :meth:`Progress.stage` opens a stage with a label (``"indexing"``) and a total in items
(files, ops, chunks; ``0`` when unknown), :meth:`Progress.advance` adds done items, and the next ``stage`` or
:meth:`Progress.close` ends it. Calls are cheap: a caller may advance once per file.
"""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    """Receives how far a long operation is. Implementations never raise and never write to stdout."""

    def stage(self, label: str, total: int) -> None:
        """Start a stage of ``total`` items (``0``: unknown) named ``label``; ends the previous stage."""

    def advance(self, done: int = 1) -> None:
        """Count ``done`` more items of the current stage as finished."""

    def close(self) -> None:
        """End the current stage (idempotent)."""


class _NoProgress:
    """The silent :class:`Progress`: every call does nothing."""

    def stage(self, label: str, total: int) -> None:
        """Ignore the stage."""

    def advance(self, done: int = 1) -> None:
        """Ignore the count."""

    def close(self) -> None:
        """Nothing to end."""


NO_PROGRESS: Progress = _NoProgress()
"""The default of every ``progress=`` argument: reports go nowhere."""
