"""Where ``trace index`` looks: ``memhtml.traceroot`` / ``memhtml.codexroot`` through the usual sources, ``~`` as
the HOME the command was started with (docs/traces.md §1)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from git_memhtml.cli.main import main
from git_memhtml.config import Settings, trace_roots
from tests.traces.trace_helpers import claude_line, claude_root

ROOTS: list[tuple[str, str, str]] = [
    ("defaults", "~/.claude", "/h/me/.claude"),
    ("bare tilde", "~", "/h/me"),
    ("absolute", "/data/claude", "/data/claude"),
    ("another account's home is not expanded", "~root/.claude", "~root/.claude"),
    ("tilde inside is literal", "/x/~/y", "/x/~/y"),
]


@pytest.mark.parametrize(("label", "value", "want"), ROOTS, ids=[r[0] for r in ROOTS])
def test_trace_root_expansion(label: str, value: str, want: str) -> None:
    claude, codex = trace_roots(Settings(trace_root=value, codex_root=value), {"HOME": "/h/me"})
    assert str(claude) == want == str(codex), label


def test_git_config_then_environment_pick_the_root(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    configured, _ = claude_root(tmp_path / "a", claude_line("user", "from git config"))
    from_env, _ = claude_root(tmp_path / "b", claude_line("user", "from the environment"))
    repo = tmp_path / "mem"
    assert main(["init", str(repo)]) == 0
    subprocess.run(["git", "-C", str(repo), "config", "memhtml.traceroot", str(configured)], check=True)
    subprocess.run(["git", "-C", str(repo), "config", "memhtml.codexroot", str(tmp_path / "none")], check=True)
    capsys.readouterr()
    assert main(["-C", str(repo), "trace", "index", "--json"]) == 0
    roots = json.loads(capsys.readouterr().out)["data"]["roots"]
    assert roots[0] == {"source": "claude-code", "path": str(configured), "present": True}
    assert roots[1]["present"] is False
    monkeypatch.setenv("MEMHTML_TRACE_ROOT", str(from_env))
    assert main(["-C", str(repo), "config", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["data"]["memhtml.traceroot"]
    assert shown["source"] == "env" and shown["env"] == "MEMHTML_TRACE_ROOT"
    assert main(["-C", str(repo), "trace", "index", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["data"]["roots"][0]["path"] == str(from_env)


def test_an_empty_root_setting_is_refused_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "mem"
    assert main(["init", str(repo)]) == 0
    subprocess.run(["git", "-C", str(repo), "config", "memhtml.codexroot", ""], check=True)
    capsys.readouterr()
    assert main(["-C", str(repo), "trace", "index"]) == 2
    err = capsys.readouterr().err
    assert "memhtml.codexroot" in err and "hint: git config --unset memhtml.codexroot" in err


ABSENT: list[tuple[str, str]] = [
    ("missing", "(not found)"),
    ("a regular file", "(not a folder)"),
    ("a device", "(not a folder)"),
    ("a dangling link", "(not a folder)"),
]


@pytest.mark.parametrize(("label", "said"), ABSENT, ids=[a[0] for a in ABSENT])
def test_a_root_that_is_no_folder_is_told_apart_from_a_missing_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, label: str, said: str
) -> None:
    root = {"missing": tmp_path / "none", "a regular file": tmp_path / "file", "a device": Path("/dev/null"),
            "a dangling link": tmp_path / "link"}[label]
    (tmp_path / "file").write_text("not a folder\n")
    (tmp_path / "link").symlink_to(tmp_path / "gone")
    repo = tmp_path / "mem"
    assert main(["init", str(repo)]) == 0
    monkeypatch.setenv("MEMHTML_TRACE_ROOT", str(root))
    monkeypatch.setenv("MEMHTML_CODEX_ROOT", str(tmp_path / "no-codex"))
    capsys.readouterr()
    assert main(["-C", str(repo), "trace", "index"]) == 0
    assert f"claude-code root {root} {said}" in capsys.readouterr().out
