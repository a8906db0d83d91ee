"""The trunk a sleep run is cut from and merged into (docs/design.md §1: ``main``; configurable)."""

from __future__ import annotations

from git_memhtml.errors import RunRefused
from git_memhtml.gitrepo import GitRepo

TRUNK = "main"
"""The default trunk (docs/design.md §1, §3.3)."""


def trunk_name(main: GitRepo) -> str:
    """Return the trunk a run is cut from: ``git config memhtml.trunk``, else ``main``, else ``master``.

    Raises:
        RunRefused: none of them exists (hint: create ``main`` or set ``memhtml.trunk``).
    """
    configured = main.config_get("memhtml.trunk")
    for name in ([configured] if configured else []) + [TRUNK, "master"]:
        if main.branch_sha(name) is not None:
            return name
    current = main.current_branch()
    raise RunRefused(
        f"{main.root}: no trunk branch to cut a sleep run from (looked for {configured or TRUNK!r} and 'master')",
        hint=f"git config memhtml.trunk {current}" if current else "git branch main <commit>",
    )


def trunk_sha(main: GitRepo) -> str:
    """Return the tip of the trunk branch (see :func:`trunk_name`)."""
    sha = main.branch_sha(trunk_name(main))
    assert sha is not None
    return sha
