"""The grouping rules of deep compress over given inputs (``sleep/phases/deep_grouping.py``, docs/deep-sleep.md §2):
one group per memory, most claimants first, hubs and markup-derived types never group, the member cap."""

from __future__ import annotations

from git_memhtml.index.corpus import CorpusRow
from git_memhtml.sleep.phases.deep_grouping import HUB_CLAIMANTS, group_candidates, widened_communities
from git_memhtml.sleep.phases.scoring import Scored


def scored(path: str) -> Scored:
    row = CorpusRow(path, "semantic", path, path, path, "h" + path, 1.0, 5, 3, "2026-01-01T00:00:00Z",
                    "2026-01-01T00:00:00Z", None, 0)
    return Scored(row=row, score=0.5, band="compress")


def paths_of(grouping: object) -> list[tuple[str, str, list[str]]]:
    return [(g.kind, g.label, [s.row.path for s in g.members]) for g in grouping.groups]  # type: ignore[attr-defined]


def test_a_memory_joins_one_group_the_key_with_most_candidates_first() -> None:
    rows = [scored(p) for p in ("a", "b", "c", "d")]
    claims = {"svc:small": ["a", "b"], "svc:big": ["b", "c", "d"]}
    out = group_candidates(rows, {}, claims, limit=2000)
    assert paths_of(out) == [("entity", "svc:big", ["b", "c", "d"])]  # a alone is left: no group of one
    assert out.entity_groups == 1 and out.communities == 0


def test_communities_come_first_and_their_members_never_join_an_entity_group() -> None:
    rows = [scored(p) for p in ("a", "b", "c", "d", "e")]
    communities: dict[str, str | None] = {"a": "a", "b": "a", "c": "a", "d": None, "e": None}
    out = group_candidates(rows, communities, {"svc:x": ["a", "d", "e"]}, limit=2000)
    assert paths_of(out) == [("community", "a", ["a", "b", "c"]), ("entity", "svc:x", ["d", "e"])]


def test_hubs_and_markup_types_form_no_group_and_hubs_are_counted_once() -> None:
    rows = [scored(p) for p in ("a", "b")]
    others = [f"z{i:03d}" for i in range(HUB_CLAIMANTS - 2)]
    claims = {"person:sam": ["a", "b", *others, "zz"], "lang:de": ["a", "b"], "concept:latency": ["a", "b"],
              "svc:edge": ["a", "b", *others]}  # 65 claimants vs 64
    out = group_candidates(rows, {}, claims, limit=2000)
    assert paths_of(out) == [("entity", "svc:edge", ["a", "b"])] and out.hubs_skipped == 1


def test_the_member_cap_cuts_the_last_group() -> None:
    rows = [scored(f"m{i}") for i in range(5)]
    out = group_candidates(rows, {}, {"svc:a": [r.row.path for r in rows]}, limit=3)
    assert paths_of(out) == [("entity", "svc:a", ["m0", "m1", "m2"])]


def test_the_band_joins_what_the_plain_graph_leaves_apart() -> None:
    nodes = ["a", "b", "c", "d"]
    plain = widened_communities(nodes, [("a", "relates_to", "b", 1, 0.9)], [])
    assert set(plain.values()) == {None}
    widened = widened_communities(nodes, [("a", "relates_to", "b", 1, 0.9)], [("b", "c", 0.8), ("x", "a", 0.8)])
    assert widened == {"a": "a", "b": "a", "c": "a", "d": None}  # a band pair to a path not active is ignored
