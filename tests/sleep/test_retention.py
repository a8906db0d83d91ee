"""retention-triage: the evict band is archived once its disuse was observed for 30 days; keep/compress, arcs and
tasks stay; a second night moves nothing."""

from __future__ import annotations

from pathlib import Path

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.editors import get_meta
from git_memhtml.document.model import Link
from git_memhtml.document.template import render_memory
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.access import observation_start, record_read
from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.sleep.phases import retention_triage, state_export
from git_memhtml.sleep.phases.scoring import retention_pass
from git_memhtml.tree.layout import ACCESS_SIDECAR
from tests.sleep.sleep_corpus_helpers import AT, commit_and_reindex, git, make_env, make_repo, tree_files

OLD = "2025-01-01T00:00:00Z"
OBSERVING = "2025-06-01T00:00:00Z"
"""The store's first recorded read in most tests: 282 days before ``AT``."""
LONG = " ".join(f"word{i}" for i in range(120))
TASK = "areas/inbox/tasks/old-task.html"


def _observing(env: PhaseEnv, since: str = OBSERVING) -> PhaseEnv:
    """Record one read (of the task, which is never scored) at ``since``: the store observes reads from then."""
    assert record_read(env.db, TASK, now=since)
    return env


def _files() -> dict[str, str]:
    return {
        # stale, short, unconfident episodic record: evict band
        "areas/inbox/stale.html": render_memory(MemoryDraft(
            title="stale", memory_type="episodic", claim="Lunch was late.", confidence=0.1
        ), now=OLD),
        # an arc with the same weak signals is never evicted by triage
        "areas/arcs/stale-arc.html": render_memory(MemoryDraft(
            title="arc", memory_type="arc", claim="An old arc.", confidence=0.1
        ), now=OLD),
        # a fresh, confident, dense semantic fact: not evicted
        "resources/infra/fresh.html": render_memory(MemoryDraft(
            title="fresh", memory_type="semantic", claim="The cluster runs three replicas.",
            body=[LONG],
        ), now=AT),
        TASK: render_memory(MemoryDraft(
            title="task", memory_type="task", claim="Clean the attic."
        ), now=OLD),
    }


def test_evict_band_memory_is_archived(tmp_path: Path) -> None:
    env = _observing(make_env(make_repo(tmp_path, _files())))
    scored = {s.row.path: s for s in retention_pass(env.db, at=env.at, root=env.repo.root)}
    assert "areas/inbox/tasks/old-task.html" not in scored  # tasks are never scored
    assert scored["areas/inbox/stale.html"].band == "evict"
    assert scored["areas/arcs/stale-arc.html"].band == "evict"
    assert scored["resources/infra/fresh.html"].band != "evict"
    outcome = retention_triage.run(env)
    counts = outcome.counts.wire()
    assert counts["scored"] == 3 and counts["evict"] == 2 and counts["evicted"] == 1
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
    assert again.counts.wire()["evicted"] == 0
    assert env.repo.commit("nothing") is None


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    env = _observing(make_env(make_repo(tmp_path, _files()), dry_run=True))
    before = tree_files(env.repo)
    assert retention_triage.run(env).counts.wire()["evicted"] == 1
    assert tree_files(env.repo) == before


def test_authored_contradiction_lowers_the_score(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "c").mkdir()
    base = {
        "areas/inbox/a.html": render_memory(MemoryDraft(title="a", memory_type="semantic", claim="Alpha holds."),
                                            now=OLD),
        "areas/inbox/b.html": render_memory(MemoryDraft(title="b", memory_type="semantic", claim="Beta holds."),
                                            now=OLD),
    }
    plain = make_env(make_repo(tmp_path / "p", base))
    ref = {s.row.path: s.score for s in retention_pass(plain.db, at=AT)}["areas/inbox/a.html"]
    contra = dict(base)
    contra["areas/inbox/b.html"] = render_memory(MemoryDraft(
        title="b", memory_type="semantic", claim="Beta holds.",
        links=[Link("contradicts", "/areas/inbox/a.html")],
    ), now=OLD)
    env = make_env(make_repo(tmp_path / "c", contra))
    contested = {s.row.path: s.score for s in retention_pass(env.db, at=AT)}["areas/inbox/a.html"]
    assert contested < ref


def test_a_store_that_never_recorded_a_read_evicts_nothing(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, _files()))
    scored = {s.row.path: s for s in retention_pass(env.db, at=env.at, root=env.repo.root)}
    stale = scored["areas/inbox/stale.html"]
    assert stale.band == "evict" and stale.observed_days == 0.0 and stale.unobserved  # the band is the spec's
    counts = retention_triage.run(env).counts.wire()
    assert counts["evict"] == 2 and counts["unobserved"] == 1 and counts["evicted"] == 0  # the arc is exempt
    assert (env.repo.root / "areas/inbox/stale.html").exists()


def test_memories_created_before_the_first_read_are_observed_from_it(tmp_path: Path) -> None:
    env = _observing(make_env(make_repo(tmp_path, _files())), since="2026-02-20T00:00:00Z")  # 18 days before AT
    stale = {s.row.path: s for s in retention_pass(env.db, at=env.at)}["areas/inbox/stale.html"]
    assert stale.observed_days == 18.0 and stale.unobserved
    assert retention_triage.run(env).counts.wire()["evicted"] == 0


def _weak(title: str, created: str) -> str:
    """The same weak record as ``stale``, created at ``created`` but last updated at ``OLD``."""
    html = render_memory(MemoryDraft(title=title, memory_type="episodic", claim=f"Lunch was late, {title}.",
                         confidence=0.1), now=created)
    return html.replace(f'name="memhtml-updated" content="{created}"', f'name="memhtml-updated" content="{OLD}"')


def test_a_memory_created_after_observation_began_is_observed_from_its_creation(tmp_path: Path) -> None:
    files = {**_files(), "areas/inbox/recent.html": _weak("recent", "2026-03-05T00:00:00Z"),
             "areas/inbox/month.html": _weak("month", "2026-02-01T00:00:00Z")}
    env = _observing(make_env(make_repo(tmp_path, files)))
    scored = {s.row.path: s for s in retention_pass(env.db, at=env.at, root=env.repo.root)}
    assert scored["areas/inbox/recent.html"].band == "evict" and scored["areas/inbox/recent.html"].unobserved
    assert scored["areas/inbox/recent.html"].observed_days == 5.0
    assert scored["areas/inbox/month.html"].observed_days == 37.0 and not scored["areas/inbox/month.html"].unobserved
    assert not scored["areas/inbox/stale.html"].unobserved
    counts = retention_triage.run(env).counts.wire()
    assert counts["evict"] == 4 and counts["unobserved"] == 1 and counts["evicted"] == 2
    assert (env.repo.root / "areas/inbox/recent.html").exists()
    assert not (env.repo.root / "areas/inbox/month.html").exists()
    assert not (env.repo.root / "areas/inbox/stale.html").exists()


def test_a_clone_observes_from_its_own_first_read(tmp_path: Path) -> None:
    # The sidecar is exported, never imported (no `state import` in this version): a clone's state.access starts
    # empty, so its access signals know none of the origin's reads. Borrowing the origin's observation start would
    # read those reads as disuse; the clone therefore observes from its own first read.
    (tmp_path / "o").mkdir()
    origin = _observing(make_env(make_repo(tmp_path / "o", _files())))
    assert state_export.run(origin).counts.wire()["written"] == 1
    commit_and_reindex(origin, "export the sidecar")
    assert not {s.row.path: s for s in retention_pass(origin.db, at=AT)}["areas/inbox/stale.html"].unobserved
    git(tmp_path, "clone", "-q", str(origin.repo.root), str(tmp_path / "c"))
    clone = make_env(GitRepo.discover(tmp_path / "c"))
    assert (clone.repo.root / ACCESS_SIDECAR).read_text() == (origin.repo.root / ACCESS_SIDECAR).read_text() != ""
    assert observation_start(clone.db) is None
    assert clone.db.query_one("SELECT count(*) FROM state.access") == (0,)
    counts = retention_triage.run(clone).counts.wire()
    assert counts["evicted"] == 0 and counts["unobserved"] == 1
    assert record_read(clone.db, TASK, now="2026-02-01T00:00:00Z")  # 37 days before AT
    assert retention_triage.run(clone).counts.wire()["evicted"] == 1
    assert not (clone.repo.root / "areas/inbox/stale.html").exists()
