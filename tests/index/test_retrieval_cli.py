"""The retrieval commands end to end: envelopes, --as-of usage errors, archivedMatches, and the access plane
(search and recall never write; read and reinforce do, under the 900 s cooldown; the salience arm reads it)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.main import main
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB

T0 = "2026-02-01T00:00:00Z"


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    capsys.readouterr()
    code = main([*args, "--json"])
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if captured.out.strip() else None), captured.err


@pytest.fixture
def mem(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMHTML_NOW", T0)
    root = tmp_path / "mem"
    assert cli(capsys, "init", str(root))[0] == 0
    for title, claim, entity in [("Checkout timeout", "The checkout-api upstream timeout is 30 seconds.",
                                  "service:checkout-api"),
                                 ("Deploy day", "Alpha deploys on Mondays.", "project:alpha"),
                                 ("Cache policy", "Alpha caches pages for an hour.", "project:alpha")]:
        code, out, _ = cli(capsys, "-C", str(root), "write", "--type", "semantic", "--title", title, "--claim", claim,
                           "--entity", entity)
        assert code == 0, out
    return root


def _path_of(capsys: pytest.CaptureFixture[str], root: Path, title: str) -> str:
    _code, out, _ = cli(capsys, "-C", str(root), "search", title, "--limit", "50")
    path: str = next(h["path"] for h in out["data"]["hits"] if h["title"] == title)
    return path


def _state(root: Path) -> tuple[list[tuple[Any, ...]], dict[str, str]]:
    repo = GitRepo.discover(root)
    db = IndexDB.for_repo(repo)
    try:
        rows = db.query("SELECT * FROM state.access ORDER BY path")
    finally:
        db.close()
    folder = repo.common_dir / "memhtml"
    digests = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("state.db*"))}
    return rows, digests


def test_malformed_as_of_is_a_usage_error_naming_the_format(mem: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("search", "recall"):
        code, out, err = cli(capsys, "-C", str(mem), command, "alpha", "--as-of", "last tuesday")
        assert code == 2
        assert out["code"] == "ERR_INVALID_FLAG" and "YYYY-MM-DD" in out["error"]
        assert "hint: e.g. --as-of 2025-03-01" in err
    code, out, _ = cli(capsys, "-C", str(mem), "search", "alpha", "--as-of", "2026-02-01T01:00:00+01:00")
    assert code == 0 and out["data"]["hits"]  # an offset is converted to UTC (2026-02-01T00:00:00Z)


def test_hits_carry_superseded_by_and_an_empty_result_says_archived(mem: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    old = _path_of(capsys, mem, "Checkout timeout")
    code, out, _ = cli(capsys, "-C", str(mem), "correct", old, "--title", "Checkout timeout v2", "--type", "episodic",
                       "--claim", "The checkout-api upstream timeout is 45 seconds.", "--reason", "raised")
    assert code == 0, out
    new, archived = out["data"]["path"], out["data"]["archived_path"]
    code, out, _ = cli(capsys, "-C", str(mem), "search", "checkout timeout")
    hits = out["data"]["hits"]
    assert hits and all("supersededBy" in h and h["supersededBy"] is None for h in hits)
    assert archived not in {h["path"] for h in hits} and out["data"]["archivedMatches"] is None
    code, out, _ = cli(capsys, "-C", str(mem), "search", "checkout timeout", "--include-archived")
    by_path = {h["path"]: h["supersededBy"] for h in out["data"]["hits"]}
    assert by_path[archived] == new
    # only the archived memory is a semantic one about checkout-api: the scope is empty, but not "never existed"
    scope = ("--entity", "service:checkout-api", "--type", "semantic")
    code, out, _ = cli(capsys, "-C", str(mem), "search", "checkout timeout", *scope)
    data = out["data"]
    assert code == 0 and data["hits"] == [] and data["scopeEmpty"] is True
    assert data["archivedMatches"] == 1 and data["archived"] == [
        {"path": archived, "title": "Checkout timeout", "supersededBy": new}]
    code, out, _ = cli(capsys, "-C", str(mem), "recall", "checkout timeout", *scope)
    assert out["data"]["archivedMatches"] == 1 and out["data"]["sections"]["memories"] == []


def test_search_recall_and_neighbors_never_write_the_access_plane(mem: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = _path_of(capsys, mem, "Deploy day")
    before = _state(mem)
    assert before[0] == [] and before[1]
    for args in (["search", "alpha deploys"], ["search", "alpha", "--include-archived", "--limit", "50"],
                 ["recall", "alpha", "--budget", "200"], ["recall", "checkout"], ["neighbors", path]):
        code, out, _ = cli(capsys, "-C", str(mem), *args)
        assert code == 0, (args, out)
    assert _state(mem) == before  # same rows, same bytes of state.db (and its WAL, if any)


def test_read_and_reinforce_bump_with_cooldown_and_salience_reads_it(mem: Path, capsys: pytest.CaptureFixture[str],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    deploy, cache = _path_of(capsys, mem, "Deploy day"), _path_of(capsys, mem, "Cache policy")
    assert cli(capsys, "-C", str(mem), "read", deploy)[0] == 0
    assert cli(capsys, "-C", str(mem), "read", deploy)[0] == 0  # same instant: inside the cooldown
    rows, _ = _state(mem)
    assert [(r[0], r[1], r[2]) for r in rows] == [(deploy, 1, 0)]
    code, out, _ = cli(capsys, "-C", str(mem), "reinforce", cache, deploy, "--signal", "positive")
    assert code == 0 and out["data"] == {"signal": "positive", "bumped": [cache], "cooledDown": [deploy]}
    monkeypatch.setenv("MEMHTML_NOW", "2026-02-01T00:15:00Z")
    code, out, _ = cli(capsys, "-C", str(mem), "reinforce", deploy, "--signal", "negative")
    assert out["data"]["bumped"] == [deploy]
    rows, _ = _state(mem)
    # EWMA 0.7·0 + 0.3·(−1)
    assert {r[0]: (r[1], r[2], round(r[3], 4)) for r in rows} == {deploy: (2, 1, -0.3), cache: (1, 1, 1.0)}
    # unknown paths are refused before anything is bumped
    monkeypatch.setenv("MEMHTML_NOW", "2026-02-02T00:00:00Z")
    code, out, _ = cli(capsys, "-C", str(mem), "reinforce", cache, "areas/inbox/nope.html")
    assert code == 1 and out["code"] == "ERR_PATH_NOT_FOUND"
    assert _state(mem)[0] == rows
    # the salience arm alone ranks the positively reinforced memory first
    for key, value in (("FTS", "0"), ("VECTOR", "0"), ("RECENCY", "0"), ("SALIENCE", "1")):
        monkeypatch.setenv(f"MEMHTML_WEIGHT_{key}", value)
    code, out, _ = cli(capsys, "-C", str(mem), "search", "anything")
    assert out["data"]["arms"] == ["salience"] and out["data"]["hits"][0]["path"] == cache


def test_recall_pack_shape_and_neighbors_envelope(mem: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "-C", str(mem), "recall", "alpha", "--budget", "40")
    data = out["data"]
    assert code == 0 and set(data["sections"]) == {"arcs", "memories", "lateral"}
    assert data["spentChars"] <= 40 and data["budgetChars"] == 40 and data["truncated"] is True
    assert all(line["tier"] == 1 and line["reason"] in {"budget", "entity-cap"} for line in data["sections"]["lateral"])
    deploy, cache = _path_of(capsys, mem, "Deploy day"), _path_of(capsys, mem, "Cache policy")
    assert cli(capsys, "-C", str(mem), "link", deploy, "relates_to", cache)[0] == 0
    code, out, _ = cli(capsys, "-C", str(mem), "neighbors", cache, "--depth", "2")
    assert code == 0 and [(n["path"], n["rel"], n["direction"], n["hop"]) for n in out["data"]["nodes"]] == [
        (deploy, "relates_to", "in", 1)]
    assert cli(capsys, "-C", str(mem), "neighbors", cache, "--depth", "3")[0] == 2
    assert cli(capsys, "-C", str(mem), "neighbors", "../outside.html")[0] == 2
