"""The published ``memhtml-validate`` hook, end to end with the real pre-commit framework.

The hook repository is a snapshot of this project's work tree (pyproject, package, manifest) committed into a
temporary git repository, so the test exercises exactly the code under test whatever the state of the project's
own git history. pre-commit builds the hook's virtualenv with pip (``language: python``) into a temporary
``PRE_COMMIT_HOME``; a memory repository then installs the hook, and real ``git commit`` runs are refused or
accepted.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "document" / "golden"
SNAPSHOT = (
    "pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "git_memhtml", "build_backend", "docs/git-memhtml.1",
)


def sh(
    cwd: Path, *args: str, env: dict[str, str], check: bool = True, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run a command; on an unexpected failure show its output in the assertion."""
    proc = subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    if check:
        assert proc.returncode == 0, f"{args} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def snapshot_hook_repo(target: Path, env: dict[str, str]) -> str:
    """Copy the project's installable files into ``target``, commit them, return the commit sha."""
    target.mkdir()
    for name in SNAPSHOT:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    sh(target, "git", "init", "-q", "--template=", "-b", "main", env=env)
    sh(target, "git", "add", "--", *SNAPSHOT, env=env)
    sh(target, "git", "commit", "-q", "--no-verify", "-m", "hook snapshot", env=env)
    return sh(target, "git", "rev-parse", "HEAD", env=env).stdout.strip()


def test_manifest_publishes_memhtml_validate() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hook = next(h for h in hooks if h["id"] == "memhtml-validate")
    assert (hook["language"], hook["entry"]) == ("python", "git-memhtml validate")
    files = re.compile(hook["files"])  # pre-commit matches with re.search; any case, as validate and the index do
    assert all(files.search(p) for p in ("areas/x.html", "areas/inbox/UP.HTML", "projects/a/B.Html"))
    assert not any(files.search(p) for p in ("areas/x.htm", "areas/x.html.bak", "areas/x.HTML.orig"))
    exclude = re.compile(hook["exclude"])
    assert exclude.search("index.html") and exclude.search("areas/oncall/index.html")
    assert exclude.search("README.html") and not exclude.search("areas/README.html")
    assert not exclude.search("areas/oncall/reindex.html") and not exclude.search("areas/index.html.bak")
    # pre-commit does not tag a symlink as "file": without "symlink" a symlinked memory is never checked.
    # pre-commit's default "types" is [file] and is ANDed with types_or, so it must be emptied explicitly.
    assert hook["types"] == [] and set(hook["types_or"]) == {"file", "symlink"}


@pytest.mark.slow
def test_git_commit_is_refused_for_a_bad_memory_and_accepted_for_a_good_one(tmp_path: Path) -> None:
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), PRE_COMMIT_COLOR="never")
    env.pop("SKIP", None)
    sha = snapshot_hook_repo(tmp_path / "hook", env)
    sh(tmp_path, sys.executable, "-m", "pre_commit", "validate-manifest",
       str(tmp_path / "hook" / ".pre-commit-hooks.yaml"), env=env)

    repo = tmp_path / "memories"
    sh(tmp_path, "git", "init", "-q", "--template=", "-b", "main", str(repo), env=env)
    config = {"repos": [{"repo": str(tmp_path / "hook"), "rev": sha, "hooks": [{"id": "memhtml-validate"}]}]}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    sh(repo, "git", "add", ".pre-commit-config.yaml", env=env)
    sh(repo, "git", "commit", "-q", "-m", "pre-commit config", env=env)
    sh(repo, sys.executable, "-m", "pre_commit", "install", env=env)
    assert (repo / ".git" / "hooks" / "pre-commit").is_file()
    sh(repo, sys.executable, "-m", "pre_commit", "install-hooks", env=env, timeout=900)  # builds the venv (pip)
    head = sh(repo, "git", "rev-parse", "HEAD", env=env).stdout

    good = (GOLDEN / "example_memory.html").read_text(encoding="utf-8")
    (repo / "areas" / "inbox").mkdir(parents=True)
    bad_path = repo / "areas" / "inbox" / "bad.html"
    bad_path.write_text(good.replace('datetime="2026-01-02"', 'datetime="2026-13-45"'), encoding="utf-8")
    sh(repo, "git", "add", "areas/inbox/bad.html", env=env)
    refused = sh(repo, "git", "commit", "-m", "add a bad memory", env=env, check=False)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0, output
    assert "memhtml validate" in output and "Failed" in output
    assert 'areas/inbox/bad.html: <time datetime="2026-13-45"> is not a valid ISO date or datetime' in output
    assert re.search(r"^validate failed: \d+ files? checked, 1 violation", output, re.M), output  # docs/cli.md
    assert sh(repo, "git", "rev-parse", "HEAD", env=env).stdout == head

    sh(repo, "git", "rm", "-q", "--cached", "areas/inbox/bad.html", env=env)
    bad_path.unlink()
    (repo / "areas" / "inbox" / "good.html").write_text(good, encoding="utf-8")
    (repo / "areas" / "inbox" / "index.html").write_text("<p>generated listing, not a memory</p>", encoding="utf-8")
    sh(repo, "git", "add", "areas/inbox/good.html", "areas/inbox/index.html", env=env)
    accepted = sh(repo, "git", "commit", "-m", "add a good memory", env=env, check=False)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "memhtml validate" in accepted.stdout + accepted.stderr and "Passed" in accepted.stdout + accepted.stderr
    tree = sh(repo, "git", "ls-tree", "-r", "--name-only", "HEAD", env=env).stdout.split()
    assert "areas/inbox/good.html" in tree and "areas/inbox/index.html" in tree
    head = sh(repo, "git", "rev-parse", "HEAD", env=env).stdout

    (repo / "areas" / "inbox" / "linked.html").symlink_to("good.html")
    sh(repo, "git", "add", "areas/inbox/linked.html", env=env)
    linked = sh(repo, "git", "commit", "-m", "add a symlinked memory", env=env, check=False)
    output = linked.stdout + linked.stderr
    assert linked.returncode != 0, output
    assert "areas/inbox/linked.html: is a symlink: refused, symlinks are never followed" in output
    assert sh(repo, "git", "rev-parse", "HEAD", env=env).stdout == head
