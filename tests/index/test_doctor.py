"""``git memhtml doctor [--fix]`` and ``git memhtml index verify`` on real repositories, in-process CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.main import main
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from tests.index.index_helpers import memory_html
from tests.treewalk import work_tree_paths

NOW = "2026-02-01T00:00:00Z"


def cli(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, Any]:
    capsys.readouterr()
    code = main(["-C", str(root), *args, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)["data"] if out.strip() else None


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in work_tree_paths(root)
            if p.is_file() and ".git" not in p.relative_to(root).parts}


@pytest.fixture
def mem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """An initialised memory repository with two committed, indexed memories."""
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    root = tmp_path / "mem"
    assert main(["init", str(root)]) == 0
    repo = GitRepo.discover(root)
    for name, claim in (("a", "Alpha deploys on Mondays."), ("b", "Beta caches pages.")):
        path = root / f"areas/inbox/{name}.html"
        path.write_text(memory_html(name.upper(), claim), encoding="utf-8")
    repo.stage(["areas/inbox/a.html", "areas/inbox/b.html"])
    repo.commit("two memories")
    assert cli(capsys, root, "index", "update")[0] == 0
    return root


def _db(root: Path) -> IndexDB:
    return IndexDB.for_repo(GitRepo.discover(root))


def test_a_fresh_repository_is_clean(mem: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = cli(capsys, mem, "doctor")
    assert (code, data["problems"]) == (0, 0), data
    code, data = cli(capsys, mem, "index", "verify")
    assert (code, data["clean"]) == (0, True)


def test_an_invalid_setting_is_a_problem_doctor_names_with_its_fix(mem: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A new user (issue 27): with ``memhtml.llmmaxprompt 0`` every other command exited 2, and doctor said "no
    problems"."""
    GitRepo.discover(mem).config_set("memhtml.llmmaxprompt", "0")
    code, data = cli(capsys, mem, "doctor")
    assert code == 1 and data["problems"] == 1
    assert "memhtml.llmmaxprompt='0'" in data["settings"]["error"] and "must be ≥" in data["settings"]["error"]
    assert "git config --unset memhtml.llmmaxprompt" in data["settings"]["hint"]
    assert main(["-C", str(mem), "doctor"]) == 1
    assert "settings: invalid setting memhtml.llmmaxprompt='0'" in capsys.readouterr().out


def test_verify_reports_drift_and_fix_repairs_it_without_touching_memories(
        mem: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = GitRepo.discover(mem)
    (mem / "areas/inbox/c.html").write_text(memory_html("C", "Gamma retries thrice."), encoding="utf-8")
    repo.stage(["areas/inbox/c.html"])
    repo.commit("committed without indexing")
    with _db(mem) as db, db.atomic():
        db.execute("UPDATE files SET title = 'tampered' WHERE path = 'areas/inbox/a.html'")
        db.execute("DELETE FROM file_tags")
        db.execute("INSERT INTO files_fts(files_fts, rowid, fts_text) VALUES ('delete', "
                   "(SELECT id FROM files WHERE path = 'areas/inbox/b.html'), 'nothing')")
    before = tree_bytes(mem)
    code, data = cli(capsys, mem, "index", "verify")
    assert code == 1 and data["stale"] and data["missing"] == ["areas/inbox/c.html"]
    assert data["differing"] == [{"path": "areas/inbox/a.html", "tables": ["files"]}]
    assert data["ftsOk"] is False
    code, data = cli(capsys, mem, "doctor", "--fix")
    assert code == 0 and data["problems"] == 0, data
    assert data["fixed"] and data["fixed"][0].startswith("index:")
    assert tree_bytes(mem) == before
    assert cli(capsys, mem, "index", "verify")[0] == 0
    with _db(mem) as db:
        assert db.query_one("SELECT title FROM files WHERE path = 'areas/inbox/a.html'") == ("A",)


def test_unparseable_duplicate_and_dangling_are_reported_and_left_alone(
        mem: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (mem / "areas/inbox/bad.html").write_text("<!doctype html><html><head></head><body>x</body></html>\n")
    (mem / "areas/inbox/z.html").write_text(memory_html("Z", "Alpha deploys on Mondays."), encoding="utf-8")
    (mem / "areas/inbox/l.html").write_text(memory_html("L", "Links.", links=(
        ("relates_to", "/areas/inbox/gone.html"), ("relates_to", "/areas/inbox/a.html"))), encoding="utf-8")
    before = tree_bytes(mem)
    code, data = cli(capsys, mem, "doctor", "--fix")
    assert code == 1
    assert [u["path"] for u in data["unparseable"]] == ["areas/inbox/bad.html"]
    assert data["unparseable"][0]["violations"]
    assert data["duplicates"] == [{"path": "areas/inbox/z.html", "holder": "areas/inbox/a.html"}]
    assert data["danglingLinks"] == [{"src": "areas/inbox/l.html", "rel": "relates_to",
                                      "dst": "areas/inbox/gone.html"}]
    assert data["leftovers"] == [{"path": f"areas/inbox/{n}.html", "state": "untracked"} for n in ("bad", "l", "z")]
    assert data["problems"] == 6 and data["index"]["clean"]
    assert tree_bytes(mem) == before


@pytest.mark.parametrize("mode", ["commit", "remove"])
def test_leftovers_are_reported_and_settled_only_on_request(
        mem: Path, capsys: pytest.CaptureFixture[str], mode: str) -> None:
    repo = GitRepo.discover(mem)
    head = repo.head_sha()
    (mem / "areas/inbox/ghost.html").write_text(memory_html("G", "Ghosts linger."), encoding="utf-8")
    (mem / "areas/inbox/a.html").write_text(memory_html("A", "Alpha deploys on Tuesdays."), encoding="utf-8")
    (mem / "areas/inbox/b.html").unlink()
    (mem / "notes.txt").write_text("not a memory folder")
    expected = [{"path": "areas/inbox/a.html", "state": "modified"}, {"path": "areas/inbox/b.html", "state": "deleted"},
                {"path": "areas/inbox/ghost.html", "state": "untracked"}]
    code, data = cli(capsys, mem, "doctor", "--fix")
    assert code == 1 and data["leftovers"] == expected and repo.head_sha() == head
    before = tree_bytes(mem)
    code, data = cli(capsys, mem, "doctor", "--fix-leftovers", mode)
    assert code == 0 and data["leftovers"] == [] and len(data["fixed"]) >= 3, data
    assert [e.path for e in repo.dirty()] == ["notes.txt"]
    if mode == "commit":
        assert tree_bytes(mem) == before and repo.head_sha() != head
        assert repo.commit_message(repo.head_sha() or "").startswith("memhtml(doctor): commit 3 leftover file(s)")
        assert "areas/inbox/b.html" not in repo.tree_blobs(repo.head_sha() or "")
    else:
        assert repo.head_sha() == head and not (mem / "areas/inbox/ghost.html").exists()
        assert (mem / "areas/inbox/b.html").is_file() and b"Mondays" in (mem / "areas/inbox/a.html").read_bytes()


def test_stale_runs_and_leftover_worktrees(mem: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = GitRepo.discover(mem)
    head = repo.head_sha()
    assert head is not None
    repo.create_branch("sleep/2026-01-31", head)
    rows = [("sleep/2026-01-20", "2026-01-20T00:00:00Z"),  # branch gone
            ("sleep/2026-01-31", "2026-01-31T01:00:00Z"),  # 23 h old
            ("sleep/2026-02-01", "2026-01-31T23:00:00Z")]  # live: must stay running, worktree kept
    repo.create_branch("sleep/2026-02-01", head)
    with _db(mem) as db, db.atomic():
        for run_id, started in rows:
            db.execute("INSERT INTO state.sleep_runs(run_id, branch, base_sha, status, started_at) "
                       "VALUES (?, ?, ?, 'running', ?)", (run_id, run_id, head, started))
    folder = repo.common_dir / "memhtml" / "worktrees"
    for name in ("sleep-2026-01-20", "sleep-2026-02-01"):
        (folder / name).mkdir(parents=True)
        (folder / name / "x.html").write_text("leftover")
    code, data = cli(capsys, mem, "doctor")
    assert code == 1
    assert data["staleRuns"] == [{"run_id": "sleep/2026-01-20", "reason": "branch gone"},
                                 {"run_id": "sleep/2026-01-31", "reason": "started 23h ago"}]
    assert data["leftoverWorktrees"] == ["sleep-2026-01-20"]
    code, data = cli(capsys, mem, "doctor", "--fix")
    assert (code, data["problems"]) == (0, 0), data
    assert not (folder / "sleep-2026-01-20").exists() and (folder / "sleep-2026-02-01").is_dir()
    with _db(mem) as db:
        assert db.query("SELECT run_id, status FROM state.sleep_runs ORDER BY run_id") == [
            ("sleep/2026-01-20", "abandoned"), ("sleep/2026-01-31", "abandoned"), ("sleep/2026-02-01", "running")]


def test_gitattributes_without_the_merge_lines_is_reported_not_rewritten(
        mem: Path, capsys: pytest.CaptureFixture[str]) -> None:
    attributes = mem / ".gitattributes"
    attributes.write_text("*.html diff=html\n")
    code, data = cli(capsys, mem, "doctor", "--fix")
    assert code == 1 and len(data["gitattributesMissing"]) >= 2
    assert all("merge=" in line for line in data["gitattributesMissing"])
    assert attributes.read_text() == "*.html diff=html\n"
    capsys.readouterr()
    assert main(["-C", str(mem), "doctor"]) == 1
    assert "run git memhtml init" in capsys.readouterr().out


def test_a_fresh_clone_says_index_not_built_once(mem: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A clone has no index: one "index not built" finding, not one "missing" line per file."""
    import subprocess

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(mem), str(clone)], check=True)
    capsys.readouterr()
    code = main(["-C", str(clone), "doctor"])
    out = capsys.readouterr().out
    assert code == 1
    assert out.count("index not built") + out.count("index: not built") == 1, out
    assert "index: missing" not in out and "index: stale" not in out
    code, data = cli(capsys, clone, "doctor")
    index_problems = data["problems"] - sum(1 for c in data["git"] if not c["ok"] and c["name"] == "merge-driver")
    assert data["index"]["notBuilt"] is True and index_problems == 1
    code, data = cli(capsys, clone, "doctor", "--fix")
    assert data["index"]["notBuilt"] is False and data["index"]["clean"]
