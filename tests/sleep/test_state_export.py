"""state-export: the sidecar bytes, written only when they change, nothing on a dry run."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.sleep.phases import state_export
from git_memhtml.tree.layout import ACCESS_SIDECAR
from tests.sleep.sleep_corpus_helpers import make_env, make_repo, memory


def _seed(env: PhaseEnv) -> None:
    env.db.executemany(
        "INSERT INTO state.access(path, access_count, reinforcement_count, outcome_score, last_accessed_at, "
        "last_reinforced_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            ("areas/inbox/b.html", 2, 0, -0.0, "2026-03-01T00:00:00Z", None, "2026-03-01T00:00:00Z"),
            ("areas/inbox/a.html", 5, 1, 0.123456, "2026-03-02T00:00:00Z", "2026-03-02T00:00:00Z",
             "2026-03-02T00:00:00Z"),
        ],
    )


EXPECTED = (
    '{"path":"areas/inbox/a.html","accessCount":5,"reinforcementCount":1,"outcomeScore":0.1235,'
    '"lastAccessedAt":"2026-03-02T00:00:00Z","lastReinforcedAt":"2026-03-02T00:00:00Z",'
    '"updatedAt":"2026-03-02T00:00:00Z"}\n'
    '{"path":"areas/inbox/b.html","accessCount":2,"reinforcementCount":0,"outcomeScore":0,'
    '"lastAccessedAt":"2026-03-01T00:00:00Z","lastReinforcedAt":null,"updatedAt":"2026-03-01T00:00:00Z"}\n'
)


def test_export_bytes_then_unchanged_second_night(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, {"areas/inbox/a.html": memory("A fact.")}))
    _seed(env)
    outcome = state_export.run(env)
    assert (env.repo.root / ACCESS_SIDECAR).read_text() == EXPECTED
    assert outcome.counts.wire() == {"rows": 2, "bytes": len(EXPECTED.encode()), "written": 1}
    assert outcome.subject == "export 2 access rows to the committed sidecar"
    assert env.repo.commit("export") is not None
    again = state_export.run(env)
    assert again.counts.wire()["written"] == 0
    assert env.repo.commit("nothing") is None


def test_empty_plane_gives_empty_file_and_dry_run_writes_nothing(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, {"areas/inbox/a.html": memory("A fact.")}), dry_run=True)
    _seed(env)
    assert state_export.run(env).counts.wire()["written"] == 1
    assert not (env.repo.root / ACCESS_SIDECAR).exists()
    env = replace(env, dry_run=False)
    env.db.execute("DELETE FROM state.access")
    state_export.run(env)
    assert (env.repo.root / ACCESS_SIDECAR).read_bytes() == b""
