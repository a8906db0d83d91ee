"""The vector arm held in memory: one space's chunk vectors loaded once, ranked like the SQL scan (docs/retrieval.md
§4.11).

``vector_arm_sql`` ranks paths by the smallest ``vec_distance_cosine`` of their chunks, an exact scan in SQL that
costs ~10 µs a vector (bench/README.md "index_perf.py"). A caller running hundreds of searches on one unchanging
index (the issue-10 probes) loads :class:`ResidentVectors` once and passes it to ``retrieval.search(resident=)``.

The ranking is the SQL arm's, not an approximation of it. sqlite-vec computes the distance in float32 (a sequential
float32 sum of float32 products for the dot product and both squared norms, then ``1 − dot / (√a·√b)`` in double,
rounded to float32), so two chunks at different true distances can tie, and the tie goes to the smaller path.
``cosine.sqlite_vec_cosine`` repeats that arithmetic operation for operation (equal bit for bit, by test). A
float64 matrix product over every row finds the candidates: each path whose float64 distance is within twice
``cosine.distance_error_bound`` of the ``limit``-th best; only those rows are scored the sqlite-vec way
(``cosine.rank_paths``, shared with the persistent matrix), so no path the SQL arm would rank can be missed. Rows
the bound does not cover (non-finite or extreme values) are always scored the sqlite-vec way; all-zero rows are left
out, as their distance is NULL for every query.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Collection, Set
from dataclasses import dataclass
from typing import TypeVar, cast

import numpy as np
import numpy.typing as npt

from git_memhtml.errors import EmbedModelMismatch, IndexStale, StorageError
from git_memhtml.index.cosine import (
    F32,
    distance_error_bound,
    query_parts,
    rank_paths,
    regular_rows,
    sqlite_vec_cosine,
    squared_norms_f32,
)
from git_memhtml.index.db import IndexDB
from git_memhtml.index.retrieval_sql import ARM_LIMIT, Arm, Scope, arm_ranks_sql, eligible_paths_sql

MASK_CACHE = 8
"""Eligible-path masks kept per :class:`ResidentVectors` (keyed by the frozenset a caller passes again)."""
ANSWER_CACHE = 32
"""Answers of :func:`eligible_paths` and :func:`fixed_arm_ranks` kept per open index (scopes × arms × instants)."""

T = TypeVar("T")
F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class _Rows:
    """The loaded matrix: rows grouped by path (path index ascending), one group per path."""

    paths: tuple[str, ...]
    row_path: npt.NDArray[np.intp]
    starts: npt.NDArray[np.intp]
    raw: F32
    mags: F32
    unit: F64
    regular: npt.NDArray[np.bool_]
    path_irregular: npt.NDArray[np.bool_]


class ResidentVectors:
    """Every chunk vector of one space of one open index, in memory (build with :meth:`load`).

    Attributes:
        space: the vector space ``"<provider>:<model>@<dim>"``.
        dim: components per vector.
        paths: the paths that have at least one non-zero vector, ascending.
        rows: vectors held (all-zero ones left out).
    """

    def __init__(self, db: IndexDB, space: str, dim: int, rows: _Rows) -> None:
        self.space = space
        self.dim = dim
        self._rows = rows
        self.paths = rows.paths
        self.rows = int(rows.raw.shape[0])
        self._db = weakref.ref(db)
        self._stamp = db.change_stamp()
        self._margin = 2.0 * distance_error_bound(dim)
        self._masks: dict[frozenset[str], npt.NDArray[np.bool_]] = {}

    @classmethod
    def load(cls, db: IndexDB, space: str) -> ResidentVectors:
        """Read every chunk vector of ``space`` from ``db`` (one query), with the path of its chunk.

        Raises:
            StorageError: SQLite failed, or a stored vector is not ``4·dim`` bytes (hint: rebuild the index).
            EmbedModelMismatch: ``space`` does not end in ``@<dim>`` with a positive ``dim``.
        """
        _, _, tail = space.rpartition("@")
        dim = int(tail) if tail.isdigit() else 0
        if dim < 1:
            raise EmbedModelMismatch(f"{space!r} is not a vector space <provider>:<model>@<dim>",
                                     hint="pass the embedder's space (Embedder.space)")
        found = db.query(
            "SELECT c.path, e.vec FROM chunks c JOIN embeddings e ON e.chunk_id = c.chunk_id "
            "WHERE e.model = ? ORDER BY c.path, c.ordinal",
            (space,),
        )
        width = 4 * dim
        bad = next((path for path, vec in found if not isinstance(vec, bytes) or len(vec) != width), None)
        if bad is not None:
            raise StorageError(f"a vector of {bad} in space {space} is not {dim} float32 components",
                               hint="git memhtml index rebuild", path=str(bad))
        raw = np.frombuffer(b"".join(vec for _, vec in found), dtype="<f4").reshape(len(found), dim).astype(np.float32)
        names = [str(path) for path, _ in found]
        keep = np.any(raw != 0.0, axis=1)  # NaN != 0 holds, so only rows of (signed) zeros go: NULL for any query
        raw = np.ascontiguousarray(raw[keep])
        names = [n for n, k in zip(names, keep.tolist(), strict=True) if k]
        return cls(db, space, dim, _group(names, raw))

    def current(self, db: IndexDB) -> bool:
        """Whether this copy was loaded from ``db`` and ``db`` has not changed since (``IndexDB.change_stamp``)."""
        return self._db() is db and db.change_stamp() == self._stamp

    def check(self, db: IndexDB, space: str | None) -> None:
        """Refuse to stand in for ``db``'s vector arm in ``space`` when it cannot (``space`` ``None``: only the
        index is checked, no vector arm runs).

        Raises:
            IndexStale: loaded from another index, or ``db`` changed since the load (hint: load it again).
            EmbedModelMismatch: ``space`` is not this copy's space.
        """
        if not self.current(db):
            raise IndexStale(f"the resident vectors of {self.space} were loaded from another index, or before "
                             f"{db.index_path} changed", hint="load them again: ResidentVectors.load(db, space)")
        if space is not None and space != self.space:
            raise EmbedModelMismatch(f"the resident vectors are of {self.space}, the query of {space}",
                                     hint="load the vectors of the embedder's space")

    def _mask(self, eligible: Collection[str] | None) -> npt.NDArray[np.bool_]:
        if eligible is None:
            return np.ones(len(self.paths), dtype=bool)
        if isinstance(eligible, frozenset) and eligible in self._masks:
            return self._masks[eligible]
        members = eligible if isinstance(eligible, Set) else set(eligible)
        mask = np.fromiter((p in members for p in self.paths), dtype=bool, count=len(self.paths))
        if isinstance(eligible, frozenset):
            if len(self._masks) >= MASK_CACHE:
                self._masks.pop(next(iter(self._masks)))
            self._masks[eligible] = mask
        return mask

    def ranked(self, qvec: bytes, eligible: Collection[str] | None, limit: int = ARM_LIMIT) -> list[str]:
        """The vector arm's paths for query vector ``qvec`` (float32 little-endian, ``dim`` components), best
        first: exactly the rows of ``vector_arm_sql``. Per path the smallest sqlite-vec cosine distance over its
        chunks; a NULL distance never ranks; ties by path ascending; only paths of ``eligible`` (``None``: all);
        at most ``limit`` paths. A frozenset ``eligible`` passed again reuses its mask.

        Raises:
            EmbedModelMismatch: ``qvec`` is not ``dim`` float32 components.
        """
        if len(qvec) != 4 * self.dim:
            raise EmbedModelMismatch(f"the query vector has {len(qvec)} bytes, {self.space} needs {4 * self.dim}",
                                     hint="embed the query with the embedder of the index's space")
        data = self._rows
        if limit < 1 or self.rows == 0:
            return []
        query, query_mag, unit = query_parts(qvec)
        approx = None
        if unit is not None:
            # einsum's own loop, not BLAS: one matrix-vector product per query gains nothing from BLAS threads and,
            # on a loaded machine, loses to their contention (bench/README.md "run_gate.py": 34-45 s vs 9.6 s)
            approx = 1.0 - np.einsum("ij,j->i", data.unit, unit)
            approx[~data.regular] = np.inf
        found = rank_paths(approx, data.row_path, data.starts, data.path_irregular, limit=limit, margin=self._margin,
                           exact=lambda rows: sqlite_vec_cosine(data.raw[rows], data.mags[rows], query, query_mag),
                           mask=self._mask(eligible))
        return [self.paths[i] for i in found.tolist()]


def _group(names: list[str], raw: F32) -> _Rows:
    """Order rows by path (ascending, stable) and derive the per-path structure and float64 unit rows."""
    paths = tuple(sorted(set(names)))
    index = {p: i for i, p in enumerate(paths)}
    owner = np.fromiter((index[n] for n in names), dtype=np.intp, count=len(names))
    order = np.argsort(owner, kind="stable")
    owner, raw = owner[order], np.ascontiguousarray(raw[order])
    mags = squared_norms_f32(raw)
    regular = regular_rows(raw, mags)
    unit = np.zeros(raw.shape, dtype=np.float64)
    if regular.any():
        good = raw[regular].astype(np.float64)
        unit[regular] = good / np.sqrt(np.einsum("ij,ij->i", good, good))[:, None]
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]]) if owner.size else np.zeros(0, dtype=np.intp)
    path_irregular = np.zeros(len(paths), dtype=bool)
    path_irregular[owner[~regular]] = True
    return _Rows(paths, owner, starts.astype(np.intp), raw, mags, unit, regular, path_irregular)


_CACHE: weakref.WeakKeyDictionary[IndexDB, dict[tuple[object, ...], object]] = weakref.WeakKeyDictionary()
"""Per open index: ``(change stamp, what, …) → answer`` of :func:`eligible_paths` and :func:`fixed_arm_ranks`."""


def cached(db: IndexDB, key: tuple[object, ...], compute: Callable[[], T]) -> T:
    """``compute()`` once per ``key`` while ``db``'s change stamp holds; answers from before a change are dropped,
    and at most :data:`ANSWER_CACHE` are kept per index."""
    stamp = db.change_stamp()
    cache = _CACHE.setdefault(db, {})
    full = (stamp, *key)
    if full in cache:
        return cast(T, cache[full])
    for old in [k for k in cache if k[0] != stamp]:  # the index changed: every older answer is stale
        del cache[old]
    if len(cache) >= ANSWER_CACHE:
        del cache[next(iter(cache))]
    found = compute()
    cache[full] = found
    return found


def eligible_paths(db: IndexDB, scope: Scope) -> frozenset[str]:
    """The paths of ``files`` that ``scope``'s filter admits (``retrieval_sql.scope_sql``, the filter every arm
    applies), cached per open index and scope until the index changes (``IndexDB.change_stamp``), so a caller
    running many searches with one scope reads it once.

    Raises:
        StorageError: SQLite failed.
    """
    def read() -> frozenset[str]:
        sql, params = eligible_paths_sql(scope)
        return frozenset(str(r[0]) for r in db.query(sql, params))

    return cached(db, ("eligible", scope), read)


FIXED_ARMS: tuple[Arm, ...] = ("recency", "salience")
"""The arms whose ranking does not depend on the query: for one scope and one ``now`` they rank the same paths for
every query (docs/retrieval.md §4.2)."""


def fixed_arm_ranks(db: IndexDB, arm: Arm, scope: Scope, *, now: str,
                    arm_limit: int = ARM_LIMIT) -> list[tuple[str, int]]:
    """The ranking of a query-independent arm (:data:`FIXED_ARMS`) under ``scope`` at ``now``: the ``(path, rank)``
    rows of its SQL (``retrieval_sql.arm_ranks_sql``; tied files share a rank), read once per open index, scope and
    instant until the index or the state plane changes.

    Raises:
        ValueError: ``arm`` depends on the query. StorageError: SQLite failed.
    """
    if arm not in FIXED_ARMS:
        raise ValueError(f"the {arm} arm depends on the query")

    def read() -> list[tuple[str, int]]:
        sql, params = arm_ranks_sql(arm, scope, now=now, arm_limit=arm_limit)
        return [(str(path), int(rank)) for path, rank in db.query(sql, params)]

    return list(cached(db, ("arm", arm, scope, now, arm_limit), read))
