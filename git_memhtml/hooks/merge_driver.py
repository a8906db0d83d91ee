"""``git memhtml merge-driver %O %A %B %P``: git's file-level merge of generated artifacts (docs/design.md §3.10).

Contract (gitattributes(5) "Defining a custom merge driver"; docs/git.md §2.1, §2.4): read the three temporary
files, write the result into ``%A``, exit 0 when clean and 1 on a conflict, above 128 when the driver itself
fails. It never opens the repository or the work tree: under ``ort`` the work tree is not merged yet when the
driver runs (docs/git.md §2.3 #1). A path that is not a generated artifact, or a version that does not parse as
one (hand-edited), gets git's own text merge (``git merge-file``), which writes conflict markers into ``%A``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from git_memhtml.artifacts.merge import merge_artifact
from git_memhtml.config import live_env
from git_memhtml.gitrepo.process import run_git

CLEAN = 0
CONFLICT = 1
DRIVER_FAILED = 129
"""Above 128: git treats the merge as failed rather than conflicted (gitattributes(5))."""


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".memhtml-tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def text_merge(base: Path, ours: Path, theirs: Path, label: str, *, env: Mapping[str, str] | None = None) -> int:
    """git's own line merge of the three files into ``ours`` (conflict markers on overlap): 0 clean, 1 conflict.
    ``env`` is the base of the ``git merge-file`` child (default :func:`git_memhtml.config.live_env`).

    Raises:
        OSError: ``git`` cannot be run. RuntimeError: ``git merge-file`` failed (exit < 0 or > 127).
    """
    proc = run_git(["merge-file", "-L", f"ours:{label}", "-L", f"base:{label}", "-L", f"theirs:{label}",
                    str(ours), str(base), str(theirs)], cwd=None, env=live_env() if env is None else env, text=False)
    if proc.returncode < 0 or proc.returncode > 127:
        raise RuntimeError(f"git merge-file exited {proc.returncode}")
    return CLEAN if proc.returncode == 0 else CONFLICT


def run_merge_driver(base: Path, ours: Path, theirs: Path, path: str, *, env: Mapping[str, str] | None = None) -> int:
    """Merge ``path``'s three versions (files ``base``, ``ours``, ``theirs``) into ``ours``; return git's exit code.
    ``env``: as for :func:`text_merge`.

    Raises:
        OSError: a temporary file cannot be read or written (the CLI maps it to :data:`DRIVER_FAILED`).
    """
    merged = merge_artifact(path, base.read_bytes(), ours.read_bytes(), theirs.read_bytes())
    if merged is None:
        return text_merge(base, ours, theirs, path, env=env)
    _write_atomic(ours, merged)
    return CLEAN
