"""Projecting one file's bytes into the index under the live-content unique rule, and the refusals it leaves
(docs/index.md §3.7 "The index plane is a function of the tree"): of live non-task files with one content the
smallest path is indexed and the others wait in ``index_refusals`` until their holder goes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from git_memhtml.document.model import MemoryDocument
from git_memhtml.errors import (
    DuplicateContent,
    InvalidMemory,
)
from git_memhtml.index.active import ACTIVE_MEMORY
from git_memhtml.index.db import IndexDB
from git_memhtml.index.project import project
from git_memhtml.index.source import IndexPass, Parser, git_blob_sha
from git_memhtml.index.write import delete_path, refuse, stored_article, write_projection
from git_memhtml.pathnames import NOT_UTF8, is_utf8_name, shown_name

SQL_VARS = 500
"""Host parameters per ``IN (…)`` list: well under SQLite's 32,766 default limit (sqlite.org/limits.html §9)."""


def indexed_blob(db: IndexDB, path: str) -> str | None:
    """The blob sha the index projected ``path`` from, or ``None`` when it has no row there."""
    row = db.query_one("SELECT blob_sha FROM files WHERE path = ?", (path,))
    return None if row is None else str(row[0])


def bad_name(run: IndexPass, path: str) -> bool:
    """True (and one ``(shown path, NOT_UTF8)`` error, once per path) when ``path`` is not UTF-8: SQLite cannot
    store it, so the file is skipped, never projected."""
    if is_utf8_name(path):
        return False
    entry = (shown_name(path), NOT_UTF8)
    if entry not in run.errors:
        run.errors.append(entry)
    return True


def project_bytes(db: IndexDB, run: IndexPass, path: str, data: bytes, blob_sha: str, now: str, parse: Parser,
                   *, count: str | None, fresh: bool = False) -> bool:
    """Parse and write one file; ``count`` is the counter bumped on success (``added``/``modified``/None).

    The index plane is a function of the tree, never of the order of writes (issue 4 item 6): a file that does
    not parse loses any stale rows and is reported in ``run.errors``; of live non-task files with the same
    content the smallest path is indexed (a smaller newcomer evicts the holder) and the others are remembered in
    ``index_refusals`` and re-tried by :func:`retry_refusals` when the holder goes. A path that is not UTF-8 is
    skipped with the error ``(shown path, "file name is not UTF-8")``.

    A file already indexed (``count`` is not ``"added"``) hands its stored article (:func:`stored_article`) to
    ``parse`` as ``reuse``: a head-only rewrite whose article bytes are unchanged is not extracted again, and its
    chunks (content-keyed) keep their vectors (docs/index.md "Head-only rewrites"). ``fresh`` (a rebuild's pass
    over emptied tables) writes without first reading or deleting earlier rows of the path."""
    if bad_name(run, path):
        return False
    reuse = stored_article(db, path) if count != "added" else None
    try:
        doc = parse(data, path=path) if reuse is None else parse(data, path=path, reuse=reuse)
    except InvalidMemory as exc:
        with db.atomic():
            delete_path(db, path)
        run.errors.append((path, "; ".join(exc.violations) or exc.message))
        return False
    proj = project(doc, path=path, blob_sha=blob_sha, now=now)
    for _ in range(2):
        try:
            with db.atomic():
                write_projection(db, proj, now=now, fresh=fresh)
            break
        except DuplicateContent as exc:
            holder = _live_holder(db, doc.content_hash, path)
            with db.atomic():
                if holder is not None and path < holder:
                    refuse(db, holder, doc.content_hash)
                    run.errors.append((holder, f"{holder} has the same content as {path}"))
                    continue
                refuse(db, path, doc.content_hash)
            run.errors.append((path, exc.message))
            return False
    else:  # pragma: no cover - the eviction above frees the content, so the second write cannot collide
        return False
    if count == "added":
        run.added += 1
    elif count == "modified":
        run.modified += 1
    return True


def _live_holder(db: IndexDB, content_hash: str, path: str) -> str | None:
    row = db.query_one(
        f"SELECT path FROM files WHERE content_hash = ? AND {ACTIVE_MEMORY} AND path <> ?",
        (content_hash, path),
    )
    return None if row is None else str(row[0])


def upsert(db: IndexDB, run: IndexPass, path: str, data: bytes, blob_sha: str, now: str, parse: Parser) -> None:
    """Project ``path`` unless the index already holds exactly this blob there."""
    if bad_name(run, path):
        return
    indexed = indexed_blob(db, path)
    if indexed == blob_sha:
        return
    project_bytes(db, run, path, data, blob_sha, now, parse, count="added" if indexed is None else "modified")


def held_hashes(db: IndexDB, paths: Iterable[str]) -> set[str]:
    """The content hashes the index rows of ``paths`` hold now (one indexed look-up per path): taken before a pass
    touches those paths, they are the only hashes whose refusals the pass can free (:func:`retry_refusals`)."""
    wanted = sorted({p for p in paths if is_utf8_name(p)})
    out: set[str] = set()
    for start in range(0, len(wanted), SQL_VARS):
        part = wanted[start : start + SQL_VARS]
        out.update(str(r[0]) for r in db.query(
            f"SELECT content_hash FROM files WHERE path IN ({', '.join('?' * len(part))})", part))
    return out


def noting_hashes(parse: Parser, hashes: set[str]) -> Parser:
    """``parse``, adding the content hash of every document it returns to ``hashes``: a refusal the pass makes
    (the refused file, or a holder a smaller newcomer evicts) carries the hash of a document the pass parsed, and a
    row the pass writes and later drops within the same pass held one too, so these and the hashes the touched
    paths held before the pass (:func:`held_hashes`) are every hash whose refusals the pass can free."""

    def noting(data: bytes, *, path: str, **options: Any) -> MemoryDocument:
        doc = parse(data, path=path, **options)  # options: the parser's own keywords (``reuse=`` ...)
        hashes.add(doc.content_hash)
        return doc

    return noting


def knowing(parse: Parser, documents: Mapping[str, MemoryDocument]) -> Parser:
    """``parse``, answering from ``documents`` (``{git blob id: document}``, what ``parse`` gives for exactly those
    bytes, e.g. the documents a writer's render gate built, :attr:`BatchResult.documents`) when the bytes' blob id
    is there: a document is a function of the file's bytes alone (``path`` only names it in errors, and a
    ``reuse=`` article is taken only when it equals what extraction gives), so the index is what parsing
    would have written (docs/store.md "The post-commit index pass"). One sha1 of the bytes per call."""
    if not documents:
        return parse

    def known(data: bytes, *, path: str, **options: Any) -> MemoryDocument:
        found = documents.get(git_blob_sha(data))
        return found if found is not None else parse(data, path=path, **options)

    return known
