"""``git memhtml config`` shows every key of the README's configuration table by its git key, with its source."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from git_memhtml.cli.main import main

README = Path(__file__).resolve().parents[2] / "README.md"


def _readme_table() -> list[tuple[list[str], list[str]]]:
    """(git keys, env variables) of each row of the README's configuration table."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if line.startswith("| `memhtml."):
            git_col, env_col = line.split("|")[1:3]
            rows.append((re.findall(r"`(memhtml\.[a-z]+)`", git_col), re.findall(r"`(MEMHTML_[A-Z_]+)`", env_col)))
    return rows


def _config(capsys: pytest.CaptureFixture[str], repo: Path) -> dict[str, dict[str, object]]:
    capsys.readouterr()
    assert main(["-C", str(repo), "config", "--json"]) == 0
    env = json.loads(capsys.readouterr().out)
    assert env["type"] == "config.effective"
    data: dict[str, dict[str, object]] = env["data"]
    return data


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    return root


def test_every_readme_key_is_listed_with_its_env_variable_and_source(repo: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    rows = _readme_table()
    assert len(rows) >= 7 and any("memhtml.trunk" in keys for keys, _ in rows)
    data = _config(capsys, repo)
    for keys, envs in rows:
        for i, key in enumerate(keys):
            assert key in data, key
            assert data[key]["source"] in ("default", "default (fake)", "git-config", "env"), data[key]
            if envs:
                assert data[key]["env"] == envs[i], (key, data[key])
    listed = {k for keys, _ in rows for k in keys}
    assert set(data) == listed  # and nothing the README does not document


def test_sources_follow_git_config_then_environment(repo: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    subprocess.run(["git", "-C", str(repo), "config", "memhtml.trunk", "trunk"], check=True)
    subprocess.run(["git", "-C", str(repo), "config", "memhtml.mmrlambda", "0.7"], check=True)
    monkeypatch.setenv("MEMHTML_HOOKS", "0")
    data = _config(capsys, repo)
    assert data["memhtml.trunk"] == {"value": "trunk", "source": "git-config", "env": None, "setting": None}
    assert (data["memhtml.mmrlambda"]["value"], data["memhtml.mmrlambda"]["source"]) == (0.7, "git-config")
    assert (data["memhtml.hooks"]["value"], data["memhtml.hooks"]["source"]) == ("0", "env")
    assert data["memhtml.embed"]["source"] == "env"  # MEMHTML_EMBED=fake from the test environment


def test_human_output_names_the_git_keys(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["-C", str(repo), "config"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^memhtml\.trunk\s+main\s+default", out, re.M), out
    assert re.search(r"^memhtml\.weightfts\s+\S+\s+default \(fake\)\s+MEMHTML_WEIGHT_FTS$", out, re.M), out
