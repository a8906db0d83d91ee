"""End to end, with real ``git push`` and ``git pull`` through a local bare remote (issue 8 item 8).

(a) A run survives a moving trunk: while it waits for review, a teammate's writes reach ``main`` by pull; ``sleep
merge`` refuses ``main-advanced`` and names ``sleep rebase``; after the rebase, merge fast-forwards, every phase
commit keeps its trailers, and the listings, sitemap and report page describe the merged tree. A real conflict
(the trunk rewrote a memory the run changed) refuses and moves nothing.

(b) Two clones each run and merge sleep on the same day, then pull from each other with plain git: no conflict,
two distinct run ids, and both runs' reports and ledgers survive in both clones.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.artifacts.listings import PublishRow, render_artifacts
from git_memhtml.cli.main import main
from git_memhtml.document.parse import parse_memory
from git_memhtml.errors import InvalidMemory
from git_memhtml.gitrepo import GitRepo
from git_memhtml.sleep.engine.runfiles import ledger_file, report_path
from git_memhtml.tree.layout import is_indexable

WRITTEN = "2026-01-01T09:00:00Z"
DATE = "2026-02-01"  # a month after the writes: confidence-decay changes every memory
NOW = "2026-02-01T09:00:00Z"


def rows_of_tree(blobs: dict[str, str], read_blob: Any) -> list[PublishRow]:
    """The oracle: publish rows of every indexable memory among ``blobs`` (``{path: blob sha}``), path order, read
    from git alone; files that do not parse as memories are left out, as publish does."""
    rows: list[PublishRow] = []
    for path in sorted(blobs):
        if not is_indexable(path):
            continue
        try:
            doc = parse_memory(read_blob(blobs[path]), path=path)
        except InvalidMemory:
            continue
        rows.append(PublishRow(path, doc.title, doc.memory_type, doc.updated, doc.gist))
    return rows


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    """``git memhtml <args> --json`` in-process: (exit code, envelope or None)."""
    capsys.readouterr()
    code = main([*args, "--json"])
    out = capsys.readouterr().out
    return code, (json.loads(out) if out.strip() else None)


def git(root: Path, *args: str) -> str:
    """The real git binary in ``root``."""
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def write(capsys: pytest.CaptureFixture[str], repo: Path, title: str, claim: str) -> None:
    code, env = cli(capsys, "-C", str(repo), "write", "--type", "semantic", "--title", title, "--claim", claim)
    assert code == 0, env


@pytest.fixture
def origin(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A bare remote holding a memory of three facts (written a month before the run), and its first clone."""
    monkeypatch.setenv("MEMHTML_NOW", WRITTEN)
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    alice = tmp_path / "alice"
    assert cli(capsys, "init", str(alice))[0] == 0
    for i in (1, 2, 3):
        write(capsys, alice, f"Fact {i}", f"The service number {i} listens on port 80{i}.")
    git(alice, "remote", "add", "origin", str(bare))
    git(alice, "push", "-q", "-u", "origin", "main")
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    return bare, alice


DEMO = Path(__file__).resolve().parents[2] / "git_memhtml" / "resources" / "demo" / "memories.jsonl"
"""The project's own invented corpus: its runs fold duplicates, archive, link people and detect tasks."""


def add_demo(capsys: pytest.CaptureFixture[str], repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Apply the demo corpus (written a month before the run) and push it."""
    monkeypatch.setenv("MEMHTML_NOW", WRITTEN)
    code, applied = cli(capsys, "-C", str(repo), "apply", "--file", str(DEMO))
    assert code == 0, applied
    git(repo, "push", "-q", "origin", "main")
    monkeypatch.setenv("MEMHTML_NOW", NOW)


def clone(capsys: pytest.CaptureFixture[str], bare: Path, folder: Path) -> Path:
    """``git clone`` plus ``git memhtml init`` (the merge driver config does not travel with a clone)."""
    git(folder.parent, "clone", "-q", str(bare), str(folder))
    assert cli(capsys, "init", str(folder))[0] == 0
    assert git(folder, "status", "--porcelain") == ""
    return folder


def artifacts_match_tree(repo: Path, rev: str) -> None:
    """Every listing and the sitemap at ``rev`` equal a fresh rendering of that tree's memories."""
    gr = GitRepo.discover(repo)
    sha = git(repo, "rev-parse", rev).strip()
    blobs = gr.tree_blobs(sha, ())
    fresh = render_artifacts(rows_of_tree(blobs, gr.read_blob))
    for path, data in fresh.items():
        assert gr.read_path_at(sha, path) == data, f"{path} at {rev} is not the rendering of its tree"


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["three-facts", "demo"])
def test_rebase_after_new_writes_on_main_then_merge(
    origin: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    corpus: str,
) -> None:
    bare, alice = origin
    if corpus == "demo":
        add_demo(capsys, alice, monkeypatch)
    code, run = cli(capsys, "-C", str(alice), "sleep", "run", "--date", DATE)
    assert code == 0, run
    run_id, old_head = run["data"]["runId"], run["data"]["headSha"]
    trailers_before = git(alice, "log", "--reverse", "--format=%(trailers:only,unfold)", f"main..{run_id}")

    # the agent keeps writing: a teammate's memories reach main by a real push and pull
    bob = clone(capsys, bare, tmp_path / "bob")
    for i in (4, 5):
        write(capsys, bob, f"Late fact {i}", f"The late service {i} listens on port 90{i}.")
    git(bob, "push", "-q", "origin", "main")
    git(alice, "pull", "-q", "--ff-only", "origin", "main")

    code, refused = cli(capsys, "-C", str(alice), "sleep", "merge", run_id, "--skip-gate")
    assert code == 1 and refused["refusal"] == "main-advanced"
    assert f"sleep rebase {run_id}" in refused["hint"]

    trunk = git(alice, "rev-parse", "main").strip()
    code, rebased = cli(capsys, "-C", str(alice), "sleep", "rebase", run_id)  # the gate runs
    assert code == 0, rebased
    data = rebased["data"]
    assert data["rebased"] and data["baseSha"] == trunk and data["headSha"] != old_head
    assert git(alice, "merge-base", "main", run_id).strip() == trunk
    assert git(alice, "log", "--reverse", "--format=%(trailers:only,unfold)", f"main..{run_id}") == trailers_before
    assert git(alice, "status", "--porcelain") == "" and git(alice, "rev-parse", "main").strip() == trunk

    code, merged = cli(capsys, "-C", str(alice), "sleep", "merge", run_id, "--skip-gate")
    assert code == 0 and merged["data"]["merged"], merged
    assert git(alice, "rev-parse", "main").strip() == data["headSha"]
    # the late facts are listed, the report page names the new base, the artifacts are those of the merged tree
    listing = git(alice, "show", "main:areas/inbox/index.html")
    assert "Late fact 4" in listing and "Late fact 5" in listing
    page = git(alice, "show", f"main:{report_path(run_id)}")
    assert trunk in page and run["data"]["baseSha"] not in page
    artifacts_match_tree(alice, "main")
    git(alice, "push", "-q", "origin", "main")
    assert git(bare, "rev-parse", "main").strip() == data["headSha"]

    code, _ = cli(capsys, "-C", str(alice), "sleep", "rebase", run_id, "--skip-gate")
    assert code == 1  # merged: nothing to replay


@pytest.mark.slow
def test_rebase_refuses_a_real_conflict_naming_the_memory_and_moves_nothing(
    origin: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _bare, alice = origin
    code, run = cli(capsys, "-C", str(alice), "sleep", "run", "--date", DATE)
    assert code == 0
    run_id = run["data"]["runId"]
    changed = [p for p in git(alice, "diff", "--name-only", f"main..{run_id}", "--", "areas").split()
               if not p.endswith("index.html")]
    git(alice, "rm", "-q", changed[0])  # the trunk deletes a memory the run changed: no side can be chosen
    git(alice, "commit", "-q", "-m", "drop a memory the run changed")
    refs = git(alice, "for-each-ref", "--format=%(refname) %(objectname)")
    code, refused = cli(capsys, "-C", str(alice), "sleep", "rebase", run_id, "--skip-gate")
    assert code == 1 and refused["code"] == "ERR_WRITE_CONFLICT", refused
    assert changed[0] in refused["error"] and "confidence-decay" in refused["error"], refused
    assert "abort" in refused["hint"]
    assert git(alice, "for-each-ref", "--format=%(refname) %(objectname)") == refs
    assert git(alice, "status", "--porcelain") == ""


@pytest.mark.slow
def test_rebase_keeps_the_trunks_rewrite_of_a_memory_the_run_only_decayed(
    origin: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _bare, alice = origin
    code, run = cli(capsys, "-C", str(alice), "sleep", "run", "--date", DATE)
    assert code == 0
    run_id = run["data"]["runId"]
    victim = next(p for p in git(alice, "diff", "--name-only", f"main..{run_id}", "--", "areas").split()
                  if not p.endswith("index.html"))
    text = (alice / victim).read_text()
    assert "memhtml-confidence" in git(alice, "diff", f"main..{run_id}", "--", victim)
    (alice / victim).write_text(text.replace('name="memhtml-updated" content="2026-01-01T09:00:00Z"',
                                             'name="memhtml-updated" content="2026-02-01T08:00:00Z"')
                                .replace("listens on", "now listens on"))
    git(alice, "commit", "-q", "-am", "the agent rewrote a memory while the run waited")
    trunk_version = git(alice, "show", f"main:{victim}")
    code, rebased = cli(capsys, "-C", str(alice), "sleep", "rebase", run_id, "--skip-gate")
    assert code == 0, rebased
    assert git(alice, "show", f"{run_id}:{victim}") == trunk_version
    assert cli(capsys, "-C", str(alice), "sleep", "merge", run_id, "--skip-gate")[0] == 0
    artifacts_match_tree(alice, "main")


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["three-facts", "demo"])
def test_two_clones_run_and_merge_the_same_day_then_pull_each_other_without_conflict(
    origin: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    corpus: str,
) -> None:
    bare, alice = origin
    if corpus == "demo":
        add_demo(capsys, alice, monkeypatch)
    bob = clone(capsys, bare, tmp_path / "bob")
    write(capsys, alice, "Alice's fact", "Alice moved the cache to port 6380.")
    write(capsys, bob, "Bob's fact", "Bob moved the queue to port 5673.")
    runs = {}
    for who in (alice, bob):
        code, run = cli(capsys, "-C", str(who), "sleep", "run", "--date", DATE)
        assert code == 0, run
        runs[who] = run["data"]["runId"]
        code, merged = cli(capsys, "-C", str(who), "sleep", "merge", runs[who], "--skip-gate")
        assert code == 0 and merged["data"]["merged"], merged
    assert runs[alice] != runs[bob] and all(r.startswith(f"sleep/{DATE}-") for r in runs.values())
    if corpus == "demo":  # both runs detected the same findings: same task files, byte for byte
        tasks = {who: {p for p in git(who, "ls-tree", "-r", "--name-only", "main").split() if "/tasks/det-" in p}
                 for who in (alice, bob)}
        assert tasks[alice] and tasks[alice] == tasks[bob]

    git(alice, "push", "-q", "origin", "main")
    git(bob, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")  # plain git: a merge commit
    git(bob, "push", "-q", "origin", "main")
    git(alice, "pull", "-q", "--ff-only", "origin", "main")
    for who in (alice, bob):
        assert git(who, "status", "--porcelain") == "", git(who, "status")
        assert git(who, "diff", "--name-only", "--diff-filter=U") == ""
        tree = set(git(who, "ls-tree", "-r", "--name-only", "main").split())
        for run_id in runs.values():
            assert report_path(run_id) in tree
            assert git(who, "show", f"main:{report_path(run_id)}").count(run_id) >= 1
        listing = git(who, "show", "main:areas/inbox/index.html")
        assert "Alice" in listing and "Bob" in listing  # (exact counts are the merge driver's; see hooks tests)
        code, status = cli(capsys, "-C", str(who), "sleep", "status")
        assert code == 0
        by_id = {r["runId"]: r for r in status["data"]["runs"]}
        assert all(by_id[r]["status"] == "merged" for r in runs.values()), by_id
    assert git(alice, "rev-parse", "main") == git(bob, "rev-parse", "main")


@pytest.mark.slow
def test_two_clones_ledgers_both_survive_and_apply(
    origin: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each clone's run commits a ledger (as the report phase does); after pulling, both files are on main."""
    bare, alice = origin
    bob = clone(capsys, bare, tmp_path / "bob")
    ids = {}
    for who, alias in ((alice, "svc-a"), (bob, "svc-b")):
        code, run = cli(capsys, "-C", str(who), "sleep", "run", "--date", DATE)
        assert code == 0
        run_id = run["data"]["runId"]
        ids[who] = run_id
        mark = {"kind": "entity-promoted", "entityType": "service", "alias": alias, "canonical": "svc"}
        folder = who.parent / f"{who.name}-wt"
        git(who, "worktree", "add", "-q", str(folder), run_id)
        (folder / ledger_file(run_id)).write_text(json.dumps(mark, sort_keys=True, separators=(",", ":")) + "\n")
        git(folder, "add", ledger_file(run_id))
        git(folder, "commit", "-q", "--amend", "--no-edit")  # into the report commit, as the report phase does
        git(who, "worktree", "remove", str(folder))
        assert cli(capsys, "-C", str(who), "sleep", "merge", run_id, "--skip-gate")[0] == 0
    git(alice, "push", "-q", "origin", "main")
    git(bob, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    git(bob, "push", "-q", "origin", "main")
    git(alice, "pull", "-q", "--ff-only", "origin", "main")
    for who in (alice, bob):
        tree = set(git(who, "ls-tree", "-r", "--name-only", "main").split())
        assert {ledger_file(r) for r in ids.values()} <= tree
        code, status = cli(capsys, "-C", str(who), "sleep", "status")
        other = ids[bob] if who == alice else ids[alice]
        assert [r["runId"] for r in status["data"]["reconciled"]] == [other], status["data"]["reconciled"]
        assert status["data"]["reconciled"][0]["marksPending"] == 1 and not status["data"]["reconciled"][0]["error"]


@pytest.mark.slow
@pytest.mark.parametrize("files", [("ledger",), ("ledger", "report")])
def test_a_hand_written_ledger_arriving_by_pull_is_not_applied(
    origin: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], files: tuple[str, ...]
) -> None:
    from git_memhtml.index.db import IndexDB

    bare, alice = origin
    bob = clone(capsys, bare, tmp_path / "bob")
    forged = f"sleep/{DATE}-f0f0f0"
    mark = {"kind": "entity-promoted", "entityType": "service", "alias": "svc-x", "canonical": "svc"}
    (bob / ".memhtml" / "sleep").mkdir(parents=True, exist_ok=True)
    (bob / ledger_file(forged)).write_text(json.dumps(mark, sort_keys=True, separators=(",", ":")) + "\n")
    if "report" in files:
        (bob / report_path(forged)).write_text("<!doctype html><title>sleep run</title>\n")
    git(bob, "add", ".memhtml/sleep")
    git(bob, "commit", "-q", "-m", f"memhtml(sleep(report)): record run {forged}")  # a subject, no trailer
    git(bob, "push", "-q", "origin", "main")
    db = IndexDB.for_repo(GitRepo.discover(alice))
    try:
        db.execute("INSERT INTO state.entity_corroboration (entity_type, alias_name, canonical_name, detections, "
                   "updated_at) VALUES ('service', 'svc-x', 'svc', 1, ?)", (NOW,))
    finally:
        db.close()
    git(alice, "pull", "-q", "--ff-only", "origin", "main")
    code, status = cli(capsys, "-C", str(alice), "sleep", "status")
    assert code == 0
    [item] = status["data"]["reconciled"]
    assert item["runId"] == forged and item["marksApplied"] == 0 and "not backed" in item["error"]
    assert all(r["runId"] != forged for r in status["data"]["runs"])
    db = IndexDB.for_repo(GitRepo.discover(alice))
    try:
        assert db.query_one("SELECT promoted FROM state.entity_corroboration WHERE alias_name = 'svc-x'") == (0,)
        assert db.query_one("SELECT count(*) FROM state.applied_ledgers WHERE run_id = ?", (forged,)) == (0,)
    finally:
        db.close()


def _path_without_gh() -> str:
    import os

    return os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "gh").exists())


@pytest.mark.slow
def test_pr_after_rebase_replaces_the_pushed_version_of_the_run_and_nothing_else(
    origin: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", _path_without_gh())
    bare, alice = origin
    code, run = cli(capsys, "-C", str(alice), "sleep", "run", "--date", DATE)
    run_id = run["data"]["runId"]
    assert cli(capsys, "-C", str(alice), "sleep", "pr", run_id)[0] == 0
    first = git(bare, "rev-parse", f"refs/heads/{run_id}").strip()
    bob = clone(capsys, bare, tmp_path / "bob")
    write(capsys, bob, "Late fact", "The late service listens on port 9000.")
    git(bob, "push", "-q", "origin", "main")
    git(alice, "pull", "-q", "--ff-only", "origin", "main")
    assert cli(capsys, "-C", str(alice), "sleep", "rebase", run_id, "--skip-gate")[0] == 0
    code, pr = cli(capsys, "-C", str(alice), "sleep", "pr", run_id)
    assert code == 0, pr
    rebased = git(alice, "rev-parse", run_id).strip()
    assert rebased != first and git(bare, "rev-parse", f"refs/heads/{run_id}").strip() == rebased

    # a commit someone else pushed onto the run's branch is never overwritten
    git(bob, "fetch", "-q", "origin", f"{run_id}:{run_id}")
    git(bob, "switch", "-q", run_id)
    (bob / "notes.txt").write_text("a teammate's commit on the run branch\n")
    git(bob, "add", "notes.txt")
    git(bob, "commit", "-q", "-m", "not a phase commit")
    git(bob, "push", "-q", "origin", run_id)
    foreign = git(bob, "rev-parse", "HEAD").strip()
    write(capsys, alice, "Later fact", "The later service listens on port 9001.")
    assert cli(capsys, "-C", str(alice), "sleep", "rebase", run_id, "--skip-gate")[0] == 0
    for fetched in (False, True):  # the lease refuses it unseen; seen, it is not a version of the run
        if fetched:
            git(alice, "fetch", "-q", "origin")
        code, refused = cli(capsys, "-C", str(alice), "sleep", "pr", run_id)
        assert code == 1 and refused["code"] == "ERR_GIT", refused
        assert git(bare, "rev-parse", f"refs/heads/{run_id}").strip() == foreign
