"""retention-triage: the evict band is archived, keep/compress, arcs and tasks stay; a second night moves nothing."""

from __future__ import annotations

from pathlib import Path

from sleep_corpus_helpers import AT, commit_and_reindex, make_env, make_repo, tree_files

from git_memhtml.document.editors import get_meta
from git_memhtml.document.model import Link
from git_memhtml.document.template import render_memory
from git_memhtml.sleep.phases import retention_triage
from git_memhtml.sleep.scoring import retention_pass

OLD = "2025-01-01T00:00:00Z"
LONG = " ".join(f"word{i}" for i in range(120))


def _files() -> dict[str, str]:
    return {
        # stale, short, unconfident episodic record: evict band
        "areas/inbox/stale.html": render_memory(
            title="stale", memory_type="episodic", now=OLD, claim="Lunch was late.", confidence=0.1
        ),
        # an arc with the same weak signals is never evicted by triage
        "areas/arcs/stale-arc.html": render_memory(
            title="arc", memory_type="arc", now=OLD, claim="An old arc.", confidence=0.1
        ),
        # a fresh, confident, dense semantic fact: not evicted
        "resources/infra/fresh.html": render_memory(
            title="fresh", memory_type="semantic", now=AT, claim="The cluster runs three replicas.",
            body=[LONG],
        ),
        "areas/inbox/tasks/old-task.html": render_memory(
            title="task", memory_type="task", now=OLD, claim="Clean the attic."
        ),
    }


def test_evict_band_memory_is_archived(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, _files()))
    scored = {s.row.path: s for s in retention_pass(env.db, at=env.at, root=env.repo.root)}
    assert "areas/inbox/tasks/old-task.html" not in scored  # tasks are never scored
    assert scored["areas/inbox/stale.html"].band == "evict"
    assert scored["areas/arcs/stale-arc.html"].band == "evict"
    assert scored["resources/infra/fresh.html"].band != "evict"
    outcome = retention_triage.run(env)
    assert outcome.counts["scored"] == 3 and outcome.counts["evict"] == 2 and outcome.counts["evicted"] == 1
    assert outcome.subject == "evict 1 memories below the retention floor"
    root = env.repo.root
    assert not (root / "areas/inbox/stale.html").exists()
    archived = (root / "archive/2026/areas/inbox/stale.html").read_text()
    assert get_meta(archived, "status") == "archived" and get_meta(archived, "archived") == AT
    assert (root / "areas/arcs/stale-arc.html").exists()
    assert (root / "resources/infra/fresh.html").exists()
    assert (root / "areas/inbox/tasks/old-task.html").exists()
    commit_and_reindex(env)
    # determinism: an unchanged corpus evicts nothing the second night
    again = retention_triage.run(env)
    assert again.counts["evicted"] == 0
    assert env.repo.commit("nothing") is None


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, _files()), dry_run=True)
    before = tree_files(env.repo)
    assert retention_triage.run(env).counts["evicted"] == 1
    assert tree_files(env.repo) == before


def test_authored_contradiction_lowers_the_score(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "c").mkdir()
    base = {
        "areas/inbox/a.html": render_memory(title="a", memory_type="semantic", now=OLD, claim="Alpha holds."),
        "areas/inbox/b.html": render_memory(title="b", memory_type="semantic", now=OLD, claim="Beta holds."),
    }
    plain = make_env(make_repo(tmp_path / "p", base))
    ref = {s.row.path: s.score for s in retention_pass(plain.db, at=AT)}["areas/inbox/a.html"]
    contra = dict(base)
    contra["areas/inbox/b.html"] = render_memory(
        title="b", memory_type="semantic", now=OLD, claim="Beta holds.",
        links=[Link("contradicts", "/areas/inbox/a.html")],
    )
    env = make_env(make_repo(tmp_path / "c", contra))
    contested = {s.row.path: s.score for s in retention_pass(env.db, at=AT)}["areas/inbox/a.html"]
    assert contested < ref


def test_a_new_memory_in_the_evict_band_is_graced_not_evicted(tmp_path: Path) -> None:
    # the same weak record as `stale`, but updated long ago and created 5 days before the run: too new to evict
    recent = render_memory(title="recent", memory_type="episodic", now="2026-03-05T00:00:00Z",
                           claim="Lunch was late again.", confidence=0.1)
    files = {**_files(), "areas/inbox/recent.html": recent.replace(
        'name="memhtml-updated" content="2026-03-05T00:00:00Z"', f'name="memhtml-updated" content="{OLD}"')}
    env = make_env(make_repo(tmp_path, files))
    scored = {s.row.path: s for s in retention_pass(env.db, at=env.at, root=env.repo.root)}
    assert scored["areas/inbox/recent.html"].band == "evict" and scored["areas/inbox/recent.html"].graced
    assert not scored["areas/inbox/stale.html"].graced
    counts = retention_triage.run(env).counts
    assert counts["evict"] == 3 and counts["graced"] == 1 and counts["evicted"] == 1
    assert (env.repo.root / "areas/inbox/recent.html").exists()
    assert not (env.repo.root / "areas/inbox/stale.html").exists()
