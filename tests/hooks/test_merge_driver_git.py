"""The merge driver under real ``git merge``, ``rebase`` and ``cherry-pick``; the text-merge fallback and doctor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_memhtml.cli.common import init_memory as init_repo
from git_memhtml.gitrepo import GitRepo
from git_memhtml.hooks.checks import check_merge_driver
from tests.hooks.hooks_helpers import git, memory, publish, write

pytestmark = pytest.mark.slow
SIDECAR = ".memhtml/state/access.jsonl"
UPDATED = {"base": "2026-01-01T00:00:00Z", "bee": "2026-01-05T00:00:00Z", "cee": "2026-01-03T00:00:00Z"}
"""Distinct stamps: two sides that render byte-identical ancestor listings are merged by git without the driver
(docs/hooks.md, "Limits")."""


def _memory(name: str) -> str:
    return memory(name.title(), f"The {name} fact about the ops area.", UPDATED[name])


def _access(**counts: int) -> str:
    return "".join(
        json.dumps({"path": f"areas/ops/{name}.html", "accessCount": n, "reinforcementCount": 0, "outcomeScore": 0,
                    "lastAccessedAt": "2026-01-01T00:00:00Z", "lastReinforcedAt": None,
                    "updatedAt": "2026-01-01T00:00:00Z"}, separators=(",", ":")) + "\n"
        for name, n in sorted(counts.items())
    )


def _commit_side(root: Path, name: str, access: str) -> None:
    write(root, f"areas/ops/{name}.html", _memory(name))
    write(root, SIDECAR, access)
    paths = [f"areas/ops/{name}.html", SIDECAR, *publish(root)]
    git(root, "add", *paths)
    git(root, "commit", "-qm", f"add {name}")


@pytest.fixture()
def forked(tmp_path: Path) -> Path:
    """main: base + c (access base=2, c=1); side: base + b (access base=7, b=1), forked from base."""
    root = tmp_path / "mem"
    init_repo(root)
    _commit_side(root, "base", _access(base=1))
    git(root, "branch", "side")
    _commit_side(root, "cee", _access(base=2, cee=1))
    git(root, "checkout", "-q", "side")
    _commit_side(root, "bee", _access(base=7, bee=1))
    git(root, "checkout", "-q", "main")
    return root


def _expected(tmp_path: Path, names: list[str]) -> dict[str, bytes]:
    other = tmp_path / "expected"
    for name in names:
        write(other, f"areas/ops/{name}.html", _memory(name))
    publish(other)
    return {p: (other / p).read_bytes() for p in ("areas/ops/index.html", "areas/index.html", "index.html",
                                                  "sitemap.xml")}


def _assert_merged(root: Path, tmp_path: Path) -> None:
    assert not git(root, "diff", "--name-only", "--diff-filter=U").stdout.strip()
    for path, data in _expected(tmp_path, ["base", "bee", "cee"]).items():
        assert (root / path).read_bytes() == data, path
    rows = {json.loads(line)["path"]: json.loads(line)["accessCount"]
            for line in (root / SIDECAR).read_text().splitlines()}
    assert rows == {"areas/ops/base.html": 7, "areas/ops/bee.html": 1, "areas/ops/cee.html": 1}


def test_real_git_merge_lists_both_sides_and_merges_access_by_maximum(forked: Path, tmp_path: Path) -> None:
    proc = git(forked, "merge", "--no-edit", "side", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _assert_merged(forked, tmp_path)


def test_real_git_rebase_and_cherry_pick_merge_without_conflicts(forked: Path, tmp_path: Path) -> None:
    git(forked, "checkout", "-q", "-b", "picked", "main")
    proc = git(forked, "cherry-pick", "side", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _assert_merged(forked, tmp_path)
    git(forked, "checkout", "-q", "side")
    proc = git(forked, "rebase", "main", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _assert_merged(forked, tmp_path)


def test_without_the_driver_config_git_text_merges_and_doctor_explains(forked: Path) -> None:
    repo = GitRepo.discover(forked)
    assert check_merge_driver(repo).ok
    (forked / ".git" / "memhtml" / "gitconfig").unlink()
    finding = check_merge_driver(repo)
    assert not finding.ok and "text merge" in finding.message and finding.hint == "git memhtml install"
    proc = git(forked, "merge", "--no-edit", "side", check=False)
    assert proc.returncode != 0
    assert "areas/ops/index.html" in git(forked, "diff", "--name-only", "--diff-filter=U").stdout
    git(forked, "merge", "--abort")
    git(forked, "config", "merge.memhtml.name", "half")
    half = check_merge_driver(repo)
    assert not half.ok and "lacks command line" in half.message
