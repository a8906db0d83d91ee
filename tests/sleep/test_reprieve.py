"""reprieve: a TTL-passed important memory is extended 14 days; a weak or thrice-reprieved one is archived."""

from __future__ import annotations

from pathlib import Path

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.editors import get_meta
from git_memhtml.document.template import render_memory
from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.sleep.phases import reprieve
from git_memhtml.sleep.phases.reprieve import extended_until
from tests.sleep.sleep_corpus_helpers import AT, make_env, make_repo, tree_files

OLD = "2025-06-01T00:00:00Z"
PASSED = "2026-03-01T00:00:00Z"


def _mem(claim: str, *, importance: int, valid_until: str | None, reprieves: int = 0, kind: str = "semantic") -> str:
    return render_memory(MemoryDraft(
        title=claim[:20], memory_type=kind, claim=claim, importance=importance, valid_until=valid_until,
        extra_metas=[("reprieves", str(reprieves))] if reprieves else (),
    ), now=OLD)


def _files() -> dict[str, str]:
    return {
        "areas/inbox/important.html": _mem("The on-call rota changes in March.", importance=9, valid_until=PASSED),
        "areas/inbox/weak.html": _mem("A colleague mentioned a cafe.", importance=1, valid_until=PASSED),
        "areas/inbox/spent.html": _mem("The VPN hostname is temporary.", importance=10, valid_until=PASSED,
                                       reprieves=3),
        "areas/inbox/future.html": _mem("The office closes in summer.", importance=1, valid_until="2027-01-01"),
        "areas/arcs/arc.html": _mem("An arc of events.", importance=1, valid_until=PASSED, kind="arc"),
    }


def _access(env: PhaseEnv, path: str, count: int) -> None:
    env.db.execute(
        "INSERT INTO state.access(path, access_count, reinforcement_count, outcome_score, last_accessed_at, "
        "updated_at) VALUES (?, ?, 0, 0, ?, ?)",
        (path, count, "2026-03-09T00:00:00Z", "2026-03-09T00:00:00Z"),
    )


def test_reprieve_extends_important_and_archives_weak_and_spent(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, _files()))
    _access(env, "areas/inbox/important.html", 3)
    _access(env, "areas/inbox/spent.html", 3)
    outcome = reprieve.run(env)
    assert outcome.counts.wire() == {"ttlPassed": 3, "reprieved": 1, "expired": 2, "maxReprieves": 3}
    assert outcome.subject == "reprieve 1, expire 2 TTL-passed memories"
    root = env.repo.root
    kept = (root / "areas/inbox/important.html").read_text()
    assert get_meta(kept, "valid-until") == "2026-03-24T00:00:00Z"
    assert get_meta(kept, "reprieves") == "1"
    assert get_meta(kept, "updated") == AT
    assert not (root / "areas/inbox/weak.html").exists()
    assert get_meta((root / "archive/2026/areas/inbox/weak.html").read_text(), "status") == "archived"
    assert (root / "archive/2026/areas/inbox/spent.html").exists()  # a fourth reprieve is refused
    assert (root / "areas/inbox/future.html").exists() and (root / "areas/arcs/arc.html").exists()


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, _files()), dry_run=True)
    before = tree_files(env.repo)
    outcome = reprieve.run(env)
    assert outcome.counts.wire()["ttlPassed"] == 3 and outcome.counts.wire()["expired"] == 3
    assert tree_files(env.repo) == before


def test_extended_until_is_run_date_plus_14_days() -> None:
    assert extended_until("2026-12-25T00:00:00Z") == "2027-01-08T00:00:00Z"
