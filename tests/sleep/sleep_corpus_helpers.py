"""Shared fixtures of the deterministic sleep-phase tests: a real git repo, a real index, a real PhaseEnv."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.template import render_memory
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.engine.env import PhaseEnv

DATE = "2026-03-10"
AT = f"{DATE}T00:00:00Z"
EMBEDDER = FakeEmbedder(dim=256)


def memory(
    claim: str,
    *,
    title: str | None = None,
    created: str = "2026-01-01T00:00:00Z",
    memory_type: str = "semantic",
    body: Sequence[str] = (),
    entities: Sequence[str] = (),
    aliases: Sequence[str] = (),
    tags: Sequence[str] = (),
) -> str:
    """Render one memory file with ``claim`` as its mark."""
    return render_memory(MemoryDraft(
        title=title or claim[:60],
        memory_type=memory_type,
        claim=claim,
        body=body,
        entities=entities,
        aliases=aliases,
        tags=tags,
    ), now=created)


def git(root: Path, *args: str) -> str:
    """Run the git binary in ``root``; return stdout."""
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def make_repo(tmp_path: Path, files: Mapping[str, str]) -> GitRepo:
    """``git init -b main``, write ``files``, commit them; return the opened repo."""
    root = tmp_path / "mem"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "seed")
    return GitRepo.discover(root)


def write(root: Path, files: Mapping[str, str]) -> None:
    """Write ``files`` (path → text) under ``root``."""
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def make_env(repo: GitRepo, *, embed: bool = True, dry_run: bool = False) -> PhaseEnv:
    """Index ``repo`` from scratch and return a PhaseEnv over it (run ``sleep/<DATE>``)."""
    db = IndexDB.for_repo(repo)
    embedder = EMBEDDER if embed else None
    indexer.rebuild(repo, db, embedder, now=AT)
    head = repo.head_sha()
    assert head is not None
    return PhaseEnv(
        repo=repo, db=db, embedder=embedder, run_id=f"sleep/{DATE}", base_sha=head, date=DATE, at=AT,
        dry_run=dry_run,
    )


def commit_and_reindex(env: PhaseEnv, subject: str = "phase") -> str | None:
    """What the runner does after a phase: commit what was staged, then bring the index up to the tree."""
    sha = env.repo.commit(subject)
    indexer.update(env.repo, env.db, env.embedder, now=AT)
    return sha


def tree_files(repo: GitRepo) -> dict[str, bytes]:
    """Every file of the work tree under a PARA bucket, path → bytes."""
    out: dict[str, bytes] = {}
    for bucket in ("projects", "areas", "resources", "archive"):
        base = repo.root / bucket
        if base.is_dir():
            for file in sorted(base.rglob("*")):
                if file.is_file():
                    out[file.relative_to(repo.root).as_posix()] = file.read_bytes()
    return out
