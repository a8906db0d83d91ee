"""Generated artifacts: a per-directory ``index.html`` and the root ``sitemap.xml`` (docs/layout.md §2.7; docs/layout.md
§2.7).

Both are pure functions of the publish row set (one row per indexed file: path, title, type, updated, gist), so
they are byte-deterministic and a merge conflict in one is resolved by regenerating it. Every directory holding an
indexed file gets a listing, and so does each of its ancestors up to the root. A listing is memory-shaped (a
valid memory head, one ``<mark>`` claim in the first paragraph) so ``git memhtml validate`` reads it; every
memory-derived value is HTML-escaped, in text and in attributes.

The rows come from the index but the tree wins: a row whose file is gone is dropped, and a file whose bytes differ
from the indexed blob (or that the index does not hold yet) is re-read from the work tree.
"""

from __future__ import annotations

import hashlib
import html
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import quote

from git_memhtml.document.model import PARA_BUCKETS
from git_memhtml.document.serialize import POSTAMBLE, PREAMBLE, meta_line
from git_memhtml.document.validate import is_valid_datetime
from git_memhtml.errors import InvalidMemory
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.index.memories import listing_rows
from git_memhtml.tree.layout import INDEX_NAME, SITEMAP_PATH, is_indexable
from git_memhtml.tree.paths import (
    SYMLINK_REFUSED,
    read_tree_file,
    symlink_problem,
    tree_file_problem,
    write_tree_file,
)

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
"""The sitemaps.org protocol namespace (docs/layout.md §2.7)."""
LISTING_TYPE = "semantic"
"""``memhtml-type`` of a listing page (a statement about the tree; never indexed, docs/layout.md §2.1)."""
LISTING_AUTHOR = "agent:sleep"
EPOCH = "1970-01-01T00:00:00Z"
"""``created``/``updated`` of a listing with no rows (the empty root), so its bytes never depend on a clock."""


@dataclass(frozen=True)
class PublishRow:
    """One indexed file as the listings show it: repo path, title, type, ``updated`` stamp and gist."""

    path: str
    title: str
    memory_type: str
    updated_at: str
    gist: str


@dataclass(frozen=True)
class TreeFile:
    """One indexable file of the work tree: its path, bytes and git blob sha."""

    path: str
    data: bytes
    blob_sha: str


@dataclass(frozen=True)
class PublishResult:
    """What a regeneration did: ``artifacts`` generated, ``regenerated`` written (bytes differed) plus stale
    listings removed; ``paths`` every path written or removed, sorted."""

    artifacts: int
    regenerated: int
    paths: tuple[str, ...]
    refused: tuple[tuple[str, str], ...] = ()
    """``(path, reason)`` of every file or artifact left alone because it is a symlink (never followed)."""


def blob_sha(data: bytes) -> str:
    """git's blob id of ``data`` (``sha1("blob <len>\\0" + data)``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def scan_tree(root: Path, *, refused: list[tuple[str, str]] | None = None) -> dict[str, TreeFile]:
    """Every indexable file under the PARA buckets of ``root`` (docs/layout.md §2.1), keyed by repo path.

    Nothing is read through a symlink: a bucket or folder that is a link is not entered and a file that is one is
    not read; each is appended to ``refused`` as ``(path, reason)`` (when given) and never listed.

    Raises:
        OSError: a file cannot be read.
    """
    found: dict[str, TreeFile] = {}
    for bucket in PARA_BUCKETS:
        base = root / bucket
        if base.is_symlink():
            _note(refused, bucket, f"is a symlink: {SYMLINK_REFUSED}")
            continue
        if not base.is_dir():
            continue
        for folder, dirs, files in os.walk(base):
            for name in [d for d in dirs if Path(folder, d).is_symlink()]:
                _note(refused, Path(folder, name).relative_to(root).as_posix(), f"is a symlink: {SYMLINK_REFUSED}")
                dirs.remove(name)  # never entered (os.walk would not either), but reported
            dirs.sort()
            for name in sorted(files):
                path = Path(folder, name).relative_to(root).as_posix()
                if not is_indexable(path):
                    continue
                problem = tree_file_problem(root, path)
                if problem is not None:
                    _note(refused, path, problem)
                    continue
                data = read_tree_file(root, path)
                found[path] = TreeFile(path, data, blob_sha(data))
    return found


def _note(refused: list[tuple[str, str]] | None, path: str, reason: str) -> None:
    if refused is not None and (path, reason) not in refused:
        refused.append((path, reason))


def _row_from_file(file: TreeFile) -> PublishRow | None:
    from git_memhtml.document.parse import parse_memory  # noqa: PLC0415 - parser loaded only when needed

    try:
        doc = parse_memory(file.data, path=file.path)
    except InvalidMemory:
        return None
    return PublishRow(file.path, doc.title, doc.memory_type, doc.updated, doc.gist)


def publish_rows(db: IndexDB, tree: Mapping[str, TreeFile]) -> list[PublishRow]:
    """The rows the artifacts list, in path order: index rows reconciled with ``tree`` (see module docstring).

    A changed or unindexed file that does not parse as a memory is left out. Raises ``StorageError``.
    """
    indexed = {
        r.path: (r.blob_sha, PublishRow(r.path, r.title, r.memory_type, r.updated_at, r.gist))
        for r in listing_rows(db)
    }
    rows: list[PublishRow] = []
    for path in sorted(tree):
        known = indexed.get(path)
        if known is not None and known[0] == tree[path].blob_sha:
            rows.append(known[1])
            continue
        row = _row_from_file(tree[path])
        if row is not None:
            rows.append(row)
    return rows


def _dir_of(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def listing_dirs(rows: Iterable[PublishRow]) -> list[str]:
    """Every directory holding a row plus all its ancestors and the root ``""``, sorted."""
    dirs = {""}
    for row in rows:
        folder = _dir_of(row.path)
        while folder:
            dirs.add(folder)
            folder = _dir_of(folder)
    return sorted(dirs)


def _href(path: str) -> str:
    return html.escape("/" + quote(path, safe="/-._~"), quote=True)


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _updated_cell(value: str) -> str:
    if is_valid_datetime(value):
        return f'<time datetime="{_esc(value)}">{_esc(value)}</time>'
    return _esc(value)


def render_listing(
    directory: str, rows: Sequence[PublishRow], subdirs: Sequence[str], total: int, updated: str | None = None
) -> str:
    """One directory's ``index.html`` (docs/layout.md §2.7).

    Args:
        directory: repo-relative directory (``""`` is the root, titled ``/``).
        rows: the files directly in it, shown in the given order.
        subdirs: its immediate sub-directories (repo-relative), shown in the given order.
        total: memories in the whole subtree, the number the claim states.
        updated: the page's ``created``/``updated`` stamp (the newest stamp of its subtree); default the newest
            of ``rows``, else the epoch.

    Returns:
        Memory-shaped HTML: title ``<dir>``, claim ``<dir> holds N memories.``, a list of sub-directories and a
        table of entries (link, type, updated, gist).
    """
    label = directory or "/"
    stamp = updated or max((row.updated_at for row in rows), default=EPOCH)
    lines = [*PREAMBLE, f"<title>{_esc(label)}</title>"]
    for name, value in (
        ("type", LISTING_TYPE), ("status", "active"), ("created", stamp), ("updated", stamp),
        ("author", LISTING_AUTHOR),
    ):
        lines.append(meta_line(name, value))
    lines += ["</head>", "<body>", "<article>", f"<p><mark>{_esc(label)} holds {total} memories.</mark></p>"]
    if subdirs:
        lines.append("<ul>")
        for sub in subdirs:
            name = sub.rsplit("/", 1)[-1]
            lines.append(f'<li><a href="{_href(sub + "/" + INDEX_NAME)}">{_esc(name)}/</a></li>')
        lines.append("</ul>")
    if rows:
        lines += ["<table>", "<thead><tr><th>memory</th><th>type</th><th>updated</th><th>gist</th></tr></thead>",
                  "<tbody>"]
        for row in rows:
            lines.append(
                f'<tr><td><a href="{_href(row.path)}">{_esc(row.title)}</a></td><td>{_esc(row.memory_type)}</td>'
                f"<td>{_updated_cell(row.updated_at)}</td><td>{_esc(row.gist)}</td></tr>"
            )
        lines += ["</tbody>", "</table>"]
    lines += list(POSTAMBLE)
    return "\n".join(lines) + "\n"


def render_sitemap(rows: Sequence[PublishRow]) -> str:
    """The root ``sitemap.xml``: one ``<url><loc>/path</loc><lastmod>updated</lastmod></url>`` per row, path order."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', f'<urlset xmlns="{SITEMAP_NS}">']
    for row in sorted(rows, key=lambda r: r.path):
        lines.append(f"<url><loc>{_href(row.path)}</loc><lastmod>{_esc(row.updated_at)}</lastmod></url>")
    lines.append("</urlset>")
    return "\n".join(lines) + "\n"


def render_artifacts(rows: Sequence[PublishRow]) -> dict[str, bytes]:
    """Every generated artifact of ``rows``: ``{repo path: bytes}`` (listings for :func:`listing_dirs`, sitemap)."""
    ordered = sorted(rows, key=lambda r: r.path)
    dirs = listing_dirs(ordered)
    out: dict[str, bytes] = {}
    for folder in dirs:
        prefix = folder + "/" if folder else ""
        direct = [row for row in ordered if _dir_of(row.path) == folder]
        subdirs = [d for d in dirs if d and _dir_of(d) == folder]
        subtree = [row for row in ordered if row.path.startswith(prefix)]
        stamp = max((row.updated_at for row in subtree), default=EPOCH)
        out[prefix + INDEX_NAME] = render_listing(folder, direct, subdirs, len(subtree), stamp).encode("utf-8")
    out[SITEMAP_PATH] = render_sitemap(ordered).encode("utf-8")
    return out


def stale_listings(root: Path, keep: Iterable[str]) -> list[str]:
    """Generated ``index.html`` files under the PARA buckets whose directory no longer holds a row, sorted."""
    wanted = set(keep)
    stale: list[str] = []
    for bucket in PARA_BUCKETS:
        base = root / bucket
        if not base.is_dir():
            continue
        for folder, dirs, files in os.walk(base):
            dirs.sort()
            if INDEX_NAME in files:
                path = Path(folder, INDEX_NAME).relative_to(root).as_posix()
                if path not in wanted:
                    stale.append(path)
    return sorted(stale)


def write_artifacts(repo: GitRepo, artifacts: Mapping[str, bytes], *, dry_run: bool = False) -> PublishResult:
    """Write (and stage) each artifact whose bytes differ, and remove stale listings.

    On ``dry_run`` nothing is written; the result counts what would be. Raises ``OSError``/``GitError``.
    """
    changed: list[str] = []
    refused: list[tuple[str, str]] = []
    for path in sorted(artifacts):
        target = repo.root / path
        problem = symlink_problem(repo.root, path)
        if problem is not None:  # never written through: the link (or a linked folder) is left for a person
            refused.append((path, problem))
            continue
        if target.is_file() and read_tree_file(repo.root, path) == artifacts[path]:
            continue
        changed.append(path)
        if not dry_run:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_tree_file(repo.root, path, artifacts[path])
    stale = stale_listings(repo.root, artifacts)
    if not dry_run:
        for path in stale:
            (repo.root / path).unlink()
        if changed or stale:
            repo.stage([*changed, *stale])
    touched = tuple(sorted([*changed, *stale]))
    return PublishResult(artifacts=len(artifacts), regenerated=len(touched), paths=touched, refused=tuple(refused))


def publish(repo: GitRepo, db: IndexDB, *, dry_run: bool = False) -> PublishResult:
    """Regenerate every listing and the sitemap of ``repo`` from ``db`` reconciled with the tree; stage changes.

    The caller commits (``memhtml(publish): regenerate N generated artifacts``, docs/layout.md §2.7).

    Raises:
        StorageError: the index cannot be read. GitError/OSError: the tree cannot be written.
    """
    refused: list[tuple[str, str]] = []
    rows = publish_rows(db, scan_tree(repo.root, refused=refused))
    result = write_artifacts(repo, render_artifacts(rows), dry_run=dry_run)
    return replace(result, refused=(*refused, *result.refused))
