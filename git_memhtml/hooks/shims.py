"""The POSIX sh hook shims git-memhtml installs, and how to recognise them (docs/design.md §3.9; docs/git.md §1.10).

The package copy (``git_memhtml/resources/hooks/<hook>``) is the one source of truth; the project's ``hooks/``
folder holds the same bytes (checked by a test). Every shim carries :data:`FINGERPRINT` on its second line, and
:data:`KNOWN_SHA256` keeps the digest of every shim version ever shipped, so that install can upgrade and
uninstall can recognise a shim written by an older version (the git-annex invariant, docs/git.md §1.3).
"""

from __future__ import annotations

import hashlib
from importlib import resources

HOOK_NAMES: tuple[str, ...] = ("post-commit", "post-merge", "post-checkout", "post-rewrite", "pre-commit",
                               "pre-merge-commit")
"""The hooks git-memhtml installs: four index triggers (docs/git.md §1.11: a merge fires only post-merge, a rebase
post-rewrite, a branch switch post-checkout, a commit/cherry-pick/revert post-commit) and two commit guards
(:mod:`git_memhtml.hooks.guard`: they finish a killed write before git commits its index)."""

FINGERPRINT = "# git-memhtml hook v"
"""The ownership marker every shim carries on line 2 (docs/git.md §1.10, "Idempotent install")."""

LEGACY_SUFFIX = ".legacy"
"""A foreign hook found at install time is moved to ``<hook>.legacy`` and run first (pre-commit's migration mode,
docs/git.md §1.7)."""

PAST_SHA256: frozenset[str] = frozenset()
"""SHA-256 digests of shims shipped by earlier versions (none yet: v1 is the first). Append, never remove."""


def shim_bytes(name: str) -> bytes:
    """Return the current shim of hook ``name`` (one of :data:`HOOK_NAMES`), as installed.

    Raises:
        KeyError: ``name`` is not a hook git-memhtml installs.
    """
    if name not in HOOK_NAMES:
        raise KeyError(name)
    return resources.files("git_memhtml").joinpath("resources", "hooks", name).read_bytes()


def sha256(data: bytes) -> str:
    """Hex SHA-256 of ``data`` (the receipt's digest of every owned file)."""
    return hashlib.sha256(data).hexdigest()


def known_digests() -> frozenset[str]:
    """Digests of every shim this package recognises as its own, unmodified: the current ones plus the past."""
    return PAST_SHA256 | {sha256(shim_bytes(name)) for name in HOOK_NAMES}


def has_fingerprint(data: bytes) -> bool:
    """Whether ``data`` (a hook file) carries the git-memhtml fingerprint in its first 1 KiB."""
    return FINGERPRINT.encode("ascii") in data[:1024]
