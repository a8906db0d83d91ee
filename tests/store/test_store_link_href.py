"""A written memory's head link with a percent-encoded dot segment is refused like a literal ``..``: the
writer's render gate runs the same link rule as validate (issue 3 review, item 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memhtml.cli.common import init_memory as init_repo
from git_memhtml.gitrepo import GitRepo
from git_memhtml.store.ops import WriteOp
from git_memhtml.store.writer import apply_batch

NOW = "2026-11-30T10:00:00Z"


@pytest.mark.parametrize(
    "href", ["/areas/../x.html", "/areas/%2e%2e/x.html", "/areas/%2E./x.html", "/areas/.%2e/x.html"]
)
def test_link_href_with_dot_segments_is_refused(tmp_path: Path, href: str) -> None:
    init_repo(tmp_path / "memory")
    repo = GitRepo.discover(tmp_path / "memory")
    head = repo.head_sha()
    op = WriteOp.from_json(
        {"title": "A", "type": "semantic", "body": "The cache is warm.", "links": [{"rel": "relates-to", "href": href}]}
    )
    result = apply_batch(repo, [op], now=NOW, dedupe=lambda _: None)
    assert not result.ok and result.results[0].code == "ERR_INVALID_MEMORY"
    assert "is not root-relative" in (result.results[0].error or "")
    assert repo.head_sha() == head


def test_link_href_with_an_encoded_dot_inside_a_name_is_written(tmp_path: Path) -> None:
    init_repo(tmp_path / "memory")
    repo = GitRepo.discover(tmp_path / "memory")
    op = WriteOp.from_json(
        {"title": "A", "type": "semantic", "body": "The cache is warm.",
         "links": [{"rel": "relates-to", "href": "/areas/v1%2e2/x.html"}]}
    )
    assert apply_batch(repo, [op], now=NOW, dedupe=lambda _: None).ok
