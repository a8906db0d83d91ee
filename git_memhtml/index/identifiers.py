"""The identifier step of fusion: candidates holding the query's identifiers rank first (docs/retrieval.md §4.3
"Identifiers").

Static embedders barely see digits, so the vector arm ranks ``1.2.0`` and ``1.2.1`` alike and RRF lets every
near-twin that sits in both arms beat the exact match only the lexical arm holds. After fusion, each identifier of
the query (:func:`~git_memhtml.domain.rrf.identifier_phrases`) is looked up as an FTS5 phrase: its best holders in
scope join the candidates, and :func:`~git_memhtml.domain.rrf.identifier_first` moves the candidates holding more
of them ahead. Two FTS phrase queries per identifier (the posting lists the lexical arm already reads; the phrase's
matches only, no scan of ``files``); nothing runs for a query without an identifier. Read-only.
"""

from __future__ import annotations

from collections.abc import Sequence

from git_memhtml.domain.rrf import identifier_first, identifier_phrases
from git_memhtml.index.db import IndexDB
from git_memhtml.index.retrieval_sql import ARM_LIMIT, Arm, Params, Scope, fts_arm_sql, scope_sql

IDENTIFIER_POOL = 4 * ARM_LIMIT
"""Fused candidates the identifier step reorders: every path the four arms can give (4 arms × ``ARM_LIMIT`` 40,
docs/retrieval.md §4.2), so an exact match the twins pushed past ``limit`` is still seen."""


def identifier_sql(paths: Sequence[str], phrase: tuple[str, ...]) -> tuple[str, Params]:
    """``(sql, params)`` whose rows ``(path)`` are those of ``paths`` whose FTS text holds ``phrase`` (its tokens
    adjacent, in order, under the table's tokenizer)."""
    names = [f":p{i}" for i in range(len(paths))]
    sql = (
        "SELECT f.path FROM files f WHERE f.path IN (" + ", ".join(names) + ") "
        "AND f.id IN (SELECT rowid FROM files_fts WHERE files_fts MATCH :phrase)"
    )
    params: Params = {n[1:]: p for n, p in zip(names, paths, strict=True)}
    params["phrase"] = _phrase_match(phrase)
    return sql, params


def fusion_limit(query: str, arms: dict[Arm, float], limit: int) -> int:
    """How many fused rows to read: :data:`IDENTIFIER_POOL` (at least ``limit``) when the identifier step will run
    (the query has an identifier and the lexical arm runs), else ``limit``."""
    if "fts" in arms and identifier_phrases(query):
        return max(limit, IDENTIFIER_POOL)
    return limit


def rank_identifiers(db: IndexDB, query: str, fused: list[tuple[str, float]], arms: dict[Arm, float], limit: int,
                     scope: Scope) -> list[tuple[str, float]]:
    """``fused`` with the candidates holding more of ``query``'s identifiers first, cut at ``limit``; unchanged
    (cut) when the query has none or the lexical arm did not run (no token: no identifier could match).

    The candidates are the fused ones, then the :data:`~git_memhtml.index.retrieval_sql.ARM_LIMIT` best holders of
    each identifier under ``scope`` (``bm25`` order, the lexical arm's own SQL on the phrase) that fusion did not
    keep, each with score 0.0: an exact match that no arm kept in its top 40 is still found.

    Raises:
        StorageError: SQLite failed.
    """
    phrases = identifier_phrases(query) if "fts" in arms else []
    if not phrases:
        return fused[:limit]
    scope_filter, scope_params = scope_sql(scope)
    pool = dict(fused)
    extra: list[tuple[str, float]] = []
    for phrase in phrases:
        rows = db.query(fts_arm_sql(scope_filter),
                        {**scope_params, "match": _phrase_match(phrase), "arm_limit": ARM_LIMIT})
        for path, _rank in sorted(rows, key=lambda row: int(row[1])):
            if str(path) not in pool:
                pool[str(path)] = 0.0
                extra.append((str(path), 0.0))
    candidates = [*fused, *extra]
    paths = [p for p, _ in candidates]
    held: dict[str, int] = {}
    for phrase in phrases:
        sql, params = identifier_sql(paths, phrase)
        for (path,) in db.query(sql, params):
            held[str(path)] = held.get(str(path), 0) + 1
    return identifier_first(candidates, held)[:limit]


def _phrase_match(phrase: tuple[str, ...]) -> str:
    """FTS5 MATCH text of one identifier: its tokens as one quoted phrase (tokens are letter/digit runs only)."""
    return '"' + " ".join(phrase) + '"'
