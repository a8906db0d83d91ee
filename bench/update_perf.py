"""One-file commit → index update at 1k / 10k / 100k memories (issue 12 target: ≤ 100 ms at 100k).

``python bench/update_perf.py --root /tmp/me/c10k [--root …] [--reps 5]`` takes copies of the corpora of
``bench/synth.py`` (``cp -a /tmp/memhtml-bench/corpus-10000 /tmp/me/c10k``: the bench commits into the folder it
is given, so never pass the cached corpus itself). For each folder it prints one JSON line:

- ``update_ms``: p50 over ``--reps`` of the in-process ``indexer.update`` after a commit that rewrites one memory
  (embedding with the fake embedder included), and ``status_ms``: p50 of the work-tree status alone
  (``GitRepo.dirty``, libgit2), measured right after each update;
- ``post_commit_ms``: p50 of the post-commit hook's own pass in process, ``indexer.update(worktree=False)``
  (the commit's delta, no work-tree status: docs/hooks.md "Deferred work-tree status"), and ``reader_ms``: the
  full pass the next reader runs after it (the status, nothing left to parse);
- ``hook_ms``: p50 wall of the post-commit hook body as git runs it in foreground mode
  (``git-memhtml-hook post-commit`` in the work-tree root, Python start-up included) after the same kind of commit;
- ``cli_ms``: p50 wall of ``git memhtml index update`` after the same kind of commit.

Each figure is also given as its minimum (``*_min_ms``): on a shared machine the median carries the waits of
other processes, the minimum is the closest to the work itself. The two subprocess figures run with
``MEMHTML_EMBED=off`` (the CLI's ``fake`` embedder is 1,024-d, the corpora's 256-d: a pass would refuse the
space), so they index without embedding the one changed chunk.

The corpus's index must be current (synth builds it). Timings are wall-clock on whatever machine runs it: print
them with ``uptime``'s load average beside.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.template import render_memory
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB

NOW = "2026-01-15T12:00:00Z"
EMBEDDER = FakeEmbedder(dim=256)
"""The corpora's embedder (``bench/synth.py``: ``fake:hash@256``)."""


def _edit_and_commit(repo: GitRepo, path: str, rep: int) -> None:
    html = render_memory(MemoryDraft(title=f"Edited {rep} {time.time_ns()}", memory_type="semantic",
                                     claim=f"Edited claim number {time.time_ns()}."), now=NOW)
    (repo.root / path).write_text(html, encoding="utf-8")
    repo.stage([path])
    repo.commit(f"bench: edit {path}")


def _target(repo: GitRepo) -> str:
    head = repo.head_sha()
    assert head is not None, "the corpus has no commit"
    for candidate in ("areas/area001/m000600.html", "areas/area000/m000003.html"):
        if repo.read_path_at(head, candidate) is not None:
            return candidate
    return sorted(repo.tree_blobs(head))[0]


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def measure(root: Path, reps: int) -> dict[str, object]:
    """The figures of one corpus copy (see the module docstring)."""
    # A copied corpus's git index holds the stat data of the original files (other inodes and ctimes), so every
    # status would read and hash each file again; refresh it once, as any git command that writes the index does.
    subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=root, check=False, capture_output=True)
    repo = GitRepo.discover(root)
    path = _target(repo)
    files = 0
    updates: list[float] = []
    statuses: list[float] = []
    deferred: list[float] = []
    readers: list[float] = []
    with IndexDB.for_repo(repo) as db:
        indexer.update(repo, db, EMBEDDER, now=NOW)
        files = int((db.query_one("SELECT count(*) FROM files") or (0,))[0])
        for rep in range(reps):
            _edit_and_commit(repo, path, rep)
            start = time.perf_counter()
            indexer.update(repo, db, EMBEDDER, now=NOW)
            updates.append(_ms(start))
            start = time.perf_counter()
            repo.dirty()
            statuses.append(_ms(start))
        for rep in range(reps):
            _edit_and_commit(repo, path, 300 + rep)
            start = time.perf_counter()
            indexer.update(repo, db, EMBEDDER, now=NOW, worktree=False)
            deferred.append(_ms(start))
            start = time.perf_counter()
            indexer.update(repo, db, EMBEDDER, now=NOW)
            readers.append(_ms(start))
    env = {**os.environ, "MEMHTML_EMBED": "off", "MEMHTML_HOOK_DETACH": "0"}  # the CLI's fake is 1024-d
    hook = shutil.which("git-memhtml-hook") or ""
    cli = shutil.which("git-memhtml") or ""
    hooks: list[float] = []
    clis: list[float] = []
    for rep in range(reps):
        _edit_and_commit(repo, path, 100 + rep)
        start = time.perf_counter()
        subprocess.run([hook or sys.executable, *([] if hook else ["-m", "git_memhtml.cli.hook_entry"]),
                        "post-commit"], cwd=root, env=env, check=True, capture_output=True)
        hooks.append(_ms(start))
        _edit_and_commit(repo, path, 200 + rep)
        start = time.perf_counter()
        subprocess.run([cli or sys.executable, *([] if cli else ["-m", "git_memhtml"]), "index", "update"],
                       cwd=root, env=env, check=True, capture_output=True)
        clis.append(_ms(start))
    out: dict[str, object] = {"root": str(root), "files": files}
    for name, values in (("update", updates), ("status", statuses), ("post_commit", deferred), ("reader", readers),
                         ("hook", hooks), ("cli", clis)):
        out[f"{name}_ms"] = round(statistics.median(values), 1)
        out[f"{name}_min_ms"] = round(min(values), 1)
    out["load"] = round(os.getloadavg()[0], 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", action="append", required=True, type=Path,
                        help="a copy of a bench corpus (repeatable)")
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    for root in args.root:
        print(json.dumps(measure(root, args.reps)), flush=True)


if __name__ == "__main__":
    main()
