"""A corrupt index.db is a cache: quarantined and rebuilt; a busy or healthy one is never moved; state.db never."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_memhtml.cli.common import init_memory as init_repo
from git_memhtml.cli.main import main
from git_memhtml.errors import StorageError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB


def _corrupt(path: Path) -> None:
    data = bytearray(path.read_bytes())
    assert len(data) > 8192, "needs more than the header page"
    data[4096:] = b"\xff" * (len(data) - 4096)  # the 100-byte SQLite header stays valid
    path.write_bytes(bytes(data))


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    init_repo(tmp_path / "m")
    repo = GitRepo.discover(tmp_path / "m")
    db = IndexDB.for_repo(repo)
    db.execute("INSERT INTO state.applied_ledgers(run_id, applied_at) VALUES ('keep', 'x')")
    db.close()
    return repo


def test_a_malformed_index_refuses_without_recover_and_is_quarantined_with_it(repo: GitRepo) -> None:
    index = repo.git_dir / "memhtml" / "index.db"
    state = repo.common_dir / "memhtml" / "state.db"
    _corrupt(index)
    state_bytes = state.read_bytes()
    with pytest.raises(StorageError):
        IndexDB.for_repo(repo)
    db = IndexDB.for_repo(repo, recover=True)
    try:
        assert db.recovered_from == Path(str(index) + ".corrupt") and db.recovered_from.exists()
        assert db.query("SELECT run_id FROM state.applied_ledgers") == [("keep",)]
    finally:
        db.close()
    assert state.read_bytes()[:100] == state_bytes[:100]


def test_a_healthy_index_is_never_moved(repo: GitRepo) -> None:
    db = IndexDB.for_repo(repo, recover=True)
    assert db.recovered_from is None
    db.close()
    assert not (repo.git_dir / "memhtml" / "index.db.corrupt").exists()


def test_commands_recover_a_corrupt_index_with_a_warning(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    _corrupt(repo.git_dir / "memhtml" / "index.db")
    capsys.readouterr()
    code = main(["-C", str(repo.root), "index", "status", "--json"])
    captured = capsys.readouterr()
    assert code == 0 and json.loads(captured.out)["type"] == "index.status"
    assert "corrupt" in captured.err
