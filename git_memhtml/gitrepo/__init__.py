"""The one choke point for git (docs/design.md §3.4): only this package imports pygit2.

pygit2 does reads, trees, index edits, commits, branches and worktrees; the ``git`` binary is used only where
pygit2 cannot give git's own semantics: trailer parsing (``git log %(trailers)``) and the user-visible
fast-forward of a checked-out branch (``git merge --ff-only``).
"""

from __future__ import annotations

from git_memhtml.gitrepo.plumbing import enclosing_bare_repository, library_versions
from git_memhtml.gitrepo.repo import GitRepo
from git_memhtml.gitrepo.values import Change, DirtyEntry, InMemoryMerge, Resolver

__all__ = ["Change", "DirtyEntry", "GitRepo", "InMemoryMerge", "Resolver", "enclosing_bare_repository",
           "library_versions"]
