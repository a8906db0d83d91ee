"""What a verb needs of the door that calls it, and the argument checks both doors share (docs/mcp.md).

A :class:`Door` is satisfied by the CLI's ``cli.app.App`` (one per command) and by the MCP server's long-lived
session (one per process): the verbs never read the environment or the clock, as everything below the CLI edge.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol, TypeVar

from git_memhtml.errors import MemhtmlError, PathRefused, UsageError
from git_memhtml.pathnames import shown_name
from git_memhtml.tree.paths import PATH_HINT, VERB_NEEDS, resolve_memory_path

if TYPE_CHECKING:
    from pathlib import Path

    from pydantic import ValidationError

    from git_memhtml.config import ResolvedSettings
    from git_memhtml.document.model import MemoryDocument
    from git_memhtml.embed.base import Embedder
    from git_memhtml.gitrepo import GitRepo
    from git_memhtml.index.db import IndexDB
    from git_memhtml.index.retrieval import ArmWeights

E = TypeVar("E", bound=MemhtmlError)


class Door(Protocol):
    """The collaborators of one caller: the repository, the settings, the embedder, the arm weights and the
    index catch-up after a commit (a failure there is a warning, never the verb's failure)."""

    def repo(self) -> GitRepo:
        """The repository the verbs act on."""
        ...

    def settings(self) -> ResolvedSettings:
        """The effective settings (``config.py:resolve_settings``)."""
        ...

    def embedder(self) -> Embedder | None:
        """The configured embedder; ``None`` for ``embed=off``."""
        ...

    def weights(self) -> ArmWeights:
        """The RRF arm weights of the configured embedder (or the user's)."""
        ...

    def catch_up_after_commit(self, db: IndexDB, documents: Mapping[str, MemoryDocument] | None = None) -> None:
        """Bring ``db`` up to the commit that just landed (``documents``: the writer's parsed files by blob id)."""
        ...


def naming(error: E, argument: str) -> E:
    """``error`` with ``details["argument"]`` set to ``argument`` (the flag or tool parameter it is about), so the
    CLI's ``--json`` error and the MCP tool error name it; returns the same object."""
    error.details.setdefault("argument", argument)
    return error


TOOL_PATH_HINT = "give a repository path such as areas/inbox/x.html (memory_list shows the paths)"
"""The hint of a refused path argument of a tool (relative only: there is no current folder, docs/mcp.md "Paths")."""


def memory_path(root: Path, value: str, verb: str, *, argument: str, base: Path | None = None,
                relative_only: bool = False) -> str:
    """Resolve the path argument ``value`` of ``verb`` (a key of ``tree/paths.py:VERB_NEEDS``) with the one
    resolver; return the repository path. ``base`` is the folder a relative path is read from (the CLI's current
    folder; ``None``: the work-tree root, as for the MCP tools). With ``relative_only`` (the MCP tools) an absolute
    path is refused too: a tool names memories by repository path only (docs/mcp.md "Paths").

    Raises:
        PathRefused, PathNotFound: as ``tree/paths.py:resolve_memory_path``, naming ``argument`` (also in
            ``details["argument"]``).
    """
    try:
        if relative_only and value.startswith("/"):
            raise PathRefused(f"{argument} {shown_name(value)!r}: an absolute path; give the repository path",
                              hint=TOOL_PATH_HINT, path=shown_name(value))
        return resolve_memory_path(root, value, need=VERB_NEEDS[verb], base=base, name=argument).path
    except MemhtmlError as exc:
        if relative_only and exc.hint == PATH_HINT:  # the CLI's hint offers a current folder and absolute paths
            exc.hint = TOOL_PATH_HINT
        raise naming(exc, argument) from None


def validation_error(exc: ValidationError, *, what: str, hint: str,
                     rename: Mapping[str, str] | None = None) -> UsageError:
    """A pydantic refusal as one :class:`UsageError`: ``<what>: <field>: <reason>; …`` naming every refused field
    (``rename`` maps a model field to the name the caller typed, e.g. ``type`` → ``memory_type``); the first field
    goes in ``details["argument"]``."""
    names = rename or {}
    fields: list[str] = []
    reasons: list[str] = []
    for err in exc.errors():
        loc = [names.get(str(p), str(p)) if i == 0 else str(p) for i, p in enumerate(err["loc"])]
        field = ".".join(loc) or "arguments"
        fields.append(field)
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        reasons.append(f"{field}: {message}")
    return naming(UsageError(f"{what}: {'; '.join(reasons)}", hint=hint), fields[0] if fields else "arguments")
