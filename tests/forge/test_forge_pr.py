"""``sleep pr``: push the run's branch, then gh (create, then edit) or the compare address; the body file."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from git_memhtml.sleep.landing.forge import compare_url, forge_web_base
from tests.forge.forge_helpers import NOW, cli, git, memory_repo, sleep_run

STUB_GH = """#!/bin/sh
# A stand-in for the GitHub CLI: records argv and the body file, answers `pr list` from its own state.
log="{log}"
state="{state}"
printf '%s\\n' "$*" >> "$log"
if [ "$1 $2" = "pr list" ]; then
  if [ -f "$state" ]; then cat "$state"; else echo '[]'; fi
  exit 0
fi
prev=""
for arg in "$@"; do
  if [ "$prev" = "--body-file" ]; then cp "$arg" "$log.body.$2"; fi
  prev="$arg"
done
if [ "$1 $2" = "pr create" ]; then
  echo '[{{"number": 7, "url": "https://github.example/acme/memory/pull/7"}}]' > "$state"
  echo "https://github.example/acme/memory/pull/7"
fi
exit 0
"""


def _stub_gh(folder: Path) -> Path:
    folder.mkdir()
    log = folder / "gh.log"
    script = folder / "gh"
    script.write_text(STUB_GH.format(log=log, state=folder / "state.json"))
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return log


@pytest.fixture
def pushed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path, str]:
    """A memory repo with one run and a local bare remote ``origin``."""
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    repo = memory_repo(tmp_path, capsys)
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "origin", "main")
    return repo, bare, sleep_run(repo, capsys)


def test_pr_with_gh_creates_then_updates_and_passes_the_body_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    pushed: tuple[Path, Path, str],
) -> None:
    repo, bare, run = pushed
    log = _stub_gh(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    code, first = cli(capsys, "-C", str(repo), "sleep", "pr", run)
    assert code == 0, first
    data = first["data"]
    assert git(bare, "rev-parse", f"refs/heads/{run}").strip() == git(repo, "rev-parse", run).strip()
    assert (data["forge"], data["action"], data["url"]) == ("gh", "created", "https://github.example/acme/memory/pull/7")
    body_file = Path(data["bodyFile"])
    assert body_file.parent == repo / ".git" / "memhtml" / "pr" and body_file.name == run.replace("/", "-") + ".md"
    calls = log.read_text().splitlines()
    create = next(c for c in calls if c.startswith("pr create"))
    assert f"--head {run} --base main --title {data['title']} --body-file {body_file}" in create
    assert (tmp_path / "bin" / "gh.log.body.create").read_text() == body_file.read_text()
    assert body_file.read_text().startswith(f"## Sleep run `{run}`")
    assert not git(repo, "status", "--porcelain")  # the body lives in the git dir, never in the work tree

    code, second = cli(capsys, "-C", str(repo), "sleep", "pr", run)
    assert code == 0 and second["data"]["action"] == "updated"
    edit = next(c for c in log.read_text().splitlines() if c.startswith("pr edit"))
    assert edit.startswith("pr edit 7 --title") and f"--body-file {body_file}" in edit
    assert sum(1 for c in log.read_text().splitlines() if c.startswith("pr create")) == 1


def test_pr_without_gh_prints_the_compare_address_of_a_github_remote(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, pushed: tuple[Path, Path, str]
) -> None:
    repo, bare, run = pushed
    monkeypatch.setenv("PATH", os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                                               if not (Path(p) / "gh").exists()))
    git(repo, "remote", "set-url", "origin", "git@github.com:acme/memory.git")
    git(repo, "config", f"url.{bare.as_uri()}.pushInsteadOf", "git@github.com:acme/memory.git")
    code, env = cli(capsys, "-C", str(repo), "sleep", "pr", run)
    assert code == 0, env
    assert env["data"]["url"] == f"https://github.com/acme/memory/compare/main...{run}?expand=1"
    assert env["data"]["action"] == "compare" and Path(env["data"]["bodyFile"]).is_file()
    assert git(bare, "rev-parse", f"refs/heads/{run}").strip() == env["data"]["pushedSha"]
    capsys.readouterr()
    from git_memhtml.cli.main import main

    assert main(["-C", str(repo), "sleep", "pr", run]) == 0
    out = capsys.readouterr().out
    assert "open the pull request: https://github.com/acme/memory/compare/" in out and "body: " in out


def test_pr_refusals_name_the_fix(capsys: pytest.CaptureFixture[str], pushed: tuple[Path, Path, str]) -> None:
    repo, _, run = pushed
    code, env = cli(capsys, "-C", str(repo), "sleep", "pr", "sleep/1999-01-01")
    assert code == 1 and env["code"] == "ERR_NO_RUN" and "sleep status" in env["hint"]  # unknown runs exit 1 everywhere
    code, env = cli(capsys, "-C", str(repo), "sleep", "pr", run, "--remote", "upstream")
    assert code == 2 and env["hint"].startswith("git remote add upstream")


@pytest.mark.parametrize(
    ("remote", "expected"),
    [
        ("git@github.com:acme/memory.git", ("github", "https://github.com/acme/memory")),
        ("https://user:token@github.com/acme/memory.git", ("github", "https://github.com/acme/memory")),
        ("ssh://git@git.example.org:2222/team/mem", ("github", "https://git.example.org/team/mem")),
        ("https://gitlab.example.com/group/sub/memory.git", ("gitlab", "https://gitlab.example.com/group/sub/memory")),
        ("/srv/git/memory.git", None),
        ("file:///srv/git/memory.git", None),
        ("../memory", None),
        ("https://example.com/", None),
    ],
)
def test_forge_web_base(remote: str, expected: tuple[str, str] | None) -> None:
    assert forge_web_base(remote) == expected


def test_compare_url_shapes() -> None:
    assert compare_url("git@gitlab.com:g/r.git", "sleep/2026-02-01") == (
        "https://gitlab.com/g/r/-/merge_requests/new?merge_request%5Bsource_branch%5D=sleep%2F2026-02-01"
        "&merge_request%5Btarget_branch%5D=main")
    assert compare_url("/local/path.git", "sleep/x") is None
    assert json.dumps(compare_url("git@github.com:o/r.git", "sleep/2026-02-01", "trunk")) == (
        '"https://github.com/o/r/compare/trunk...sleep/2026-02-01?expand=1"')


@pytest.mark.parametrize("base", ["--exec=touch /tmp/x", "-main", "no such/..", "a..b", "main.lock", "@{-1}", "",
                                  "x~1", "refs/../main"])
def test_pr_refuses_a_base_that_is_not_a_branch_name_before_pushing(
    capsys: pytest.CaptureFixture[str], pushed: tuple[Path, Path, str], base: str,
) -> None:
    repo, bare, run = pushed
    code, env = cli(capsys, "-C", str(repo), "sleep", "pr", run, f"--base={base}")
    assert code == 2 and env["code"] == "ERR_INVALID_FLAG", env
    assert env["error"].startswith("--base ") and "check-ref-format" in env["hint"]
    assert not git(bare, "branch", "--list", run).strip()  # nothing was pushed
