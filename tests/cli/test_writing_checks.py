"""The checks every committing command runs first (App.before_write): identity, merge driver, detached HEAD;
and ``init`` refusing a bare repository. Real repositories, the real CLI in a subprocess where git identity must
be absent (no inherited ``~/.gitconfig``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from git_memhtml.cli.main import main
from git_memhtml.gitrepo.identity import IdentityUnknown, resolve_identity

WRITE = ["write", "--type", "semantic", "--title", "A fact", "--claim", "The sky is blue today."]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    assert main(["init", str(root)]) == 0
    assert main(["-C", str(root), *WRITE[:3], "--title", "Seed", "--claim", "A seed memory."]) == 0
    assert main(["-C", str(root), *WRITE[:3], "--title", "Other", "--claim", "Another memory, the link target."]) == 0
    return root


def _stream(tmp_path: Path) -> str:
    f = tmp_path / "one.jsonl"
    f.write_text(json.dumps({"op": "write", "title": "Batch fact", "type": "semantic", "body": "Batch body."}) + "\n")
    return str(f)


def _seed(repo: Path) -> str:
    return next(p.relative_to(repo).as_posix() for p in sorted((repo / "areas").rglob("seed*.html")))


def _other(repo: Path) -> str:
    return next(p.relative_to(repo).as_posix() for p in sorted((repo / "areas").rglob("other*.html")))


# (label, argv after -C REPO) of every command that commits on HEAD
WRITERS = [
    ("write", lambda repo, tmp: WRITE),
    ("apply", lambda repo, tmp: ["apply", "--file", _stream(tmp)]),
    ("correct", lambda repo, tmp: ["correct", _seed(repo), "--title", "Seed fixed", "--claim", "A fixed seed.",
                                   "--reason", "typo"]),
    ("archive", lambda repo, tmp: ["archive", _seed(repo), "--reason", "obsolete"]),
    ("link", lambda repo, tmp: ["link", _seed(repo), "relates_to", _other(repo)]),
]
"""Commands that commit on HEAD; ``sleep run`` (its own branch) joins the identity table below."""
IDENTITY_ROWS = [*WRITERS, ("sleep run", lambda repo, tmp: ["sleep", "run", "--date", "2026-01-20"])]


def _no_identity_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_AUTHOR", "GIT_COMMITTER")) and k != "EMAIL"}
    home = tmp_path / "nohome"
    home.mkdir(exist_ok=True)
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), GIT_CONFIG_NOSYSTEM="1")
    return env


@pytest.mark.parametrize(("label", "argv"), IDENTITY_ROWS, ids=[w[0] for w in IDENTITY_ROWS])
def test_without_identity_every_writer_refuses_with_gits_hint(repo: Path, tmp_path: Path, label: str,
                                                              argv: object) -> None:
    args = argv(repo, tmp_path)  # type: ignore[operator]
    head = _git(repo, "rev-parse", "HEAD")
    status = _git(repo, "status", "--porcelain")
    done = subprocess.run(["git-memhtml", "-C", str(repo), *args, "--json"], env=_no_identity_env(tmp_path),
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert "Author identity unknown" in done.stderr and 'hint: git config --global user.email' in done.stderr
    env = json.loads(done.stdout)
    assert env["code"] == "ERR_GIT" and "user.email" in env["hint"]
    assert _git(repo, "rev-parse", "HEAD") == head and _git(repo, "status", "--porcelain") == status
    assert _git(repo, "branch", "--list", "sleep/*") == ""  # no run branch either


def test_init_without_identity_refuses_before_scaffolding(tmp_path: Path) -> None:
    done = subprocess.run(["git-memhtml", "init", str(tmp_path / "new")], env=_no_identity_env(tmp_path),
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1 and "identity unknown" in done.stderr and "hint: git config" in done.stderr
    assert not (tmp_path / "new" / "projects").exists()


def test_git_environment_variables_still_count(repo: Path, tmp_path: Path) -> None:
    env = _no_identity_env(tmp_path)
    env.update(GIT_AUTHOR_NAME="Env Author", GIT_AUTHOR_EMAIL="env@example.invalid",
               GIT_COMMITTER_NAME="Env Committer", GIT_COMMITTER_EMAIL="envc@example.invalid")
    done = subprocess.run(["git-memhtml", "-C", str(repo), *WRITE], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert _git(repo, "log", "-1", "--format=%an <%ae> / %cn <%ce>") == \
        "Env Author <env@example.invalid> / Env Committer <envc@example.invalid>"


def test_resolution_follows_git() -> None:
    config = {"user.name": "Cfg", "user.email": "cfg@example.invalid"}
    assert resolve_identity("AUTHOR", {}, config.get).email == "cfg@example.invalid"
    assert resolve_identity("AUTHOR", {"GIT_AUTHOR_EMAIL": "e@x.invalid"}, config.get).email == "e@x.invalid"
    assert resolve_identity("AUTHOR", {"EMAIL": "m@x.invalid"}, {"user.name": "N"}.get).email == "m@x.invalid"
    for env, cfg in (({}, {}), ({}, {"user.email": "only@x.invalid"}), ({"GIT_AUTHOR_NAME": "  "}, {})):
        with pytest.raises(IdentityUnknown, match="identity unknown"):
            resolve_identity("AUTHOR", env, cfg.get)


def test_write_on_a_detached_head_warns(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _git(repo, "checkout", "-q", "--detach")
    capsys.readouterr()
    assert main(["-C", str(repo), *WRITE]) == 0
    err = capsys.readouterr().err
    assert err.count("warning: HEAD is detached") == 1 and "git switch -c" in err


def test_write_on_a_branch_does_not_warn(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["-C", str(repo), *WRITE]) == 0
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize(("label", "argv"), WRITERS, ids=[w[0] for w in WRITERS])
def test_a_clone_without_the_merge_driver_gets_one_hint_line(repo: Path, tmp_path: Path, label: str, argv: object,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    args = argv(clone, tmp_path)  # type: ignore[operator]
    capsys.readouterr()
    assert main(["-C", str(clone), *args]) == 0
    err = capsys.readouterr().err
    assert err.count("does not define that driver") == 1 and "git memhtml install" in err, err
    # once installed, no hint
    assert main(["-C", str(clone), "install"]) == 0
    capsys.readouterr()
    assert main(["-C", str(clone), *WRITE[:3], "--title", "After install", "--claim", "Installed now."]) == 0
    assert "does not define that driver" not in capsys.readouterr().err


@pytest.mark.parametrize("where", ["{bare}", "{bare}/refs/new-folder", "{bare}/objects"])
def test_init_in_a_bare_repository_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str) -> None:
    bare = tmp_path / "shared.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    before = sorted(p.relative_to(bare).as_posix() for p in bare.rglob("*"))
    target = where.format(bare=bare)
    capsys.readouterr()
    assert main(["init", target, "--json"]) == 1
    captured = capsys.readouterr()
    env = json.loads(captured.out)
    assert "bare repository" in env["error"] and "git clone" in env["hint"]
    assert "hint: clone it" in captured.err
    assert sorted(p.relative_to(bare).as_posix() for p in bare.rglob("*")) == before


def test_init_dash_c_honours_the_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bare = tmp_path / "shared.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    assert main(["-C", str(bare), "init"]) == 1  # -C DIR init: DIR is where init works, and it is bare
    assert main(["-C", str(tmp_path), "init", "fresh"]) == 0
    assert (tmp_path / "fresh" / "areas" / "inbox" / ".gitkeep").is_file()
