"""A finished run keeps its index for the run gate, and merge, rebase and abort drop it (issue 10 item 1: "the
run's worktree index already describes the tip"; git_memhtml/sleep/engine/runplace.py ``keep_run_index``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_memhtml.cli.demo import DEMO_CORPUS
from git_memhtml.cli.main import main
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import open_index
from git_memhtml.index.snapshot import describes_commit
from git_memhtml.sleep.engine.runplace import run_index_path


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    capsys.readouterr()
    code = main([*args, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


@pytest.fixture
def run_repo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[GitRepo, str]:
    root = tmp_path / "mem"
    assert main(["init", str(root)]) == 0
    assert main(["-C", str(root), "apply", "--file", str(DEMO_CORPUS)]) == 0
    code, env = _cli(capsys, "-C", str(root), "sleep", "run")
    assert code == 0
    return GitRepo.discover(root), str(env["data"]["runId"])  # type: ignore[index]


@pytest.mark.slow
def test_the_kept_index_describes_the_tip_and_the_gate_reuses_it(run_repo: tuple[GitRepo, str],
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    repo, run = run_repo
    kept = run_index_path(repo, run)
    assert kept.is_file() and not repo.worktree_path(run.replace("/", "-"))
    db = open_index(kept, repo.common_dir / "memhtml" / "state.db")
    try:
        assert describes_commit(db, str(repo.branch_sha(run)), "fake:hash@1024")
    finally:
        db.close()
    code, env = _cli(capsys, "-C", str(repo.root), "eval", "run", run)
    assert code == 0 and env["data"]["timing"]["tipIndex"]["source"] == "run index"  # type: ignore[index]
    assert env["data"]["timing"]["baseIndex"]["source"] == "main"  # type: ignore[index]
    code, env = _cli(capsys, "-C", str(repo.root), "sleep", "merge", run)
    assert code == 0 and env["data"]["probes"]["passed"] is True  # type: ignore[index]
    assert not kept.exists()


@pytest.mark.slow
def test_abort_drops_the_kept_index(run_repo: tuple[GitRepo, str], capsys: pytest.CaptureFixture[str]) -> None:
    repo, run = run_repo
    assert run_index_path(repo, run).is_file()
    code, _ = _cli(capsys, "-C", str(repo.root), "sleep", "abort", run)
    assert code == 0 and not run_index_path(repo, run).exists()


@pytest.mark.slow
def test_a_stale_kept_index_is_not_reused(run_repo: tuple[GitRepo, str], capsys: pytest.CaptureFixture[str]) -> None:
    """A kept index that no longer describes the tip (here: an index of another commit put in its place) is
    ignored and the tip's index is built; the verdict is the same."""
    repo, run = run_repo
    code, first = _cli(capsys, "-C", str(repo.root), "eval", "run", run)
    kept = run_index_path(repo, run)
    db = open_index(kept, repo.common_dir / "memhtml" / "state.db")
    try:
        db.execute("UPDATE index_state SET head_sha = ?", (str(repo.branch_sha("main")),))
    finally:
        db.close()
    code, second = _cli(capsys, "-C", str(repo.root), "eval", "run", run)
    assert code == 0 and second["data"]["timing"]["tipIndex"]["source"] == "built"  # type: ignore[index]
    assert second["data"]["verdict"] == first["data"]["verdict"]  # type: ignore[index]


@pytest.mark.slow
def test_a_review_whose_probes_cannot_run_still_reviews_and_says_why(
    run_repo: tuple[GitRepo, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An embedder that does not answer (a closed loopback port): no index of the commits can be built in its
    space, so the review warns naming why and shows the rest; the merge refuses rather than land unprobed."""
    repo, run = run_repo
    monkeypatch.setenv("MEMHTML_EMBED", "openai")
    monkeypatch.setenv("MEMHTML_EMBED_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MEMHTML_EMBED_TIMEOUT", "2")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    capsys.readouterr()
    code = main(["-C", str(repo.root), "sleep", "review", run, "--json"])
    captured = capsys.readouterr()
    data = json.loads(captured.out)["data"]
    assert code == 0 and data["probes"] is None and data["probesError"]
    assert "run gate's probes could not run" in captured.err
    main_before = repo.branch_sha("main")
    assert main(["-C", str(repo.root), "sleep", "merge", run]) == 1
    assert repo.branch_sha("main") == main_before
