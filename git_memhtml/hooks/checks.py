"""Health checks of the git integration, for ``git memhtml doctor`` (docs/design.md §3.10; docs/git.md §2.3 #3).

A merge driver does not travel with a clone: ``.gitattributes`` names ``merge=memhtml`` but only the local config
defines it. Without the definition git silently falls back to its text merge and every merge that touches a
generated listing on both sides conflicts; with half a definition (a name but no command) git aborts the merge
("custom merge driver memhtml lacks command line", exit 128). These checks say which case a repository is in.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from git_memhtml.errors import GitError
from git_memhtml.hooks.gitconfig import DRIVER_NAME
from git_memhtml.hooks.shims import HOOK_NAMES, has_fingerprint
from git_memhtml.tree.layout import ACCESS_SIDECAR, INDEX_NAME, SITEMAP_PATH

PROBE_PATHS: tuple[str, ...] = (f"areas/{INDEX_NAME}", SITEMAP_PATH, ACCESS_SIDECAR)
"""One path of each generated-artifact kind, asked of ``git check-attr``."""


@dataclass(frozen=True)
class Check:
    """One finding: ``ok`` or not, one line saying what is true, and the exact fix when not ok."""

    name: str
    ok: bool
    message: str
    hint: str | None = None


class _Repo(Protocol):
    """The subset of :class:`git_memhtml.gitrepo.GitRepo` used here."""

    def run_git(self, args: Sequence[str]) -> str: ...

    @property
    def env(self) -> Mapping[str, str]: ...


class _RepoWithDirs(_Repo, Protocol):
    root: Path
    common_dir: Path


def _config(repo: _Repo, key: str) -> str | None:
    """``git config --get key`` as git itself resolves it now (includes followed; no cached snapshot)."""
    try:
        value = repo.run_git(["config", "--get", key]).strip()
    except GitError:
        return None
    return value or None


def check_merge_driver(repo: _Repo) -> Check:
    """Whether generated artifacts reach ``git memhtml merge-driver`` on a real ``git merge``.

    Raises:
        GitError: ``git check-attr`` cannot run.
    """
    out = repo.run_git(["check-attr", "merge", "--", *PROBE_PATHS])
    routed = [line.split(": ", 1)[0] for line in out.splitlines() if line.endswith(f": merge: {DRIVER_NAME}")]
    if not routed:
        return Check("merge-driver", False,
                     ".gitattributes does not route index.html, sitemap.xml and the access sidecar to "
                     f"merge={DRIVER_NAME}: both sides' listings conflict on merge",
                     "git memhtml init (it upgrades .gitattributes and commits it)")
    driver = _config(repo, f"merge.{DRIVER_NAME}.driver")
    if driver is None:
        if _config(repo, f"merge.{DRIVER_NAME}.name") is not None:
            return Check("merge-driver", False,
                         f"merge.{DRIVER_NAME}.name is set without merge.{DRIVER_NAME}.driver: git aborts every "
                         "merge of a generated file (\"lacks command line\", exit 128)",
                         "git memhtml install")
        return Check("merge-driver", False,
                     f".gitattributes names merge={DRIVER_NAME} but this clone does not define it (drivers do not "
                     "travel with a clone): git falls back to a text merge and generated listings conflict",
                     "git memhtml install")
    program = driver.split()[0] if driver.split() else ""
    if shutil.which(program, path=repo.env.get("PATH", os.defpath)) is None:  # the PATH git will run it with
        return Check("merge-driver", False, f"the merge driver runs `{program}`, which is not on PATH",
                     "install git-memhtml where git can find it (pipx install git-memhtml)")
    return Check("merge-driver", True, f"generated files merge by their entries ({driver})")


def check_hooks(hooks_dir: Path) -> Check:
    """Whether the hooks in ``hooks_dir`` (index triggers, commit guards) are git-memhtml's (``git memhtml
    install``)."""
    missing = [name for name in HOOK_NAMES
               if not (hooks_dir / name).is_file() or not has_fingerprint((hooks_dir / name).read_bytes())]
    if missing:
        return Check("hooks", False,
                     f"not installed: {', '.join(missing)} (the index catches up only when a git-memhtml command "
                     "runs)", "git memhtml install")
    return Check("hooks", True, f"index hooks and commit guards installed in {hooks_dir}")


def safe_checks(repo: _Repo, hooks_dir: Path) -> list[Check]:
    """Both checks; a git failure becomes a failed check instead of an exception."""
    try:
        driver = check_merge_driver(repo)
    except GitError as exc:
        driver = Check("merge-driver", False, exc.message, exc.hint)
    return [driver, check_hooks(hooks_dir)]


def git_integration_checks(repo: _RepoWithDirs) -> list[Check]:
    """The checks ``git memhtml doctor`` runs for a :class:`~git_memhtml.gitrepo.GitRepo`: merge driver and hooks
    (in the folder git really uses, ``core.hooksPath`` included). Never raises for a git failure."""
    from git_memhtml.hooks.install import hooks_dir  # noqa: PLC0415

    return safe_checks(repo, hooks_dir(repo.root, repo.common_dir, follow=True, env=repo.env))


def undefined_driver_warning(repo: _Repo) -> str | None:
    """One line for writing commands when ``.gitattributes`` routes files to ``merge=memhtml`` but this clone
    defines no ``merge.memhtml.driver`` (a fresh clone: drivers do not travel), as git-lfs warns about a missing
    ``git-lfs``; ``None`` when nothing routes to the driver, when it is defined, or when git cannot answer."""
    try:
        out = repo.run_git(["check-attr", "merge", "--", *PROBE_PATHS])
    except GitError:
        return None
    if not any(line.endswith(f": merge: {DRIVER_NAME}") for line in out.splitlines()):
        return None
    if _config(repo, f"merge.{DRIVER_NAME}.driver") is not None:
        return None
    return (f".gitattributes routes generated files to merge={DRIVER_NAME}, but this clone does not define that "
            "driver (merges of them will conflict); run: git memhtml install")
