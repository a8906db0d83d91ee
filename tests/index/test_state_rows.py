"""The named state-plane queries: run and phase rows, landings and applied ledgers, corroboration, access seeds."""

from __future__ import annotations

import pytest

from git_memhtml.domain.reinforce import AccessState
from git_memhtml.errors import StorageError
from git_memhtml.index import runs
from git_memhtml.index.access import AccessSeed, access_rows, seed_access
from git_memhtml.index.corroboration import bump_entity, pending_entity_merges, promote_edge, promote_entity
from git_memhtml.index.db import IndexDB
from git_memhtml.index.landings import (
    LandingRow,
    applied_ledgers,
    landing_rows,
    ledger_applied,
    mark_ledger_applied,
    record_landing,
)

T0, T1, T2 = "2026-03-01T00:00:00Z", "2026-03-02T00:00:00Z", "2026-03-03T00:00:00Z"


def _run(run_id: str, status: str = "running", *, started: str = T0, dry: bool = False) -> runs.RunRow:
    return runs.RunRow(run_id, run_id, "base0", None, status, dry, started, None)


def test_run_rows_round_trip_and_order(db: IndexDB) -> None:
    runs.upsert_run(db, _run("sleep/b", started=T1), owner="host:1")
    runs.upsert_run(db, _run("sleep/a", "interrupted", started=T1), owner="host:2")
    runs.upsert_run(db, _run("sleep/c", "review", started=T2), owner="host:3")
    runs.upsert_run(db, _run("sleep/d", started=T2, dry=True), owner="host:4")
    assert runs.get_run(db, "sleep/a") == _run("sleep/a", "interrupted", started=T1)
    assert runs.get_run(db, "sleep/none") is None
    assert [r.run_id for r in runs.all_runs(db)] == ["sleep/c", "sleep/b", "sleep/a"]
    assert [r.run_id for r in runs.unfinished_runs(db)] == ["sleep/d", "sleep/b", "sleep/a"]
    assert {r.run_id for r in runs.unfinished_runs_stored(db)} == {"sleep/a", "sleep/b", "sleep/d"}
    assert [r.run_id for r in runs.running_runs(db)] == ["sleep/b", "sleep/d"]
    assert runs.running_runs(db)[1].dry_run is True
    assert sorted(runs.running_owners(db), key=lambda o: o.run_id) == [
        runs.RunOwner("sleep/b", "host:1"), runs.RunOwner("sleep/d", "host:4")]
    latest = runs.latest_run(db)
    assert latest is not None and latest.run_id == "sleep/c"
    latest_dry = runs.latest_run(db, include_dry=True)
    assert latest_dry is not None and latest_dry.run_id == "sleep/d"
    assert runs.run_owner(db, "sleep/c") == "host:3" and runs.run_owner(db, "sleep/x") is None


def test_upsert_keeps_base_and_start_and_set_status_keeps_head_unless_given(db: IndexDB) -> None:
    runs.upsert_run(db, _run("sleep/a"), owner="host:1")
    runs.upsert_run(db, runs.RunRow("sleep/a", "other", "base1", "head1", "review", False, T2, T2), owner="host:9")
    row = runs.get_run(db, "sleep/a")
    assert row == runs.RunRow("sleep/a", "sleep/a", "base0", "head1", "review", False, T0, T2)
    assert runs.run_owner(db, "sleep/a") == "host:9"
    runs.set_status(db, "sleep/a", "merged", head_sha=None, now=T1)
    assert runs.get_run(db, "sleep/a") == runs.RunRow("sleep/a", "sleep/a", "base0", "head1", "merged", False, T0, T1)
    runs.set_status(db, "sleep/a", "merged", head_sha="head2", now=T2)
    row = runs.get_run(db, "sleep/a")
    assert row is not None and row.head_sha == "head2"
    assert runs.merged_runs(db) == {"sleep/a"}


def test_phase_rows_by_ordinal_replace_and_rebase(db: IndexDB) -> None:
    runs.upsert_run(db, _run("sleep/a"), owner="h:1")
    later = runs.PhaseRow("report", "ok", '{"n": 1}', "c2", 0, None)
    first = runs.PhaseRow("preflight", "ok", "{}", "c1", 2, "note")
    runs.upsert_phase(db, "sleep/a", later, ordinal=16, started_at=T0, ended_at=T1)
    runs.upsert_phase(db, "sleep/a", first, ordinal=0, started_at=T0, ended_at=T1)
    assert runs.phase_rows(db, "sleep/a") == [first, later]
    failed = runs.PhaseRow("report", "failed", '{"n": 2}', None, 1, "boom")
    runs.upsert_phase(db, "sleep/a", failed, ordinal=16, started_at=T1, ended_at=T2)
    assert runs.phase_rows(db, "sleep/a") == [first, failed]
    runs.rebase_run(db, "sleep/a", base_sha="base9", head_sha="head9", shas={"c1": "n1", "zz": "n2"})
    row = runs.get_run(db, "sleep/a")
    assert row is not None and (row.base_sha, row.head_sha) == ("base9", "head9")
    assert [p.commit_sha for p in runs.phase_rows(db, "sleep/a")] == ["n1", None]
    assert runs.phase_rows(db, "sleep/none") == []


def test_landings_first_wins_and_ledgers_apply_once(db: IndexDB) -> None:
    assert record_landing(db, "sleep/a", "squash", "s1", now=T0) is True
    assert record_landing(db, "sleep/a", "sleep-merge", "s2", now=T1) is False
    assert record_landing(db, "sleep/b", "fast-forward", None, now=T1) is True
    assert landing_rows(db) == {"sleep/a": LandingRow("sleep/a", "squash", "s1", T0),
                                "sleep/b": LandingRow("sleep/b", "fast-forward", None, T1)}
    with pytest.raises(ValueError, match="unknown landing"):
        record_landing(db, "sleep/c", "rebase", None, now=T0)
    assert not ledger_applied(db, "sleep/a") and applied_ledgers(db) == set()
    mark_ledger_applied(db, "sleep/a", now=T0)
    assert ledger_applied(db, "sleep/a") and applied_ledgers(db) == {"sleep/a"}
    with pytest.raises(StorageError):
        mark_ledger_applied(db, "sleep/a", now=T1)


def test_corroboration_promotions_match_only_their_key(db: IndexDB) -> None:
    db.execute("INSERT INTO state.entity_corroboration (entity_type, alias_name, canonical_name, updated_at) "
               "VALUES ('person', 'Pri', 'Priya', ?), ('person', 'Bo', 'Bob', ?)", (T0, T0))
    db.execute("INSERT INTO state.edge_corroboration (src_path, rel, dst_path, updated_at) VALUES (?, ?, ?, ?)",
               ("a.html", "supports", "b.html", T0))
    assert pending_entity_merges(db) == 2
    assert promote_entity(db, "person", "Pri", "Priya", now=T1) == 1
    assert promote_entity(db, None, "Pri", "Priya", now=T1) == 0
    assert pending_entity_merges(db) == 1
    assert promote_edge(db, "a.html", "supports", "b.html", now=T2) == 1
    assert promote_edge(db, "a.html", 3, "b.html", now=T2) == 0
    assert db.query("SELECT promoted, confirmed, updated_at FROM state.edge_corroboration") == [(1, 1, T2)]


def test_a_promotion_this_clone_never_detected_is_recorded(db: IndexDB) -> None:
    """A teammate's landed promotion: no row here yet, so the row is made, promoted, with the two looks it implies."""
    assert promote_entity(db, "person", "Pri", "Priya Raman", now=T1) == 1
    assert promote_edge(db, "a.html", "contradicts", "b.html", now=T1) == 1
    assert db.query("SELECT detections, confirmed, promoted, updated_at FROM state.entity_corroboration") == [
        (2, 1, 1, T1)]
    assert db.query("SELECT detections, confirmed, promoted FROM state.edge_corroboration") == [(2, 1, 1)]
    assert pending_entity_merges(db) == 0


def test_an_entity_merge_is_one_pair_whichever_way_it_points(db: IndexDB) -> None:
    """Issue 27 item 3: the survivor is the counts' decision when a merge is applied, so a corpus change that turns the
    majority between two names is the second look at the same merge, not the first look at another."""
    first = bump_entity(db, "person", "caroline m.", "caroline", corpus="c1", now=T0)
    second = bump_entity(db, "person", "caroline", "caroline m.", corpus="c2", now=T1)
    assert (first.detections, second.detections, second.counted) == (1, 2, True)
    assert db.query("SELECT alias_name, canonical_name, detections FROM state.entity_corroboration") == [
        ("caroline", "caroline m.", 2)]
    assert promote_entity(db, "person", "caroline m.", "caroline", now=T2) == 1  # the ledger mark's direction
    assert pending_entity_merges(db) == 0


def test_a_row_detected_before_the_pair_rule_keeps_its_direction(db: IndexDB) -> None:
    db.execute("INSERT INTO state.entity_corroboration (entity_type, alias_name, canonical_name, detections, "
               "updated_at, corpus_digest) VALUES ('person', 'laith al-saadoon', 'laith', 1, ?, 'c1')", (T0,))
    seen = bump_entity(db, "person", "laith", "laith al-saadoon", corpus="c2", now=T1)
    assert seen.detections == 2
    assert db.query("SELECT alias_name, canonical_name, detections FROM state.entity_corroboration") == [
        ("laith al-saadoon", "laith", 2)]
    assert promote_entity(db, "person", "laith", "laith al-saadoon", now=T2) == 1
    assert db.query("SELECT count(*), sum(promoted) FROM state.entity_corroboration") == [(1, 1)]


def _Seed(path: str, access_count: int, reinforcement_count: int, outcome_score: float,
          last_accessed_at: str | None, last_reinforced_at: str | None, updated_at: str) -> AccessSeed:
    return AccessSeed(access_count, reinforcement_count, outcome_score, last_accessed_at, last_reinforced_at,
                      path=path, updated_at=updated_at)


def test_seeded_access_rows_read_back_whole_and_replace(db: IndexDB) -> None:
    seed_access(db, [_Seed("a.html", 3, 1, 0.5, T1, T1, T1), _Seed("b.html", 0, 0, 0.0, None, None, T0)])
    seed_access(db, [_Seed("a.html", 4, 2, -0.25, T2, T1, T2)])
    assert access_rows(db) == {"a.html": AccessState(4, 2, -0.25, T2, T1), "b.html": AccessState(0, 0, 0.0, None, None)}
    seed_access(db, [])
    assert len(access_rows(db)) == 2
