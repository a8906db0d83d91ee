"""relationship-mining: derived relates_to edges replaced atomically in the index, tasks excluded, no writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.model import Link
from git_memhtml.document.template import render_memory
from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.sleep.phases import relationship_mining
from tests.sleep.sleep_corpus_helpers import AT, make_env, make_repo, memory, tree_files

TEXT = "the nightly backup job for the billing database copies snapshots to the cold storage bucket"


def _files() -> dict[str, str]:
    return {
        "areas/inbox/a.html": memory(TEXT + "."),
        "areas/inbox/b.html": memory(TEXT + " every night."),
        "areas/inbox/c.html": memory("Coffee beans are stored in the left cupboard near the window."),
        "areas/inbox/d.html": render_memory(MemoryDraft(
            title="d", memory_type="semantic", claim=TEXT + " at midnight.",
            links=[Link("relates_to", "/areas/inbox/a.html")],
        ), now="2026-01-01T00:00:00Z"),
        "areas/inbox/tasks/t.html": render_memory(MemoryDraft(
            title="t", memory_type="task", claim=TEXT + " daily."
        ), now="2026-01-01T00:00:00Z"),
    }


def _derived(env: PhaseEnv) -> list[tuple[Any, ...]]:
    return env.db.query(
        "SELECT src_path, rel, dst_path, strength >= 0.85, sleep_run, created_at FROM edges "
        "WHERE derived = 1 ORDER BY src_path, dst_path"
    )


def test_mines_pairs_replaces_previous_edges_and_never_touches_the_tree(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, _files()))
    env.db.execute(
        "INSERT INTO edges(src_path, rel, dst_path, edge_class, derived, strength, provenance, sleep_run, "
        "created_at) VALUES ('areas/inbox/c.html', 'relates_to', 'areas/inbox/b.html', 'memory', 1, 0.9, "
        "'sleep', 'sleep/old', '2026-01-01T00:00:00Z')"
    )
    before = tree_files(env.repo)
    outcome = relationship_mining.run(env)
    assert outcome.counts.wire()["mined"] == outcome.counts.wire()["candidates"] == 3
    assert outcome.subject == ""
    rows = _derived(env)
    pairs = {(r[0], r[2]) for r in rows}
    assert pairs == {("areas/inbox/a.html", "areas/inbox/b.html"), ("areas/inbox/a.html", "areas/inbox/d.html"),
                     ("areas/inbox/b.html", "areas/inbox/d.html")}
    assert all(r[1] == "relates_to" and r[3] == 1 and r[4] == env.run_id and r[5] == AT for r in rows)
    assert not any("tasks/" in r[0] or "tasks/" in r[2] for r in rows)  # the graph firewall
    # the authored d → a edge survives as authored
    assert env.db.query("SELECT derived FROM edges WHERE src_path = 'areas/inbox/d.html'") == [(0,)]
    assert tree_files(env.repo) == before and env.repo.commit("nothing") is None


def test_dry_run_writes_no_edge(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, _files()), dry_run=True)
    assert relationship_mining.run(env).counts.wire()["mined"] == 3
    assert _derived(env) == []


def test_no_vectors_replaces_nothing(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, _files()), embed=False)
    outcome = relationship_mining.run(env)
    assert outcome.detail == "no vectors" and outcome.counts.wire()["mined"] == 0
