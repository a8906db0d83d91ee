"""``git memhtml init``: scaffold a memory repository, convergently (docs/layout.md §2.6).

Running it again changes nothing; running it in an existing repository adds only what is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from git_memhtml.document.model import PARA_BUCKETS
from git_memhtml.errors import DirtyTree, NotARepo
from git_memhtml.gitrepo import GitRepo, enclosing_bare_repository
from git_memhtml.gitrepo.identity import require_identity
from git_memhtml.tree.layout import (
    ACCESS_SIDECAR,
    ARCS_DIR,
    INBOX_DIR,
    INDEX_NAME,
    PEOPLE_DIR,
    REPORT_DIR,
    SITEMAP_PATH,
    STATE_DIR,
)

KEEP_DIRS: tuple[str, ...] = (*PARA_BUCKETS, ARCS_DIR, PEOPLE_DIR, INBOX_DIR, STATE_DIR, REPORT_DIR)
"""Folders that always exist, each held by a ``.gitkeep`` (docs/layout.md §2.6)."""

GITIGNORE_LINES: tuple[str, ...] = (
    ".memhtml/index.db",
    ".memhtml/state.db",
    ".memhtml/index.db-*",
    ".memhtml/state.db-*",
)
"""Ignored cache names of stores written by the original tool; ours live in the git dir (docs/design.md §3.2)."""

GITATTRIBUTES_LINES: tuple[str, ...] = (
    f"{INDEX_NAME} merge=memhtml linguist-generated",
    f"{SITEMAP_PATH} merge=memhtml linguist-generated",
    f"{ACCESS_SIDECAR} merge=memhtml linguist-generated",
    "*.html diff=html",
)
"""Generated artifacts merge by their entries through ``git memhtml merge-driver`` (docs/design.md §3.10) and are
collapsed in forge reviews (``linguist-generated``, docs/git.md §8)."""

UPGRADED_ATTRIBUTE_LINES: dict[str, str] = {
    "index.html merge=ours linguist-generated": "index.html merge=memhtml linguist-generated",
    "sitemap.xml merge=ours linguist-generated": "sitemap.xml merge=memhtml linguist-generated",
}
"""Lines written by earlier versions, replaced in place so that ``init`` stays convergent on old repositories."""

README_HTML = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Memory repository</title>
</head>
<body>
<h1>Memory repository</h1>
<p>Every file under projects/, areas/, resources/ and archive/ is one memory: one fact in one semantic HTML5
file. This repository is managed by git-memhtml; run <code>git memhtml --help</code>.</p>
</body>
</html>
"""


@dataclass(frozen=True)
class InitReport:
    """What ``init`` did: the repository root, whether it created the repository, files written, the commit."""

    root: str
    created_repo: bool
    written: tuple[str, ...]
    commit_sha: str | None


def _ensure_lines(path: Path, lines: tuple[str, ...]) -> bool:
    existing = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    missing = [line for line in lines if line not in existing]
    if not missing:
        return False
    text = "\n".join(existing + missing) + "\n"
    path.write_text(text, encoding="utf-8")
    return True


def _ensure_attributes(path: Path) -> bool:
    """Upgrade earlier lines in place (:data:`UPGRADED_ATTRIBUTE_LINES`), then add missing ones."""
    existing = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    upgraded: list[str] = []
    for line in existing:
        line = UPGRADED_ATTRIBUTE_LINES.get(line, line)
        if line not in upgraded or line not in GITATTRIBUTES_LINES:
            upgraded.append(line)
    missing = [line for line in GITATTRIBUTES_LINES if line not in upgraded]
    if upgraded == existing and not missing:
        return False
    path.write_text("\n".join(upgraded + missing) + "\n", encoding="utf-8")
    return True


def init_repo(path: Path, *, env: Mapping[str, str] | None = None,
              configure: Callable[[GitRepo], object] | None = None) -> InitReport:
    """Create (if needed) and scaffold a memory repository at ``path``; commit what was added.

    Args:
        env: the process environment, given by the CLI: the repository is opened with it (its commit identity,
            dates and git children; :class:`GitRepo`) and the identity is checked (git's rules,
            :mod:`git_memhtml.gitrepo.identity`) before anything is scaffolded; ``None``: the live environment,
            and the check is left to the commit itself.
        configure: called with the repository under the write lock, after the staged-changes refusal and
            before anything is scaffolded: the CLI passes the hook configuration step (the merge-driver
            include, :func:`git_memhtml.hooks.gitconfig.ensure_config`), so ``store`` never imports ``hooks``.

    Raises:
        NotARepo: ``path`` is, or lies inside, a bare repository (nothing is written; hint: clone it).
        IdentityUnknown: with ``env``, no author or committer identity (only the empty repository was created).
        DirtyTree: the index already holds staged changes that are not ours (nothing is written).
    """
    existing = next((p for p in (path.absolute(), *path.absolute().parents) if p.exists()), None)
    bare = enclosing_bare_repository(existing) if existing is not None else None
    if bare is not None:
        raise NotARepo(
            f"{path}: inside the bare repository {bare}, which has no work tree for memory files",
            hint=f"clone it and initialise the clone: git clone {bare} <folder> && git memhtml init <folder>",
        )
    path.mkdir(parents=True, exist_ok=True)
    created = False
    try:
        repo = GitRepo.discover(path, env=env)
        if repo.root != path.resolve():
            repo = GitRepo.init(path, env=env)
            created = True
    except NotARepo:
        repo = GitRepo.init(path, env=env)
        created = True
    if env is not None:
        require_identity(env, repo.config_get)
    with repo.write_lock("init"):
        return _scaffold(repo, created, configure)


def _scaffold(repo: GitRepo, created: bool, configure: Callable[[GitRepo], object] | None) -> InitReport:
    if repo.head_sha() is not None and repo.staged_changes():
        raise DirtyTree(
            f"{repo.root}: the git index holds staged changes",
            hint="commit them (`git commit`) or unstage them (`git restore --staged .`), then re-run init",
        )
    if configure is not None:
        configure(repo)
    written: list[str] = []
    for folder in KEEP_DIRS:
        keep = repo.root / folder / ".gitkeep"
        if not keep.exists():
            keep.parent.mkdir(parents=True, exist_ok=True)
            keep.write_text("")
            written.append(f"{folder}/.gitkeep")
    if _ensure_lines(repo.root / ".gitignore", GITIGNORE_LINES):
        written.append(".gitignore")
    if _ensure_attributes(repo.root / ".gitattributes"):
        written.append(".gitattributes")
    readme = repo.root / "README.html"
    if not readme.exists():
        readme.write_text(README_HTML, encoding="utf-8")
        written.append("README.html")
    sha = None
    if written:
        sha = repo.commit_files({p: (repo.root / p).read_bytes() for p in written},
                                "memhtml(init): scaffold the memory repository", purpose="init")
    return InitReport(str(repo.root), created, tuple(written), sha)
