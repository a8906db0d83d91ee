"""Pure SQL builders of hybrid retrieval (docs/retrieval.md §4, docs/design.md §3.13): query sanitising, scope filter,
arms, fusion.

Every builder returns ``(sql, params)`` with *named* parameters; nothing here touches a database. The scope
filter is built once (:func:`scope_sql`) and the same string is injected into every arm (a scope that holds on
three of four arms is a leak). Arms rank from 1 and return at most ``:arm_limit`` rows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from git_memhtml.domain.entities import entity_key
from git_memhtml.domain.rrf import RRF_K
from git_memhtml.domain.salience import SALIENCE_DECAY_PER_HOUR
from git_memhtml.index.active import not_archived, not_task

ARM_LIMIT = 40
"""Candidates per arm (docs/retrieval.md §4.2 "Arms")."""
SNIPPET_CHARS = 700
"""Longest snippet, ellipsis included (docs/retrieval.md §4.6 "Search")."""
STOP_WORDS: frozenset[str] = frozenset(
    [
        "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at", "be",
        "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do",
        "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having",
        "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it",
        "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "of", "off", "on", "once",
        "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she", "should", "so", "some",
        "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they",
        "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when",
        "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself",
        "yourselves",
    ]
)
"""Short English stop-word list dropped from lexical queries (docs/design.md §3.13, docs/retrieval-tuning.md §1: OR over
non-stop-word tokens). Negations (``no``, ``not``) are dropped too: bm25 cannot use them."""
_TOKEN = re.compile(r"[^\W_]+")
"""Runs of Unicode letters and digits (``[\\p{L}\\p{N}]+``, docs/retrieval.md §4.2 "Query sanitizing")."""

Params = dict[str, Any]


@dataclass(frozen=True)
class Scope:
    """Narrowing of a search (docs/retrieval.md §4.1 "Scope grammar"); scopes never widen.

    Attributes:
        memory_types: ANY-of; ``None``/empty → every type but ``task``. An explicit list is used verbatim.
        workspace: strict equality with ``files.workspace``.
        tags: ANY-of, via ``EXISTS file_tags``.
        entity: one ``type:name``, via ``EXISTS file_entities``, matched by key (``domain.entities.entity_key``:
            NFC, case-insensitive, whitespace-collapsed), so ``org:DGIA`` and ``org:dgia`` are one scope.
        include_archived: also archived files (default hides them).
        as_of: ISO instant; replaces the archived filter with the validity window
            ``coalesce(valid_from, event_at, created_at) <= as_of AND (valid_until IS NULL OR valid_until > as_of)``.
        absorbed: also an archived file that a file this scope admits ``supersedes`` (an authored edge): the memory a
            fold absorbed into its keeper. Only the lexical and vector arms of ``search`` set it, and they rank the
            keeper in its place (docs/retrieval.md §4.15); no effect with ``include_archived`` or ``as_of``.
    """

    memory_types: tuple[str, ...] | None = None
    workspace: str | None = None
    tags: tuple[str, ...] = ()
    entity: str | None = None
    include_archived: bool = False
    as_of: str | None = None
    absorbed: bool = False

    @property
    def narrowed(self) -> bool:
        """Whether any field narrows beyond the default."""
        return bool(self.memory_types or self.workspace or self.tags or self.entity or self.as_of)


@dataclass(frozen=True)
class ArmWeights:
    """RRF weight per arm (docs/retrieval.md §4; docs/design.md §3.13 says they are configuration). A weight ≤ 0 drops
    the arm."""

    fts: float = 1.0
    vector: float = 1.0
    recency: float = 0.5
    salience: float = 0.4


def running_arms(weights: ArmWeights, *, match: str | None, qvec: bytes | None) -> dict[Arm, float]:
    """The arms that run, with their weights, in fusion order (fts, vector, recency, salience): an arm whose weight
    is ≤ 0 is dropped, the lexical arm when the query has no FTS match (``match`` ``None``), the vector arm when
    there is no query vector."""
    arms: dict[Arm, float] = {}
    if match is not None and weights.fts > 0:
        arms["fts"] = weights.fts
    if qvec is not None and weights.vector > 0:
        arms["vector"] = weights.vector
    if weights.recency > 0:
        arms["recency"] = weights.recency
    if weights.salience > 0:
        arms["salience"] = weights.salience
    return arms


def query_tokens(query: str) -> list[str]:
    """Lowercased letter/digit runs of ``query`` minus :data:`STOP_WORDS`, first occurrence order, unique."""
    return list(dict.fromkeys(t for t in _TOKEN.findall(query.lower()) if t not in STOP_WORDS))


def fts_match(query: str) -> str | None:
    """FTS5 MATCH text: each token double-quoted, joined with ``OR``; ``None`` when no token survives."""
    tokens = query_tokens(query)
    return " OR ".join(f'"{t}"' for t in tokens) if tokens else None


def scope_sql(scope: Scope, alias: str = "f") -> tuple[str, Params]:
    """Return the one filter (over ``files AS <alias>``) of ``scope`` and its ``:s_*`` parameters. Whatever the
    scope, a stub (``files.stub``: a memory that says nothing but that a person exists, ``tree.people.is_stub``) is
    no search result (docs/retrieval.md §4.1)."""
    clauses: list[str] = [f"{alias}.stub = 0"]
    params: Params = {}
    if scope.as_of is not None:
        clauses.append(
            f"coalesce({alias}.valid_from, {alias}.event_at, {alias}.created_at) <= :s_as_of "
            f"AND ({alias}.valid_until IS NULL OR {alias}.valid_until > :s_as_of)"
        )
        params["s_as_of"] = scope.as_of
    elif not scope.include_archived:
        clauses.append(not_archived(alias) if not scope.absorbed else
                       f"{not_archived(alias)} OR EXISTS (SELECT 1 FROM edges {alias}_ae JOIN files {alias}_k "
                       f"ON {alias}_k.path = {alias}_ae.src_path WHERE {alias}_ae.dst_path = {alias}.path "
                       f"AND {alias}_ae.rel = 'supersedes' AND {alias}_ae.derived = 0 "
                       f"AND {scope_sql(replace(scope, absorbed=False), f'{alias}_k')[0]})")
    if scope.memory_types:
        names = [f":s_type{i}" for i in range(len(scope.memory_types))]
        clauses.append(f"{alias}.memory_type IN ({', '.join(names)})")
        params.update({n[1:]: t for n, t in zip(names, scope.memory_types, strict=True)})
    else:
        clauses.append(not_task(alias))
    if scope.workspace is not None:
        clauses.append(f"{alias}.workspace = :s_workspace")
        params["s_workspace"] = scope.workspace
    if scope.tags:
        names = [f":s_tag{i}" for i in range(len(scope.tags))]
        clauses.append(
            f"EXISTS (SELECT 1 FROM file_tags st WHERE st.path = {alias}.path AND st.tag IN ({', '.join(names)}))"
        )
        params.update({n[1:]: t for n, t in zip(names, scope.tags, strict=True)})
    if scope.entity is not None:
        clauses.append(
            f"EXISTS (SELECT 1 FROM file_entities se WHERE se.path = {alias}.path AND se.entity_key = :s_entity)"
        )
        params["s_entity"] = entity_key(scope.entity)
    return " AND ".join(f"({c})" for c in clauses), params


def eligible_paths_sql(scope: Scope) -> tuple[str, Params]:
    """``(path)`` of every ``files`` row the filter of :func:`scope_sql` admits: the paths any arm may rank under
    ``scope`` (the resident vector arm, index/resident.py, ranks among them)."""
    scope_filter, params = scope_sql(scope)
    return f"SELECT f.path FROM files f WHERE {scope_filter}", params


def _ranked(inner: str, order: str) -> str:
    return f"SELECT path, row_number() OVER (ORDER BY {order}) AS rank FROM ({inner})"


def _ranked_ties(inner: str, value: str) -> str:
    """``(path, rank)`` of a query-independent arm (docs/retrieval.md §4.2 "Ties"). ``inner`` gives ``(path,
    <value>)`` by ``<value> DESC, path`` with ``LIMIT :arm_limit + 1``. Files of equal value share a rank, the rank of
    the first of them (``rank()``: their path order says nothing); when the extra row came, the group tied with it is
    left out whole, so the limit never picks some files of a tie by path and leaves the others (every file tied: the
    arm is empty)."""
    return (
        f"SELECT path, rank FROM (SELECT path, {value}, rank() OVER (ORDER BY {value} DESC) AS rank, "
        f"count(*) OVER () AS n, last_value({value}) OVER (ORDER BY {value} DESC, path ROWS BETWEEN UNBOUNDED "
        f"PRECEDING AND UNBOUNDED FOLLOWING) AS edge FROM ({inner})) WHERE n <= :arm_limit OR {value} IS NOT edge"
    )


def fts_arm_sql(scope_filter: str) -> str:
    """Lexical arm: ``files_fts MATCH :match`` + scope, by ``bm25`` ascending, then the path the file had before it
    was archived (``origin_path``, the path itself for every active file), then path (docs/retrieval.md §4, §4.15:
    an absorbed row takes the slot it held while active)."""
    inner = (
        "SELECT f.path AS path, f.origin_path AS origin, bm25(files_fts) AS score FROM files_fts "
        f"JOIN files f ON f.id = files_fts.rowid WHERE files_fts MATCH :match AND {scope_filter} "
        "ORDER BY score, f.origin_path, f.path LIMIT :arm_limit"
    )
    return _ranked(inner, "score, origin, path")


def fts_candidates_sql(scope_filter: str) -> str:
    """The lexical arm in two steps (docs/retrieval.md §4.13): the ``:fts_first`` best matches by ``bm25`` alone
    (``rowid``, ``score``; no join, no scope), then those of them the scope admits, as :func:`fts_arm_sql` orders
    and cuts them. Rows ``(path, score, last)``: ``last`` is the ``:fts_first``-th score (NULL when fewer rows
    matched), so the caller knows whether a row it did not see could still rank."""
    return (
        f"WITH c AS ({_FTS_FIRST}), edge AS ({_FTS_EDGE}) "
        "SELECT f.path, c.score, (SELECT last FROM edge) FROM c CROSS JOIN files f ON f.id = c.id "
        f"WHERE {scope_filter} ORDER BY c.score, f.origin_path, f.path LIMIT :arm_limit"
    )


_FTS_FIRST = ("SELECT rowid AS id, bm25(files_fts) AS score FROM files_fts WHERE files_fts MATCH :match "
              "ORDER BY score LIMIT :fts_first")
_FTS_EDGE = "SELECT CASE WHEN count(*) < :fts_first THEN NULL ELSE max(score) END AS last FROM c"


def fts_edge_sql() -> str:
    """``(last)``: the ``:fts_first``-th best ``bm25`` score of ``:match``, NULL when fewer rows match (the
    ``last`` column of :func:`fts_candidates_sql` when the scope admitted none of them)."""
    return f"WITH c AS ({_FTS_FIRST}) {_FTS_EDGE}"


def vector_arm_sql(scope_filter: str) -> str:
    """Vector arm: per path the smallest cosine distance (sqlite-vec ``vec_distance_cosine``, exact) between
    ``:qvec`` and its chunks' vectors of space ``:space``; zero vectors (NULL distance) never rank (docs/retrieval.md
    §4)."""
    inner = (
        "SELECT f.path AS path, min(vec_distance_cosine(e.vec, :qvec)) AS d FROM files f "
        "JOIN chunks c ON c.path = f.path JOIN embeddings e ON e.chunk_id = c.chunk_id "
        f"WHERE e.model = :space AND {scope_filter} GROUP BY f.path HAVING d IS NOT NULL "
        "ORDER BY d, f.path LIMIT :arm_limit"
    )
    return _ranked(inner, "d, path")


def recency_arm_sql(scope_filter: str) -> str:
    """Recency arm: ``coalesce(event_at, updated_at)`` DESC (string order); equal instants share a rank and a tie
    cut by the limit is left out (:func:`_ranked_ties`, docs/retrieval.md §4.2)."""
    inner = (
        "SELECT f.path AS path, coalesce(f.event_at, f.updated_at) AS t FROM files f "
        f"WHERE {scope_filter} ORDER BY t DESC, f.path LIMIT :arm_limit + 1"
    )
    return _ranked_ties(inner, "t")


def salience_arm_sql(scope_filter: str) -> str:
    """Salience arm: ``exp(−0.01·hours since coalesce(last_accessed_at, updated_at)) + ln(1 + access_count) +
    max(outcome_score, 0)`` DESC; equal scores share a rank and a tie cut by the limit is left out
    (:func:`_ranked_ties`). Tasks never rank, even when the scope admits them (docs/retrieval.md §4). Stubs never rank
    in any arm (the scope filter); a fact is ranked wherever it is filed."""
    hours = "max(0.0, (julianday(:now) - julianday(coalesce(a.last_accessed_at, f.updated_at))) * 24.0)"
    score = (
        f"coalesce(exp(-{SALIENCE_DECAY_PER_HOUR!r} * {hours}), 0.0) + ln(1 + coalesce(a.access_count, 0)) "
        "+ max(coalesce(a.outcome_score, 0.0), 0.0)"
    )
    inner = (
        f"SELECT f.path AS path, {score} AS s FROM files f LEFT JOIN state.access a ON a.path = f.path "
        f"WHERE {scope_filter} AND {not_task('f')} "
        "ORDER BY s DESC, f.path LIMIT :arm_limit + 1"
    )
    return _ranked_ties(inner, "s")


Arm = Literal["fts", "vector", "recency", "salience"]
"""A retrieval arm (docs/retrieval.md §4.2 "Arms")."""

ARM_BUILDERS: dict[Arm, Callable[[str], str]] = {
    "fts": fts_arm_sql,
    "vector": vector_arm_sql,
    "recency": recency_arm_sql,
    "salience": salience_arm_sql,
}
"""Arm name → SQL builder, in fusion order."""


Ranking = Sequence[str | tuple[str, int]]
"""An arm's answer handed to :func:`fusion_sql`: paths best first (ranked by position from 1), or ``(path, rank)``
pairs as :func:`arm_ranks_sql` gives them (the query-independent arms, whose tied files share a rank)."""


def ranked_values_sql(paths: Ranking, prefix: str) -> tuple[str, Params]:
    """A ranked relation ``(path, rank)`` holding ``paths`` in order: a bare path is ranked by its position from 1, a
    ``(path, rank)`` pair keeps its rank (a ``VALUES`` list bound as ``:<prefix>0``, ``:<prefix>1``, …); no paths
    gives a relation with no rows."""
    if not paths:
        return "SELECT NULL AS path, NULL AS rank WHERE 0", {}
    pairs = [(p, i) if isinstance(p, str) else (p[0], int(p[1])) for i, p in enumerate(paths, start=1)]
    names = {f"{prefix}{i}": path for i, (path, _) in enumerate(pairs)}
    rows = ", ".join(f"(:{n}, {rank})" for n, (_, rank) in zip(names, pairs, strict=True))
    return f"SELECT column1 AS path, column2 AS rank FROM (VALUES {rows})", names


def rrf_sql(arm_names: Sequence[str]) -> str:
    """The RRF tail of :func:`fusion_sql`: over the ranked relations ``arm_names`` (each with columns ``path``,
    ``rank`` from 1; defined by the caller, e.g. as CTEs), ``Σ :w_<arm> / (rank + 60)`` per path, rows
    ``(path, score)`` ordered ``score DESC, path ASC``, ``LIMIT :limit`` (docs/retrieval.md §4.3 "Fusion"). The caller
    binds ``w_<arm>`` and ``limit``. ``domain.rrf.rrf_fuse`` is the same arithmetic in Python (compared in
    tests/index/test_sql_matches_domain.py)."""
    unions = " UNION ALL ".join(f"SELECT path, :w_{name} / (rank + {RRF_K}.0) AS w FROM {name}" for name in arm_names)
    return f"SELECT path, sum(w) AS score FROM ({unions}) GROUP BY path ORDER BY score DESC, path ASC LIMIT :limit"


def fusion_sql(
    arms: dict[Arm, float],
    scope: Scope,
    *,
    match: str | None = None,
    qvec: bytes | None = None,
    space: str | None = None,
    now: str | None = None,
    limit: int = 10,
    arm_limit: int = ARM_LIMIT,
    vector_ranks: Sequence[str] | None = None,
    given_ranks: Mapping[Arm, Ranking] | None = None,
) -> tuple[str, Params]:
    """One statement fusing ``arms`` (name → weight) by RRF: ``Σ w/(rank + 60)`` per path, ``score DESC, path
    ASC``, ``LIMIT :limit`` (docs/retrieval.md §4.3 "Fusion"). Returns ``(sql, params)``; rows are ``(path, score)``.

    The caller passes ``match`` for ``fts``, ``qvec``/``space`` for ``vector``, ``now`` for ``salience``. With
    ``vector_ranks`` (the vector arm's paths, best first, already scoped and cut, e.g. from index/resident.py) the
    ``vector`` relation is those paths ranked from 1 (:func:`ranked_values_sql`) instead of the SQL scan, and
    ``qvec``/``space`` are not used. ``given_ranks`` does the same for any arm (``vector_ranks`` is
    ``given_ranks={"vector": …}``): e.g. the query-independent ``recency`` and ``salience`` arms computed once by
    :func:`arm_ranks_sql`; the parameters of a given arm are not used.

    Raises:
        ValueError: no arm, a given ranking for an arm that is not fused, or ``vector`` given twice.
    """
    if not arms:
        raise ValueError("fusion needs at least one arm")
    given: dict[Arm, Ranking] = dict(given_ranks or {})
    if vector_ranks is not None:
        if "vector" in given:
            raise ValueError("the vector ranking is given twice")
        given["vector"] = vector_ranks
    if not set(given) <= set(arms):
        raise ValueError(f"rankings given without their arm: {sorted(set(given) - set(arms))}")
    scope_filter, params = scope_sql(scope)
    ctes = []
    for name in arms:
        if name in given:
            body, ranks = ranked_values_sql(given[name], f"r_{name}_")
            params.update(ranks)
        else:
            body = ARM_BUILDERS[name](scope_filter)
        ctes.append(f"{name} AS ({body})")
    sql = f"WITH {', '.join(ctes)} {rrf_sql(list(arms))}"
    params.update({f"w_{name}": float(w) for name, w in arms.items()})
    params.update({"limit": limit, "arm_limit": arm_limit})
    params.update(_arm_params({a for a in arms if a not in given}, match=match, qvec=qvec, space=space, now=now))
    return sql, params


def _arm_params(arms: Collection[Arm], *, match: str | None, qvec: bytes | None, space: str | None,
                now: str | None) -> Params:
    """The parameters the SQL of ``arms`` reads besides the scope's and ``:arm_limit``."""
    params: Params = {}
    if "fts" in arms:
        params["match"] = match
    if "vector" in arms:
        params["qvec"] = qvec
        params["space"] = space
    if "salience" in arms:
        params["now"] = now
    return params


def arm_ranks_sql(arm: Arm, scope: Scope, *, match: str | None = None, qvec: bytes | None = None,
                  space: str | None = None, now: str | None = None, arm_limit: int = ARM_LIMIT) -> tuple[str, Params]:
    """``(path, rank)`` of one arm alone under ``scope``, best first (rank, then path): the rows its CTE gives inside
    :func:`fusion_sql`, so the ranking can be computed once and handed back as ``given_ranks``."""
    scope_filter, params = scope_sql(scope)
    params["arm_limit"] = arm_limit
    params.update(_arm_params((arm,), match=match, qvec=qvec, space=space, now=now))
    return f"SELECT path, rank FROM ({ARM_BUILDERS[arm](scope_filter)}) ORDER BY rank, path", params


def hydrate_sql(paths: list[str]) -> tuple[str, Params]:
    """Hit columns ``(path, title, gist, memory_type, confidence, updated_at)`` of ``paths``."""
    names = {f"p{i}": p for i, p in enumerate(paths)}
    holders = ", ".join(f":{n}" for n in names)
    return (
        f"SELECT path, title, gist, memory_type, confidence, updated_at FROM files WHERE path IN ({holders})",
        names,
    )


def entities_sql(paths: list[str]) -> tuple[str, Params]:
    """``(path, "type:name")`` of ``paths``, sorted, unique."""
    names = {f"p{i}": p for i, p in enumerate(paths)}
    holders = ", ".join(f":{n}" for n in names)
    return (
        "SELECT DISTINCT path, entity_type || ':' || entity_name AS e FROM file_entities "
        f"WHERE path IN ({holders}) ORDER BY path, e",
        names,
    )


def superseded_by_sql(paths: list[str]) -> tuple[str, Params]:
    """``(dst_path, src_path)`` of authored ``supersedes`` edges into ``paths``, newest source first (by the
    source file's ``updated_at``, then the edge's ``created_at``), ties ``src_path`` ASC."""
    names = {f"p{i}": p for i, p in enumerate(paths)}
    holders = ", ".join(f":{n}" for n in names)
    return (
        "SELECT e.dst_path, e.src_path FROM edges e LEFT JOIN files s ON s.path = e.src_path "
        f"WHERE e.rel = 'supersedes' AND e.derived = 0 AND e.dst_path IN ({holders}) "
        "ORDER BY coalesce(s.updated_at, e.created_at) DESC, e.created_at DESC, e.src_path ASC",
        names,
    )


def absorbed_by_sql(paths: list[str], scope: Scope) -> tuple[str, Params]:
    """``(dst_path, src_path)`` of the authored ``supersedes`` edges from a file ``scope`` admits (``absorbed``
    off) into the archived files among ``paths``: each absorbed memory and its keeper, ``dst_path``, ``src_path``
    ASC (the first row of a path is its keeper when two files supersede it)."""
    names: Params = {f"p{i}": p for i, p in enumerate(paths)}
    holders = ", ".join(f":{n}" for n in names)
    keeper, params = scope_sql(replace(scope, absorbed=False), "k")
    return (
        "SELECT e.dst_path, e.src_path FROM edges e JOIN files k ON k.path = e.src_path "
        f"JOIN files a ON a.path = e.dst_path AND a.archived = 1 "
        f"WHERE e.rel = 'supersedes' AND e.derived = 0 AND e.dst_path IN ({holders}) AND {keeper} "
        "ORDER BY e.dst_path, e.src_path",
        {**params, **names},
    )


def snippet_sql(paths: list[str], *, with_vector: bool) -> tuple[str, Params]:
    """``(path, ordinal, text, distance)`` of every chunk of ``paths``; ``distance`` against ``:qvec`` in
    ``:space`` when ``with_vector`` (else NULL). The caller sets ``qvec``/``space``."""
    names: Params = {f"p{i}": p for i, p in enumerate(paths)}
    holders = ", ".join(f":{n}" for n in names)
    dist = (
        "(SELECT vec_distance_cosine(e.vec, :qvec) FROM embeddings e WHERE e.chunk_id = c.chunk_id "
        "AND e.model = :space)"
        if with_vector
        else "NULL"
    )
    return (
        f"SELECT c.path, c.ordinal, c.text, {dist} FROM chunks c WHERE c.path IN ({holders}) "
        "ORDER BY c.path, c.ordinal",
        names,
    )


def file_vectors_sql(paths: list[str]) -> tuple[str, Params]:
    """``(path, vec)`` of every chunk vector of ``paths`` in space ``:space`` (the caller sets it), by path and
    ordinal; MMR averages them into one vector per file."""
    names: Params = {f"p{i}": p for i, p in enumerate(paths)}
    holders = ", ".join(f":{n}" for n in names)
    return (  # CROSS JOIN: chunks of the paths first; else SQLite walks every vector of the space (all blobs)
        "SELECT c.path, e.vec FROM chunks c CROSS JOIN embeddings e ON e.chunk_id = c.chunk_id "
        f"WHERE e.model = :space AND c.path IN ({holders}) ORDER BY c.path, c.ordinal",
        names,
    )
