"""Who a commit is by: git's own identity rules, refused like git when nothing names one (issue 8 item 11).

Resolution per role (``AUTHOR`` or ``COMMITTER``), as git does it: ``GIT_<ROLE>_NAME`` / ``GIT_<ROLE>_EMAIL``,
else ``user.name`` / ``user.email`` from git config (repository, then global), else the ``EMAIL`` variable for
the address. **Decision:** no further guessing. Git would try the passwd name and ``user@hostname``; we refuse
instead, because a guessed identity is written for good into the memory's history. The refusal carries git's
own advice (``git config --global user.email …``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from git_memhtml.errors import GitError

ROLES = ("AUTHOR", "COMMITTER")
"""Git's two identity roles, in the order git resolves them (author first)."""

IDENTITY_HINT = 'git config --global user.email "you@example.com" && git config --global user.name "Your Name"'
"""Git's advice for an unknown identity (git prints both commands; ``--global`` sets the account default)."""


class IdentityUnknown(GitError):
    """Neither the environment nor git config names who the commit is by (exit 1; git's hint)."""


@dataclass(frozen=True)
class Identity:
    """A resolved name and email, and where they came from (``env``, ``git-config`` or ``EMAIL``)."""

    name: str
    email: str
    source: str


def resolve_identity(role: str, env: Mapping[str, str], config_get: Callable[[str], str | None]) -> Identity:
    """Resolve the ``role`` (``AUTHOR``/``COMMITTER``) identity from ``env`` and ``config_get`` (git's rules).

    Raises:
        IdentityUnknown: the name or the email is unset or blank; the message says which, as git's
            "Author identity unknown" does, and the hint is :data:`IDENTITY_HINT`.
    """
    name = (env.get(f"GIT_{role}_NAME") or "").strip()
    email = (env.get(f"GIT_{role}_EMAIL") or "").strip()
    source = "env" if name and email else "git-config"
    name = name or (config_get("user.name") or "").strip()
    email = email or (config_get("user.email") or "").strip() or (env.get("EMAIL") or "").strip()
    if not name or not email:
        missing = " and ".join(k for k, v in (("user.name", name), ("user.email", email)) if not v)
        raise IdentityUnknown(
            f"{role.capitalize()} identity unknown: {missing} not set (nor GIT_{role}_NAME / GIT_{role}_EMAIL); "
            "please tell git who you are",
            hint=IDENTITY_HINT,
        )
    return Identity(name, email, source)


def require_identity(env: Mapping[str, str], config_get: Callable[[str], str | None]) -> tuple[Identity, Identity]:
    """Both roles' identities (author, committer), or :class:`IdentityUnknown` for the first that is unknown."""
    author, committer = (resolve_identity(role, env, config_get) for role in ROLES)
    return author, committer
