"""In-process (pygit2) merges regenerate generated artifacts from the merged tree."""

from __future__ import annotations

import json
from pathlib import Path

from git_memhtml.cli.common import init_memory as init_repo
from git_memhtml.gitrepo import GitRepo
from git_memhtml.hooks.inmemory import merge_generated_in_memory
from tests.hooks.hooks_helpers import git, memory, publish, write

SIDECAR = ".memhtml/state/access.jsonl"


def _side(root: Path, name: str, updated: str, count: int) -> None:
    write(root, f"areas/ops/{name}.html", memory(name.title(), f"The {name} fact about the ops area.", updated))
    write(root, SIDECAR, json.dumps({"path": "areas/ops/base.html", "accessCount": count}) + "\n")
    git(root, "add", f"areas/ops/{name}.html", SIDECAR, *publish(root))
    git(root, "commit", "-qm", name)


def test_pygit2_merge_regenerates_listings_from_the_merged_tree(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    init_repo(root)
    _side(root, "base", "2026-01-01T00:00:00Z", 1)
    git(root, "branch", "side")
    _side(root, "cee", "2026-01-02T00:00:00Z", 4)
    git(root, "checkout", "-q", "side")
    _side(root, "bee", "2026-01-02T00:00:00Z", 9)
    git(root, "checkout", "-q", "main")
    repo = GitRepo.discover(root)
    main, side = repo.branch_sha("main"), repo.branch_sha("side")
    assert main and side
    result = merge_generated_in_memory(repo, main, side)
    assert result.unresolved == () and result.tree_sha is not None
    expected = tmp_path / "expected"
    for name in ("base", "bee", "cee"):
        write(expected, f"areas/ops/{name}.html", (root / f"areas/ops/{name}.html").read_bytes()
              if (root / f"areas/ops/{name}.html").exists()
              else memory(name.title(), f"The {name} fact about the ops area.", "2026-01-02T00:00:00Z"))
    publish(expected)
    for path in ("areas/ops/index.html", "areas/index.html", "index.html", "sitemap.xml"):
        assert repo.read_blob(result.blobs[path]) == (expected / path).read_bytes(), path
    # identical ancestor listings on both sides are no conflict for git, but regeneration is exact here too
    sidecar = json.loads(repo.read_blob(result.blobs[SIDECAR]).decode())
    assert sidecar["accessCount"] == 9
    assert git(root, "status", "--porcelain").stdout == ""  # work tree and index untouched
