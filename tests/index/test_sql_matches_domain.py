"""The SQL of the index and the pure Python of ``domain`` state the same arithmetic twice; these differential
tests hold them to one answer on random inputs, through a real SQLite index (issue 9 item 5).

- RRF: ``index.retrieval_sql.rrf_sql`` (the fusion tail every search runs) against ``domain.rrf.rrf_fuse``.
- Reinforcement: ``index.access.reinforce`` (the sole writer of ``state.access``) against
  ``domain.reinforce.apply_reinforcement``, bump by bump, returned paths and stored rows alike.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from git_memhtml.domain.reinforce import SIGNAL_VALUES, AccessState, Signal, apply_reinforcement
from git_memhtml.domain.rrf import rrf_fuse
from git_memhtml.index.access import reinforce
from git_memhtml.index.db import open_index
from git_memhtml.index.retrieval_sql import ARM_BUILDERS, rrf_sql

PATHS = tuple(f"areas/p{i}.html" for i in range(12))
"""A small path alphabet, so arms share paths (the case fusion exists for)."""

ranking = st.lists(st.sampled_from(PATHS), unique=True, max_size=len(PATHS))
weight = st.floats(min_value=0.0, max_value=3.0, allow_nan=False, allow_infinity=False)
arms_and_weights = st.dictionaries(st.sampled_from(sorted(ARM_BUILDERS)), st.tuples(ranking, weight), min_size=1)


def _sql_fuse(arms: dict[str, tuple[list[str], float]]) -> list[tuple[str, float]]:
    """Run the shipped fusion tail over ``arms`` given as VALUES relations, in a real (in-memory) index."""
    params: dict[str, Any] = {"limit": len(PATHS) + 1}
    ctes = []
    for name, (paths, w) in arms.items():
        params[f"w_{name}"] = w
        rows = []
        for rank, path in enumerate(paths, start=1):
            params[f"{name}_{rank}"] = path
            rows.append(f"(:{name}_{rank}, {rank})")
        body = f"VALUES {', '.join(rows)}" if rows else "SELECT NULL, NULL WHERE 0"
        ctes.append(f"{name}(path, rank) AS ({body})")
    db = open_index(":memory:", ":memory:")
    try:
        return [(str(p), float(s)) for p, s in db.query(f"WITH {', '.join(ctes)} {rrf_sql(list(arms))}", params)]
    finally:
        db.close()


@settings(max_examples=150, deadline=None, database=None)
@given(arms_and_weights)
def test_sql_fusion_equals_rrf_fuse(arms: dict[str, tuple[list[str], float]]) -> None:
    expected = rrf_fuse({name: paths for name, (paths, _) in arms.items()}, {name: w for name, (_, w) in arms.items()})
    got = _sql_fuse(arms)
    assert sorted(p for p, _ in got) == sorted(p for p, _ in expected)
    score = dict(expected)
    for (path, sql_score), (_, py_score) in zip(got, expected, strict=True):
        # the same score per path, and position by position the same score: the order agrees up to paths whose
        # sums differ only in the last bits (SQLite and Python may add the arms in another order)
        assert math.isclose(sql_score, score[path], rel_tol=1e-12, abs_tol=1e-15)
        assert math.isclose(score[path], py_score, rel_tol=1e-12, abs_tol=1e-15)


def test_sql_fusion_breaks_ties_by_path_like_rrf_fuse() -> None:
    arms = {"fts": (["areas/p2.html", "areas/p1.html"], 1.0), "vector": (["areas/p1.html", "areas/p2.html"], 1.0)}
    expected = rrf_fuse({n: p for n, (p, _) in arms.items()}, {n: w for n, (_, w) in arms.items()})
    assert [p for p, _ in _sql_fuse(arms)] == [p for p, _ in expected] == ["areas/p1.html", "areas/p2.html"]


T0 = datetime(2026, 1, 1, tzinfo=UTC)
step = st.tuples(
    st.lists(st.sampled_from(("a", "b", "c")), min_size=1, max_size=4),
    st.sampled_from(tuple(SIGNAL_VALUES)),
    st.one_of(st.sampled_from((0, 1, 899, 900, 901)), st.integers(min_value=0, max_value=4000)),
)


def _stored(db: Any) -> dict[str, AccessState]:
    rows = db.query("SELECT path, access_count, reinforcement_count, outcome_score, last_accessed_at, "
                    "last_reinforced_at FROM state.access")
    return {r[0]: AccessState(int(r[1]), int(r[2]), float(r[3]), r[4], r[5]) for r in rows}


@settings(max_examples=150, deadline=None, database=None)
@given(st.lists(step, min_size=1, max_size=25))
def test_sql_reinforcement_equals_apply_reinforcement(steps: list[tuple[list[str], Signal, int]]) -> None:
    db = open_index(":memory:", ":memory:")
    try:
        model: dict[str, AccessState] = {}
        clock = T0
        for paths, signal, seconds in steps:
            clock += timedelta(seconds=seconds)
            now = clock.strftime("%Y-%m-%dT%H:%M:%SZ")
            expected_bumped = []
            for path in dict.fromkeys(paths):
                after = apply_reinforcement(model.get(path), signal, now)
                if after is not None:
                    model[path] = after
                    expected_bumped.append(path)
            assert reinforce(db, paths, signal=signal, now=now) == tuple(expected_bumped)
            assert _stored(db) == model
    finally:
        db.close()
