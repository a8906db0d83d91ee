"""What the run gate reads of one index (docs/gate.md §9): the claim candidates, the entity reach, the live and
archived paths and the ``supersedes`` pointers.

Every function reads only; each raises ``StorageError`` when SQLite fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from git_memhtml.index.active import ACTIVE_MEMORY, active_memory
from git_memhtml.index.db import IndexDB


@dataclass(frozen=True)
class ClaimCandidate:
    """An active memory with a claim: ``para`` is its bucket (first path segment), ``gist`` the ``<mark>`` text."""

    path: str
    para: str
    memory_type: str
    gist: str


def claim_candidates(db: IndexDB) -> list[ClaimCandidate]:
    """Every active memory (live, not a task) whose claim is not blank and that is no stub (``files.stub``: never a
    search result, so nothing to probe; docs/retrieval.md §4.1), by path."""
    rows = db.query(
        f"SELECT path, para, memory_type, gist FROM files WHERE {ACTIVE_MEMORY} AND trim(gist) <> '' AND stub = 0 "
        "ORDER BY path"
    )
    return [ClaimCandidate(str(p), str(b), str(t), str(g)) for p, b, t, g in rows]


def texts_of(db: IndexDB, paths: Sequence[str]) -> dict[str, tuple[str, str]]:
    """``{path: (claim, article text)}`` of the given paths that are indexed (any status)."""
    out: dict[str, tuple[str, str]] = {}
    for start in range(0, len(paths), 500):
        chunk = list(paths[start:start + 500])
        names = {f"p{i}": p for i, p in enumerate(chunk)}
        holders = ", ".join(f":{n}" for n in names)
        for path, gist, body in db.query(f"SELECT path, gist, body_text FROM files WHERE path IN ({holders})", names):
            out[str(path)] = (str(gist), str(body))
    return out


def entity_reach(db: IndexDB) -> dict[str, tuple[str, frozenset[str]]]:
    """``{entity key: (the value as first written, by path order; the active memories carrying it)}``.

    The key is the one every ``--entity`` scope compares (``file_entities.entity_key``, docs/entities.md §6), so two
    spellings of one key are one entry.
    """
    rows = db.query(
        "SELECT fe.entity_key, fe.entity_type || ':' || fe.entity_name, fe.path FROM file_entities fe "
        f"JOIN files f ON f.path = fe.path WHERE {active_memory('f')} AND fe.entity_key <> '' "
        "ORDER BY fe.entity_key, fe.path, fe.entity_name"
    )
    shown: dict[str, str] = {}
    paths: dict[str, set[str]] = {}
    for key, value, path in rows:
        shown.setdefault(str(key), str(value))
        paths.setdefault(str(key), set()).add(str(path))
    return {key: (shown[key], frozenset(found)) for key, found in paths.items()}


def entity_keys_by_path(db: IndexDB) -> dict[str, frozenset[str]]:
    """``{path: entity keys}`` of every indexed file (archived ones too: an archived copy still answers
    ``--entity … --include-archived``)."""
    out: dict[str, set[str]] = {}
    for path, key in db.query("SELECT path, entity_key FROM file_entities WHERE entity_key <> ''"):
        out.setdefault(str(path), set()).add(str(key))
    return {path: frozenset(keys) for path, keys in out.items()}


def content_hashes(db: IndexDB) -> dict[str, str]:
    """``{path: article content hash}`` of every indexed file."""
    return {str(p): str(h) for p, h in db.query("SELECT path, content_hash FROM files")}


def path_status(db: IndexDB) -> dict[str, bool]:
    """``{path: archived}`` of every indexed file, tasks included."""
    return {str(p): bool(a) for p, a in db.query("SELECT path, archived FROM files")}


def supersedes_pointers(db: IndexDB) -> dict[str, list[str]]:
    """``{superseded path: [the files whose authored ``supersedes`` link names it, by source path]}``."""
    out: dict[str, list[str]] = {}
    for dst, src in db.query(
        "SELECT dst_path, src_path FROM edges WHERE rel = 'supersedes' AND derived = 0 ORDER BY dst_path, src_path"
    ):
        out.setdefault(str(dst), []).append(str(src))
    return out
