"""The corpus reads of the sleep phases (docs/phases.md §0 "Exclusions and reads", docs/phases.md §0.1).

Every corpus read is over active memories (:func:`git_memhtml.index.active.active_memory`: not archived, not a
task), minus any further excluded types, and every result is ordered with a path tie-break so two runs over one
corpus read the same sequence. The index is a projection: a phase that needs the truth about one file reads the
tree; these reads pick candidates.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from git_memhtml.domain.entities import centroid
from git_memhtml.index.active import active_memory
from git_memhtml.index.db import IndexDB

SLEEP_AUTHOR = "agent:sleep"
"""The author of every file a sleep run writes (docs/tasks.md §7; ``sleep/phases/tasks.py:SLEEP_AUTHOR``)."""

SLEEP_EXCLUDED_TYPES: tuple[str, ...] = ("task",)
"""Memory types no sleep read returns (docs/phases.md §0.1; docs/phases.md §0)."""

_SQL_CHUNK = 500
"""Paths bound per ``IN (…)`` statement (an implementation choice below SQLite's variable limit)."""


@dataclass(frozen=True)
class CorpusRow:
    """One active memory as ``active_corpus`` reads it (docs/phases.md §0 ``activeCorpus``).

    ``gist`` is the ``<mark>`` claim; ``body_text`` the whole article text (which includes the gist). Instants are
    ISO-8601 UTC strings; ``confidence`` in [0, 1]; ``importance`` 1-10.
    """

    path: str
    memory_type: str
    title: str
    gist: str
    body_text: str
    content_hash: str
    confidence: float
    importance: int
    word_count: int
    created_at: str
    updated_at: str
    valid_until: str | None
    reprieves: int


@dataclass(frozen=True)
class EntityCount:
    """One ``(entity_type, entity_name)`` claimed by active non-task files; ``paths`` sorted, ``count = len(paths)``."""

    entity_type: str
    entity_name: str
    paths: tuple[str, ...]

    @property
    def count(self) -> int:
        """Number of distinct active claimant files."""
        return len(self.paths)


CORPUS_COLUMNS = ("path, memory_type, title, gist, body_text, content_hash, confidence, importance, word_count, "
                  "created_at, updated_at, valid_until, reprieves")
"""The ``files`` columns of a :class:`CorpusRow`, in :func:`corpus_rows`' order."""


def corpus_rows(rows: Sequence[tuple[Any, ...]]) -> list[CorpusRow]:
    """:class:`CorpusRow` of each row of ``SELECT`` :data:`CORPUS_COLUMNS` (order kept)."""
    return [
        CorpusRow(
            path=path, memory_type=kind, title=title, gist=gist, body_text=body, content_hash=digest,
            confidence=float(confidence), importance=int(importance), word_count=int(words), created_at=created,
            updated_at=updated, valid_until=valid_until, reprieves=int(reprieves),
        )
        for (path, kind, title, gist, body, digest, confidence, importance, words, created, updated, valid_until,
             reprieves) in rows
    ]


def _corpus_clause(alias: str, exclude_types: Sequence[str]) -> tuple[str, list[str]]:
    """The active-memory predicate over ``alias`` and, for types beyond the always-excluded ``task``, a
    ``memory_type NOT IN (…)`` with its parameters."""
    extra = [t for t in dict.fromkeys(exclude_types) if t not in SLEEP_EXCLUDED_TYPES]
    clause = active_memory(alias)
    if extra:
        column = f"{alias}.memory_type" if alias else "memory_type"
        clause += f" AND {column} NOT IN ({', '.join('?' for _ in extra)})"
    return clause, extra


def active_corpus(db: IndexDB, *, exclude_types: Sequence[str] = SLEEP_EXCLUDED_TYPES) -> list[CorpusRow]:
    """Active (not archived) files minus ``exclude_types``, oldest first: ``ORDER BY created_at, path``.

    The position of a row in this list is its *corpus offset*; dedup-merge keeps the lower offset (docs/veto.md §3).
    Tasks are always excluded, whatever ``exclude_types`` says (docs/phases.md §0.1).

    Raises:
        StorageError: SQLite failed.
    """
    clause, params = _corpus_clause("", exclude_types)
    return corpus_rows(db.query(f"SELECT {CORPUS_COLUMNS} FROM files WHERE {clause} ORDER BY created_at, path",
                                params))


def first_chunk_vector_map(db: IndexDB, paths: Sequence[str], space: str) -> dict[str, np.ndarray]:
    """``{path: float32 (dim,)}`` of the ordinal-0 chunk vector of each path that has one in ``space``.

    Vectors are float32 little-endian blobs (docs/index.md §3.2); a path with no chunk or no vector is absent.

    Raises:
        StorageError: SQLite failed.
    """
    found: dict[str, np.ndarray] = {}
    unique = sorted(set(paths))
    for start in range(0, len(unique), _SQL_CHUNK):
        part = unique[start : start + _SQL_CHUNK]
        marks = ", ".join("?" for _ in part)
        rows = db.query(
            "SELECT c.path, e.vec FROM chunks c JOIN embeddings e ON e.chunk_id = c.chunk_id "
            f"WHERE c.ordinal = 0 AND e.model = ? AND c.path IN ({marks})",
            [space, *part],
        )
        for path, blob in rows:
            found[path] = np.frombuffer(bytes(blob), dtype="<f4").astype(np.float32)
    return found


def name_centroids(db: IndexDB, claimants: Mapping[str, Sequence[str]], space: str) -> dict[str, np.ndarray]:
    """``{name: centroid}`` (:func:`git_memhtml.domain.entities.centroid`, float64, unit length) of the first-chunk
    vectors in ``space`` of each name's claimant paths, taken in sorted path order; a name none of whose claimants has
    a vector is absent. The model stage of entity-resolution and the run gate both read centroids through this one
    function (docs/entities.md §6 "Model stage").

    Raises:
        StorageError: SQLite failed.
    """
    every = sorted({p for paths in claimants.values() for p in paths})
    vectors = first_chunk_vector_map(db, every, space)
    out: dict[str, np.ndarray] = {}
    for name in sorted(claimants):
        vec = centroid([vectors[p] for p in sorted(set(claimants[name])) if p in vectors])
        if vec is not None:
            out[name] = vec
    return out


def first_chunk_vectors(db: IndexDB, paths: Sequence[str], space: str) -> np.ndarray:
    """First-chunk (ordinal 0) vectors of ``paths`` in ``space`` as a float32 ``(len(paths), dim)`` matrix.

    Row ``i`` belongs to ``paths[i]``; a path without a vector gets a zero row (which ``top_neighbor_pairs`` never
    pairs). ``dim`` is read from ``space`` (``…@<dim>``), else from the first vector found; with neither the result
    is ``(len(paths), 0)``.

    Raises:
        StorageError: SQLite failed. ValueError: a stored vector's length disagrees with the others.
    """
    found = first_chunk_vector_map(db, paths, space)
    dim = _space_dim(space)
    if dim is None:
        dim = next((len(v) for v in found.values()), 0)
    out = np.zeros((len(paths), dim), dtype=np.float32)
    for row, path in enumerate(paths):
        vec = found.get(path)
        if vec is None:
            continue
        if len(vec) != dim:
            raise ValueError(f"vector of {path} has {len(vec)} dimensions, space {space!r} has {dim}")
        out[row] = vec
    return out


def _space_dim(space: str) -> int | None:
    _, at, tail = space.rpartition("@")
    return int(tail) if at and tail.isdigit() else None


def active_entities(db: IndexDB, *, exclude_types: Sequence[str] = SLEEP_EXCLUDED_TYPES) -> list[EntityCount]:
    """``file_entities`` of active non-task files grouped by ``(type, name)``, sorted by type, name.

    (docs/entities.md §6 step 1 ``activeEntities``.) Names are the raw strings as written.

    Raises:
        StorageError: SQLite failed.
    """
    clause, params = _corpus_clause("f", exclude_types)
    rows = db.query(
        "SELECT fe.entity_type, fe.entity_name, fe.path FROM file_entities fe JOIN files f ON f.path = fe.path "
        f"WHERE {clause} ORDER BY fe.entity_type, fe.entity_name, fe.path",
        params,
    )
    grouped: dict[tuple[str, str], list[str]] = {}
    for etype, name, path in rows:
        grouped.setdefault((etype, name), []).append(path)
    return [EntityCount(t, n, tuple(sorted(set(ps)))) for (t, n), ps in sorted(grouped.items())]


def corpus_digest(db: IndexDB) -> str:
    """sha256 (hex) of the active memories' ``path NUL content_hash`` lines in path order: which claims the corpus
    holds, not when they were stamped (a head stamp leaves the article hash alone, docs/format.md §1.10).

    Two runs over the same memories get the same digest, so a corroboration bump from the second adds no detection
    (docs/models.md §5). Files sleep itself wrote (author ``agent:sleep``: arcs, canonicals, person files, tasks)
    are left out: a night's own output is no new evidence, so a model cannot unlock its second look by writing
    something on its first. Raises ``StorageError`` when SQLite fails.
    """
    clause, params = _corpus_clause("", SLEEP_EXCLUDED_TYPES)
    digest = hashlib.sha256()
    rows = db.query(f"SELECT path, content_hash FROM files WHERE {clause} AND author <> ? ORDER BY path",
                    [*params, SLEEP_AUTHOR])
    for path, content_hash in rows:
        digest.update(f"{path}\x00{content_hash}\n".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def frame_key_groups(db: IndexDB, *, exclude_types: Sequence[str] = SLEEP_EXCLUDED_TYPES) -> list[tuple[str, ...]]:
    """Paths of active files minus ``exclude_types`` that share one ``frame_key``, each group sorted, groups sorted.

    Only keys held by two files or more are returned (docs/phases.md §1.2 "Model path": the frame-key seeds of the
    dedup components; a file with no frame key has none). Tasks are always excluded.

    Raises:
        StorageError: SQLite failed.
    """
    clause, params = _corpus_clause("", exclude_types)
    rows = db.query(
        f"SELECT frame_key, path FROM files WHERE {clause} AND frame_key IS NOT NULL ORDER BY frame_key, path",
        params,
    )
    grouped: dict[str, list[str]] = {}
    for key, path in rows:
        grouped.setdefault(str(key), []).append(str(path))
    return sorted(tuple(paths) for paths in grouped.values() if len(paths) >= 2)
