"""Read-only is not damage (issue 8 item 7): on a git dir that cannot be written, the reading commands serve the
healthy index read-only, with a warning that it cannot be caught up, and never quarantine it.

The git dir is made read-only for real: as an unprivileged user, ``chmod -R a-w .git``; as root (where permission
bits do not stop writes), a read-only bind mount of ``.git`` inside a private mount namespace
(``unshare -m``), so every write gets EROFS from the kernel. Without either the test skips, naming why.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WARNING = "cannot be opened for writing"


def _can_bind_read_only(folder: Path) -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = folder / "probe"
    probe.mkdir()
    script = f"mount --bind {probe} {probe} && mount -o remount,bind,ro {probe} && ! touch {probe}/x 2>/dev/null"
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, check=False)
    probe.rmdir()
    return done.returncode == 0


def _env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "MEMHTML_EMBED": "fake",
            "GIT_CONFIG_NOSYSTEM": "1", "MEMHTML_NOW": "2026-01-15T12:00:00Z", "PYTHONPATH": str(ROOT),
            "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository after a real demo run (memories, a merged sleep run, a built index)."""
    base = tmp_path_factory.mktemp("ro")
    if os.geteuid() == 0 and not _can_bind_read_only(base):
        pytest.skip("running as root without `unshare -m` mount rights: no real way to make .git read-only here")
    target = base / "demo"
    subprocess.run([sys.executable, "-m", "git_memhtml", "demo", str(target)], check=True, capture_output=True,
                   env=_env(base), timeout=300)
    return target


def _run_read_only(repo: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``git-memhtml ARGS`` in ``repo`` while its ``.git`` cannot be written."""
    command = shlex.join([sys.executable, "-m", "git_memhtml", *args])
    git = repo / ".git"
    if os.geteuid() == 0:
        script = f"mount --bind {git} {git} && mount -o remount,bind,ro {git} && exec {command}"
        argv = ["unshare", "-m", "sh", "-c", script]
    else:
        subprocess.run(["chmod", "-R", "a-w", str(git)], check=True)
        argv = ["sh", "-c", command]
    try:
        return subprocess.run(argv, capture_output=True, text=True, cwd=repo, env=_env(repo.parent), timeout=120,
                              check=False)
    finally:
        if os.geteuid() != 0:
            subprocess.run(["chmod", "-R", "u+w", str(git)], check=True)


def _digest(folder: Path) -> dict[str, str]:
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(folder.iterdir())
            if path.is_file()}


ROWS = [
    ("search", ["search", "checkout timeout"], "checkout"),
    ("list", ["list"], "areas/"),
    ("recall", ["recall", "checkout"], "## memories"),
    ("read", ["read", "resources/deploys/shipping-a-hotfix.html"], "Shipping a hotfix"),
    ("sleep-status", ["sleep", "status"], "merged"),
    ("sleep-review", ["sleep", "review"], "memories:"),
    ("doctor", ["doctor"], "no problems"),
]


@pytest.mark.parametrize(("args", "expected"), [pytest.param(a, e, id=i) for i, a, e in ROWS])
def test_reading_commands_serve_a_read_only_index(demo: Path, args: list[str], expected: str) -> None:
    memhtml = demo / ".git" / "memhtml"
    before = _digest(memhtml)
    done = _run_read_only(demo, args)
    assert done.returncode == 0, done.stderr
    assert expected in done.stdout
    assert WARNING in done.stderr and "it cannot be caught up" in done.stderr
    assert "internal error" not in done.stderr
    assert not any(name.endswith(".corrupt") for name in os.listdir(memhtml))
    assert _digest(memhtml) == before


def test_a_corrupt_index_on_a_read_only_git_dir_is_an_honest_error(demo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(demo, copy, symlinks=True)
    index = copy / ".git" / "memhtml" / "index.db"
    data = bytearray(index.read_bytes())
    data[100:4096] = b"\x00" * (4096 - 100)  # the schema page is destroyed: SQLite reports corruption
    index.write_bytes(bytes(data))
    index.chmod(stat.S_IRUSR | stat.S_IWUSR)
    done = _run_read_only(copy, ["list"])
    assert done.returncode == 1, done.stderr
    assert "is corrupt and cannot be moved aside" in done.stderr and "hint:" in done.stderr
    assert "internal error" not in done.stderr
