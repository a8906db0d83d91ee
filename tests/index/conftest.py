"""Fixtures for index tests: a real repository in tmp_path, an in-memory index, a small fake embedder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.index.db import IndexDB, open_index
from tests.index.index_helpers import Repo


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "mem")


@pytest.fixture
def db() -> Iterator[IndexDB]:
    handle = open_index(":memory:", ":memory:")
    yield handle
    handle.close()


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder(dim=64)
