"""The server's long-lived state: one door, one open index, the resident vectors (docs/mcp.md "Long-lived").

Before each call :meth:`Session.prepare` looks at HEAD: when it moved (a commit by a hook, the CLI, ``git pull``,
another server) the index is caught up incrementally, as a CLI command would; the resident vectors are reloaded
whenever the index changed since they were loaded (``index/resident.py:ResidentVectors.current``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, ExitStack
from typing import TYPE_CHECKING, Protocol

from git_memhtml.errors import MemhtmlError
from git_memhtml.index.resident import ResidentVectors
from git_memhtml.output import warn
from git_memhtml.service.door import Door

if TYPE_CHECKING:
    from git_memhtml.document.model import MemoryDocument
    from git_memhtml.index.db import IndexDB
    from git_memhtml.index.indexer import IndexReport


class ServerDoor(Door, Protocol):
    """A :class:`~git_memhtml.service.door.Door` that can also catch an index up and check a write before it
    (``cli.app.App`` is one)."""

    def reindex(self, db: IndexDB, *, documents: Mapping[str, MemoryDocument] | None = None) -> IndexReport:
        """Bring ``db`` up to HEAD and the work tree (incremental)."""
        ...

    def before_write(self, *, on_head: bool = True) -> None:
        """Refuse a write the commit identity cannot make (``IdentityUnknown``); warn of a detached HEAD."""
        ...


class Session:
    """One server process's state over its index; ``now`` is the clock (``cli/app.py:utc_now``).

    The index is opened by ``open_index`` (``cli/app.py:App.index``: open, recover, catch up) at the first call
    that needs it, not at start-up: an index that cannot be opened or caught up (an embedder that does not match
    its vectors, a database another process holds locked) is then that call's tool error with its hint, where a
    refusal at start-up would reach the agent only as a closed connection. A failed open is tried again on the
    next call. :meth:`close` closes it.
    """

    def __init__(self, door: ServerDoor, open_index: Callable[[], AbstractContextManager[IndexDB]],
                 now: Callable[[], str]) -> None:
        self.door = door
        self.now = now
        self._open_index = open_index
        self._stack = ExitStack()
        self._db: IndexDB | None = None
        self._head: str | None = None
        self._resident: ResidentVectors | None = None

    @property
    def db(self) -> IndexDB:
        """The open index, opened (and caught up) on first use.

        Raises:
            MemhtmlError: it cannot be opened or caught up (the next use tries again).
        """
        if self._db is None:
            head = self.door.repo().head_sha()
            self._db = self._stack.enter_context(self._open_index())
            self._head = head
        return self._db

    def close(self) -> None:
        """Close the index if it was opened."""
        self._stack.close()
        self._db = None

    def prepare(self) -> None:
        """Open the index on the first call; catch it up when HEAD moved since the last call.

        Raises:
            MemhtmlError: the open or the catch-up failed (the call is refused; the next one tries again).
        """
        if self._db is None:
            self.db  # noqa: B018 - opening is the point: it catches the index up to HEAD
            return
        head = self.door.repo().head_sha()
        if head != self._head:
            self.door.reindex(self._db)
            self._head = head

    def committed(self) -> None:
        """Record that a call of ours moved HEAD and caught the index up itself (no second pass next call)."""
        self._head = self.door.repo().head_sha()

    def resident(self) -> ResidentVectors | None:
        """The index's vectors of the embedder's space, held in memory (``None`` without an embedder, with a
        read-only index, or when they cannot be loaded: the search then ranks from the index file)."""
        embedder = self.door.embedder()
        if embedder is None or self.db.read_only is not None:
            return None
        if self._resident is None or not self._resident.current(self.db) or self._resident.space != embedder.space:
            try:
                self._resident = ResidentVectors.load(self.db, embedder.space)
            except MemhtmlError as exc:
                warn(f"the vectors could not be held in memory ({exc.message}); searching the index file")
                self._resident = None
        return self._resident
