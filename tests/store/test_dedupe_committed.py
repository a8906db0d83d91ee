"""Deduplication is against ``HEAD``, whatever the work tree shows the index (docs/store.md §5.2).

The index describes the work tree: a committed memory the work tree deletes or edits (or one a smaller-path
uncommitted twin displaces into ``index_refusals``) has no row under its committed hash. A writer that asked only the
index would commit the fact a second time. Table-driven: each row leaves the work tree in one such state, then
``write`` and ``apply`` (real processes) submit the committed fact again; both must answer "already stored" at the
committed path and commit nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOW = "2026-11-30T10:00:00Z"
_BIN = Path(sys.executable).with_name("git-memhtml")
EXE = [str(_BIN)] if _BIN.is_file() else [shutil.which("git-memhtml") or "git-memhtml"]
TITLE, CLAIM = "Shared outage", "Everyone saw the same outage."


def run(root: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMHTML_NOW": NOW, "MEMHTML_HOOK_DETACH": "0"}
    return subprocess.run([*EXE, *args], cwd=root, input=stdin, capture_output=True, text=True, env=env,
                          timeout=300, check=False)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def data_of(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    return json.loads(proc.stdout)["data"]  # type: ignore[no-any-return]


def _delete(root: Path, path: str) -> None:
    (root / path).unlink()


def _edit(root: Path, path: str) -> None:
    target = root / path
    target.write_text(target.read_text(encoding="utf-8").replace(CLAIM, "Nobody saw anything."), encoding="utf-8")


def _unstaged_delete(root: Path, path: str) -> None:
    """What a concurrent reader sees between a writer's ref move and its file write: HEAD has it, disk does not."""
    git(root, "rm", "-q", "--cached", path)
    (root / path).unlink()


def _smaller_twin(root: Path, path: str) -> None:
    """An uncommitted copy at a smaller path takes the content's row; the committed file is refused."""
    folder, _, name = path.rpartition("/")
    (root / folder / f"0-{name}").write_bytes((root / path).read_bytes())


def _replace_with_symlink(root: Path, path: str) -> None:
    target = root / path
    outside = root.parent / "outside.html"
    outside.write_bytes(target.read_bytes())
    target.unlink()
    target.symlink_to(outside)


HIDERS: list[tuple[str, Callable[[Path, str], None]]] = [
    ("deleted in the work tree", _delete),
    ("edited in the work tree", _edit),
    ("removed from git's index and the disk", _unstaged_delete),
    ("a smaller uncommitted twin holds the hash", _smaller_twin),
    ("replaced by a symlink", _replace_with_symlink),
]

WRITERS: list[tuple[str, Callable[[Path], subprocess.CompletedProcess[str]]]] = [
    ("write", lambda root: run(root, "write", "--type", "semantic", "--title", TITLE, "--claim", CLAIM, "--json")),
    ("apply", lambda root: run(root, "apply", "--json",
                               stdin=json.dumps({"title": TITLE, "type": "semantic", "claim": CLAIM}) + "\n")),
]


def _existing(name: str, proc: subprocess.CompletedProcess[str]) -> tuple[bool, str | None]:
    data = data_of(proc)
    if name == "write":
        return bool(data["deduped"]), data["existingPath"]
    (result,) = data["results"]
    return bool(result.get("deduped")), result.get("existingPath") or result.get("path")


@pytest.mark.parametrize(("hider", "hide"), HIDERS, ids=[h for h, _ in HIDERS])
@pytest.mark.parametrize(("name", "submit"), WRITERS, ids=[w for w, _ in WRITERS])
def test_a_committed_fact_the_work_tree_hides_is_still_already_stored(
        tmp_path: Path, hider: str, hide: Callable[[Path, str], None], name: str,
        submit: Callable[[Path], subprocess.CompletedProcess[str]]) -> None:
    root = tmp_path / "mem"
    assert run(tmp_path, "init", str(root)).returncode == 0
    first = run(root, "write", "--type", "semantic", "--title", TITLE, "--claim", CLAIM, "--json")
    assert first.returncode == 0, first.stderr
    path = data_of(first)["path"]
    hide(root, path)
    # the index now shows the work tree's state (exit 1 when it reports a file it refused, e.g. the twin)
    assert run(root, "index", "update").returncode in (0, 1)
    head = git(root, "rev-parse", "HEAD").strip()
    again = submit(root)
    assert again.returncode == 0, again.stderr
    deduped, existing = _existing(name, again)
    assert deduped and existing == path, f"{hider}: {again.stdout}"
    assert git(root, "rev-parse", "HEAD").strip() == head, "nothing committed"
