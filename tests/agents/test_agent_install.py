"""``git memhtml agent install|uninstall`` (docs/agents.md): every agent and scope round-trips byte for byte,
including files that held the user's own entries; a second install is a no-op; edits are kept; refusals write
nothing; hostile paths stay data. Real memory repositories, real files under a temporary HOME and project folder,
and one real subprocess per agent."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.agents.model import AGENT_NAMES, SCOPES
from git_memhtml.cli.main import main

STATE = Path(".local") / "state" / "git-memhtml"
"""Our receipts folder under HOME (XDG_STATE_HOME is unset in the hermetic environment)."""

SEEDS: dict[tuple[str, str], dict[str, bytes]] = {
    ("claude-code", "user"): {
        ".claude.json": b'{"numStartups": 3,   "mcpServers": {"mine": {"command": "x"}},\n'
                        b'\t"t\xc3\xa9": "\xe2\x9c\x93"}',
        ".claude/settings.json": b'{\n    "hooks": {"UserPromptSubmit": [ {"hooks": [{"type": "command", '
                                 b'"command": "echo hi"}]} ]},\n    "model": "opus"\n}\n',
        ".claude/CLAUDE.md": "# Mine\n\nKeep answers short — ✓".encode(),
    },
    ("claude-code", "project"): {
        ".mcp.json": b'{"mcpServers":{}}',
        ".claude/settings.json": b'{"permissions": {"allow": ["Bash(ls)"]}}\r\n',
        "CLAUDE.md": b"Project notes\n\n",
    },
    ("codex", "user"): {
        ".codex/config.toml": '# my codex\nmodel = "o3"  # trailing comment\n\n[mcp_servers.other]\ncommand = '
                              '"other"\nargs = ["-v"]\n\n[profiles.fast]\nmodel = "gpt-5"\n# ende: ü'.encode(),
        ".codex/hooks.json": b'{"hooks": {"Stop": []}}\n',
        ".codex/AGENTS.md": b"Be nice.\n",
    },
    ("codex", "project"): {
        ".codex/config.toml": b"[mcp_servers]\n",
        "AGENTS.md": "# Agents\n- tabs\tand unicode ✓\n".encode(),
    },
    ("cursor", "user"): {
        ".cursor/mcp.json": b'{\n  "mcpServers": {\n    "a": {"url": "https://example.invalid/mcp"}\n  }\n}',
        ".cursor/hooks.json": b'{"version": 1, "hooks": {"stop": [{"command": "./done.sh"}]}}\n',
    },
    ("cursor", "project"): {
        ".cursor/mcp.json": b"{ }\n",
        ".cursor/rules/style.mdc": b"---\nalwaysApply: true\n---\nTabs.\n",
    },
    ("opencode", "user"): {
        ".config/opencode/opencode.json": b'{"$schema": "https://opencode.ai/config.json", "theme": "dark"}\n',
        ".config/opencode/AGENTS.md": b"global rules",
    },
    ("opencode", "project"): {
        "opencode.json": b'{"mcp": {"x": {"type": "remote", "url": "https://example.invalid"}}}\n',
    },
}
"""Per agent and scope, files the user already has (relative to HOME or the project): odd spacing, tabs, CRLF, no
final newline, comments in TOML, unicode, entries of their own in the very objects we add to."""


def _snapshot(*roots: Path) -> dict[str, bytes | None]:
    """Every file (bytes) and folder (``None``) under ``roots``, the state home holding our receipts left out."""
    seen: dict[str, bytes | None] = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.relative_to(root).parts[:1] == (".local",):
                continue
            seen[str(path)] = None if path.is_dir() else path.read_bytes()
    return seen


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    repo = tmp_path / "mem"
    assert main(["init", str(repo)]) == 0
    return repo


@pytest.fixture
def home() -> Path:
    return Path(os.environ["HOME"])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir()
    return folder


def _seed(files: dict[str, bytes], base: Path) -> None:
    for rel, data in files.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_bytes(data)


def _run(memory: Path, project: Path, verb: str, agent: str, scope: str, *extra: str) -> int:
    return main(["-C", str(memory), "agent", verb, agent, "--scope", scope, "--project", str(project), *extra])


def _receipts(home: Path) -> dict[str, bytes]:
    folder = home / STATE / "agents"
    return {p.name: p.read_bytes() for p in folder.glob("*.json")} if folder.exists() else {}


CASES = [(a, s, seeded) for a in AGENT_NAMES for s in SCOPES for seeded in (False, True)]


@pytest.mark.parametrize(("agent", "scope", "seeded"), CASES,
                         ids=[f"{a}-{s}-{'seeded' if d else 'empty'}" for a, s, d in CASES])
def test_install_twice_then_uninstall_leaves_every_file_byte_identical(
        memory: Path, home: Path, project: Path, capsys: pytest.CaptureFixture[str],
        agent: str, scope: str, seeded: bool) -> None:
    if seeded:
        _seed(SEEDS[(agent, scope)], home if scope == "user" else project)
    before = _snapshot(home, project)
    assert _run(memory, project, "install", agent, scope) == 0
    installed = _snapshot(home, project)
    assert installed != before
    receipts = _receipts(home)
    assert len(receipts) == 1
    capsys.readouterr()
    assert _run(memory, project, "install", agent, scope, "--json") == 0
    again = json.loads(capsys.readouterr().out)
    assert again["data"]["action"] == "already installed"
    assert _snapshot(home, project) == installed and _receipts(home) == receipts
    assert _run(memory, project, "uninstall", agent, scope) == 0
    assert _snapshot(home, project) == before
    assert _receipts(home) == {}


def test_claude_code_user_install_writes_the_documented_entries(memory: Path, home: Path, project: Path) -> None:
    assert _run(memory, project, "install", "claude-code", "user") == 0
    server = json.loads((home / ".claude.json").read_text())["mcpServers"]["git-memhtml"]
    assert server["type"] == "stdio" and server["args"] == ["-C", str(memory.resolve()), "mcp"]
    hooks = json.loads((home / ".claude/settings.json").read_text())["hooks"]
    recall = shlex.split(hooks["UserPromptSubmit"][0]["hooks"][0]["command"])
    trace = shlex.split(hooks["SessionEnd"][0]["hooks"][0]["command"])
    assert recall[1:] == ["-C", str(memory.resolve()), "session", "recall", "--agent", "claude-code"]
    assert trace[1:] == ["-C", str(memory.resolve()), "session", "trace", "--agent", "claude-code"]
    assert Path(recall[0]).is_absolute() and recall[0] == server["command"]
    notes = (home / ".claude/CLAUDE.md").read_text()
    assert "recall" in notes and "correct" in notes and "sleep" in notes


EDITS: list[tuple[str, str, str, str, str]] = [
    ("claude-code", "user", ".claude.json", '{"a": 1}\n', '"zz": true'),
    ("codex", "user", ".codex/config.toml", "# keep me\nmodel = \"o3\"\n", "[extra]\nx = 1\n"),
    ("cursor", "project", ".cursor/hooks.json", '{"version": 1, "hooks": {}}\n', '"other": 2'),
    ("opencode", "project", "AGENTS.md", "Rules.\n", "More rules of mine.\n"),
]
"""(agent, scope, file, its bytes before, what the user adds after the install): a JSON member added at the
root's end, or text appended."""


def _user_edit(path: Path, addition: str) -> None:
    text = path.read_text()
    if path.suffix == ".json":
        cut = text.rstrip().rindex("}")
        text = text[:cut].rstrip() + ",\n  " + addition + "\n}\n"
    else:
        text += addition
    path.write_text(text)


@pytest.mark.parametrize(("agent", "scope", "rel", "original", "addition"), EDITS, ids=[e[0] for e in EDITS])
def test_a_file_edited_since_install_loses_only_our_fragment(
        memory: Path, home: Path, project: Path, capsys: pytest.CaptureFixture[str],
        agent: str, scope: str, rel: str, original: str, addition: str) -> None:
    base = home if scope == "user" else project
    _seed({rel: original.encode()}, base)
    assert _run(memory, project, "install", agent, scope) == 0
    _user_edit(base / rel, addition)
    capsys.readouterr()
    assert _run(memory, project, "uninstall", agent, scope) == 0
    assert "warning" not in capsys.readouterr().err
    left = (base / rel).read_text()
    assert "git-memhtml" not in left
    assert addition.strip() in left
    if rel.endswith(".json"):
        expected = json.loads(original)
        expected.update(json.loads("{" + addition + "}"))
        assert json.loads(left) == expected
    else:
        assert left == original + addition


def test_an_edited_fragment_is_left_in_place_and_reported(memory: Path, home: Path, project: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(memory, project, "install", "cursor", "user") == 0
    mcp = home / ".cursor/mcp.json"
    doc = json.loads(mcp.read_text())
    doc["mcpServers"]["git-memhtml"]["args"].append("--verbose")
    mcp.write_text(json.dumps(doc))
    capsys.readouterr()
    assert _run(memory, project, "uninstall", "cursor", "user") == 0
    err = capsys.readouterr().err
    assert "warning:" in err and str(mcp) in err and "edited" in err
    assert json.loads(mcp.read_text()) == doc
    assert not (home / ".cursor/hooks.json").exists()
    assert _receipts(home) == {}


BROKEN: list[tuple[str, str, str, bytes]] = [
    ("claude-code", "user", ".claude.json", b'{"mcpServers": {},}'),
    ("codex", "user", ".codex/config.toml", b"model = \n"),
    ("cursor", "project", ".cursor/hooks.json", b"// comment\n{}"),
    ("opencode", "user", ".config/opencode/opencode.json", b"[1, 2]"),
    ("opencode", "project", "opencode.jsonc", b"{ // mine\n}"),
    ("claude-code", "project", "CLAUDE.md", b"caf\xe9"),
]
"""A file that does not parse (or is not UTF-8, or is the JSONC file beside ``opencode.json``) refuses the install."""


@pytest.mark.parametrize(("agent", "scope", "rel", "data"), BROKEN, ids=[f"{b[0]}-{b[2]}" for b in BROKEN])
def test_an_unparseable_config_is_refused_naming_it_and_nothing_is_written(
        memory: Path, home: Path, project: Path, capsys: pytest.CaptureFixture[str],
        agent: str, scope: str, rel: str, data: bytes) -> None:
    _seed({rel: data}, home if scope == "user" else project)
    before = _snapshot(home, project)
    capsys.readouterr()
    assert _run(memory, project, "install", agent, scope) == 1
    err = capsys.readouterr().err
    assert f"error: {home if scope == 'user' else project}" in err and Path(rel).name in err
    assert "nothing was written" in err and "\nhint: " in err
    assert _snapshot(home, project) == before
    assert _receipts(home) == {}


def test_a_symlinked_config_is_refused(memory: Path, home: Path, project: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    real = tmp_path / "dotfiles-mcp.json"
    real.write_text("{}\n")
    (home / ".cursor").mkdir()
    (home / ".cursor/mcp.json").symlink_to(real)
    before = _snapshot(home, project)
    assert _run(memory, project, "install", "cursor", "user") == 1
    assert "is a symlink" in capsys.readouterr().err
    assert _snapshot(home, project) == before and real.read_text() == "{}\n"


def test_not_a_memory_repository_is_refused(tmp_path: Path, home: Path, project: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    plain = tmp_path / "plain"
    subprocess.run(["git", "init", "-q", str(plain)], check=True)
    assert _run(plain, project, "install", "codex", "user") == 1
    assert "not a memory repository" in capsys.readouterr().err
    assert not (home / ".codex").exists()


def test_another_repository_is_refused_until_uninstall(memory: Path, tmp_path: Path, home: Path, project: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other"
    assert main(["init", str(other)]) == 0
    assert _run(memory, project, "install", "opencode", "user") == 0
    installed = _snapshot(home, project)
    capsys.readouterr()
    assert _run(other, project, "install", "opencode", "user") == 1
    assert "already installed" in capsys.readouterr().err
    assert _snapshot(home, project) == installed


def test_two_agents_sharing_agents_md_uninstall_in_any_order(memory: Path, home: Path, project: Path) -> None:
    _seed({"AGENTS.md": b"# Team rules\n"}, project)
    before = _snapshot(home, project)
    assert _run(memory, project, "install", "codex", "project") == 0
    assert _run(memory, project, "install", "opencode", "project") == 0
    assert _run(memory, project, "uninstall", "codex", "project") == 0
    assert "(codex)" not in (project / "AGENTS.md").read_text()
    assert _run(memory, project, "uninstall", "opencode", "project") == 0
    assert _snapshot(home, project) == before


HOSTILE = 'we"ird \'path\' $(x)\nline'


def _toml_args(path: Path) -> Any:
    return tomllib.loads(path.read_text())["mcp_servers"]["git-memhtml"]["args"]


def test_a_hostile_repository_path_stays_data(tmp_path: Path, home: Path, project: Path) -> None:
    repo = tmp_path / HOSTILE
    assert main(["init", str(repo)]) == 0
    want = str(repo.resolve())
    for agent in AGENT_NAMES:
        assert _run(repo, project, "install", agent, "project") == 0
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["git-memhtml"]["args"][1] == want
    assert json.loads((project / ".cursor/mcp.json").read_text())["mcpServers"]["git-memhtml"]["args"][1] == want
    assert json.loads((project / "opencode.json").read_text())["mcp"]["git-memhtml"]["command"][2] == want
    assert _toml_args(project / ".codex/config.toml") == ["-C", want, "mcp"]
    for rel, event in ((".claude/settings.json", "UserPromptSubmit"), (".codex/hooks.json", "UserPromptSubmit")):
        line = json.loads((project / rel).read_text())["hooks"][event][0]["hooks"][0]["command"]
        assert shlex.split(line)[1:4] == ["-C", want, "session"]
    line = json.loads((project / ".cursor/hooks.json").read_text())["hooks"]["beforeSubmitPrompt"][0]["command"]
    assert shlex.split(line)[2] == want
    for agent in AGENT_NAMES:
        assert _run(repo, project, "uninstall", agent, "project") == 0
    assert list(project.iterdir()) == []


@pytest.mark.parametrize("agent", AGENT_NAMES)
def test_a_real_subprocess_installs_and_uninstalls(memory: Path, home: Path, project: Path, agent: str) -> None:
    _seed(SEEDS[(agent, "project")], project)
    before = _snapshot(home, project)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}

    def run(verb: str) -> dict[str, Any]:
        done = subprocess.run([sys.executable, "-m", "git_memhtml", "-C", str(memory), "agent", verb, agent,
                               "--scope", "project", "--json"], cwd=project, env=env, capture_output=True,
                              text=True, check=False, timeout=60)
        assert done.returncode == 0, done.stderr
        envelope: dict[str, Any] = json.loads(done.stdout)
        return envelope

    assert run("install")["data"]["action"] == "installed"
    assert run("install")["data"]["action"] == "already installed"
    assert run("uninstall")["data"]["action"] == "uninstalled"
    assert _snapshot(home, project) == before


def test_a_large_file_is_put_back_by_cutting_our_splice_out(memory: Path, home: Path, project: Path) -> None:
    big = '{"projects": {' + ", ".join(f'"/p/{i}": {{"n": {i}}}' for i in range(20000)) + "}}\n"
    assert len(big) > 256 * 1024  # above KEEP_BYTES: the receipt keeps its SHA-256 only
    _seed({".claude.json": big.encode()}, home)
    assert _run(memory, project, "install", "claude-code", "user") == 0
    receipt = json.loads(next(iter(_receipts(home).values())))
    record = next(f for f in receipt["files"] if f["path"].endswith(".claude.json"))
    assert record["before"]["bytes_b64"] is None and record["before"]["sha256"].startswith("sha256:")
    assert _run(memory, project, "uninstall", "claude-code", "user") == 0
    assert (home / ".claude.json").read_text() == big


def test_a_file_reformatted_since_install_loses_only_our_entry(memory: Path, home: Path, project: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    _seed({".mcp.json": b'{"mcpServers": {"mine": {"command": "x"}}}'}, project)
    assert _run(memory, project, "install", "claude-code", "project") == 0
    doc = json.loads((project / ".mcp.json").read_text())
    (project / ".mcp.json").write_text(json.dumps(doc, indent=4, sort_keys=True))  # an editor reformats it
    assert _run(memory, project, "uninstall", "claude-code", "project") == 0
    assert "warning" not in capsys.readouterr().err
    assert json.loads((project / ".mcp.json").read_text()) == {"mcpServers": {"mine": {"command": "x"}}}
