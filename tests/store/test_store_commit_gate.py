"""A command never commits a file that fails validation (issue 8 item 1): ``link``, ``archive`` and ``correct``
re-check the stamped bytes before their commit and restore the tree when they fail. The memory here parses (the
indexer and ``read`` take it) but carries a WHATWG parse error the pre-commit ``validate`` refuses; before the fix
each verb committed a stamped copy of it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from git_memhtml.cli.common import init_memory as init_repo
from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.parse import parse_memory
from git_memhtml.document.template import render_memory
from git_memhtml.errors import InvalidMemory
from git_memhtml.gitrepo import GitRepo
from git_memhtml.store.ops import WriteOp
from git_memhtml.store.writer import archive_memory, correct_memory, link_memories
from tests.treewalk import work_tree_paths

NOW = "2026-11-30T10:00:00Z"
BAD = "areas/inbox/bad.html"
GOOD = "areas/inbox/good.html"


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    init_repo(tmp_path / "memory")
    repo = GitRepo.discover(tmp_path / "memory")
    good = render_memory(MemoryDraft(title="Good", memory_type="semantic", claim="The good claim holds.", body=()),
                         now=NOW)
    bad = render_memory(MemoryDraft(title="Bad", memory_type="semantic", claim="The bad claim parses.", body=()),
                        now=NOW)
    bad = bad.replace("</mark></p>", "</mark> stray</b></p>")
    parse_memory(bad)  # readable: only validation refuses it
    for path, text in ((GOOD, good), (BAD, bad)):
        (repo.root / path).parent.mkdir(parents=True, exist_ok=True)
        (repo.root / path).write_text(text, encoding="utf-8")
    repo.stage([GOOD, BAD])
    assert repo.commit("seed: one valid, one that validate refuses")
    return repo


def _tree(repo: GitRepo) -> dict[str, bytes]:
    return {p.relative_to(repo.root).as_posix(): p.read_bytes() for p in work_tree_paths(repo.root)
            if p.is_file() and ".git" not in p.relative_to(repo.root).parts}


VERBS: list[tuple[str, Callable[[GitRepo], object]]] = [
    ("link", lambda r: link_memories(r, BAD, "relates_to", GOOD)),
    ("archive", lambda r: archive_memory(r, BAD, reason="stale", now=NOW)),
    ("correct", lambda r: correct_memory(r, BAD, WriteOp.from_json(
        {"title": "Fixed", "type": "semantic", "body": "The fixed claim holds."}), reason=None, now=NOW)),
]


@pytest.mark.parametrize(("verb", "call"), VERBS, ids=[v for v, _ in VERBS])
def test_stamped_bytes_that_fail_validation_are_never_committed(repo: GitRepo, verb: str,
                                                                call: Callable[[GitRepo], object]) -> None:
    head, tree = repo.head_sha(), _tree(repo)
    with pytest.raises(InvalidMemory) as caught:
        call(repo)
    assert "would not validate" in caught.value.message and "unexpected-end-tag" in " ".join(caught.value.violations)
    assert repo.head_sha() == head and _tree(repo) == tree and not repo.staged_changes()


def test_a_valid_memory_still_links(repo: GitRepo) -> None:
    assert link_memories(repo, GOOD, "relates_to", BAD) is not None  # the target is only read, never stamped
