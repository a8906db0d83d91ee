"""``git memhtml agent install|uninstall`` under a hostile environment (attack findings): relative XDG and Codex
folders, two installs racing over a shared file, and a file where install needs a folder. Real memory repositories,
real files under the temporary HOME, real forked processes."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest

from git_memhtml.agents.install import Places, install, uninstall
from git_memhtml.agents.model import AgentName, Launch
from git_memhtml.cli.main import main


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    repo = tmp_path / "mem"
    assert main(["init", str(repo)]) == 0
    return repo


def _files(root: Path) -> set[str]:
    """The files under ``root``, our state home (receipts, the install lock) left out."""
    return {str(p.relative_to(root)) for p in root.rglob("*")
            if p.is_file() and p.relative_to(root).parts[:1] != (".local",)}


def test_a_relative_xdg_folder_is_ignored_so_uninstall_from_elsewhere_finds_what_install_wrote(
        memory: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path(os.environ["HOME"])
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", "conf")
    monkeypatch.setenv("XDG_STATE_HOME", "state")
    monkeypatch.chdir(first)
    assert main(["-C", str(memory), "agent", "install", "opencode"]) == 0
    assert _files(first) == set()
    assert (home / ".config" / "opencode" / "opencode.json").is_file()
    monkeypatch.chdir(second)
    assert main(["-C", str(memory), "agent", "uninstall", "opencode"]) == 0
    assert not (home / ".config" / "opencode" / "opencode.json").exists()
    assert _files(first) == _files(second) == set()


def test_a_relative_codex_home_is_refused_and_nothing_is_written(
        memory: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CODEX_HOME", "rel")
    monkeypatch.chdir(tmp_path)
    home = Path(os.environ["HOME"])
    before = _files(home)
    assert main(["-C", str(memory), "agent", "install", "codex"]) == 1
    assert "CODEX_HOME" in capsys.readouterr().err
    assert not (tmp_path / "rel").exists()
    assert _files(home) == before


def _install_at_barrier(agent: AgentName, project: str, home: str, barrier: Barrier) -> None:
    places = Places(home=Path(home), project=Path(project), state_home=Path(home) / ".local" / "state", env={})
    barrier.wait()
    install(agent, "project", Launch(exe="/usr/bin/git-memhtml", repo="/srv/mem", agent=agent), places)


def test_two_installs_racing_over_a_shared_agents_md_both_keep_their_block(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    project = tmp_path / "proj"
    places = Places(home=home, project=project, state_home=home / ".local" / "state", env={})
    fork = multiprocessing.get_context("fork")
    for _ in range(4):
        project.mkdir()
        (project / "AGENTS.md").write_text("# Project\n", encoding="utf-8")
        barrier = fork.Barrier(2)
        workers = [fork.Process(target=_install_at_barrier, args=(agent, str(project), str(home), barrier))
                   for agent in ("codex", "opencode")]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(30)
            assert worker.exitcode == 0
        text = (project / "AGENTS.md").read_text(encoding="utf-8")
        assert ">>> git-memhtml (codex)" in text and ">>> git-memhtml (opencode)" in text
        uninstall("codex", "project", places)
        uninstall("opencode", "project", places)
        assert (project / "AGENTS.md").read_text(encoding="utf-8") == "# Project\n"
        (project / "AGENTS.md").unlink()
        assert _files(project) == set()
        project.rmdir()


def test_a_file_where_install_needs_a_folder_is_refused_before_any_write(
        memory: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = Path(os.environ["HOME"])
    (home / ".claude").write_bytes(b"not a folder")
    before = _files(home)
    assert main(["-C", str(memory), "agent", "install", "claude-code"]) == 1
    assert "is not a folder" in capsys.readouterr().err
    assert _files(home) == before and not (home / ".claude.json").exists()


def test_uninstall_refuses_a_receipt_that_names_a_file_outside_the_agents_folder(
        memory: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = Path(os.environ["HOME"])
    assert main(["-C", str(memory), "agent", "install", "cursor"]) == 0
    (receipt,) = (home / ".local" / "state" / "git-memhtml" / "agents").glob("cursor-user-*.json")
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    data = json.loads(receipt.read_text(encoding="utf-8"))
    data["files"][1]["path"] = str(victim)
    data["files"][1]["after_sha256"] = "sha256:" + hashlib.sha256(b"precious\n").hexdigest()
    receipt.write_text(json.dumps(data), encoding="utf-8")
    installed = _files(home)
    capsys.readouterr()
    assert main(["-C", str(memory), "agent", "uninstall", "cursor"]) == 1
    assert "outside" in capsys.readouterr().err
    assert victim.read_bytes() == b"precious\n"
    assert _files(home) == installed and receipt.exists()
