"""Listing a work tree in tests without entering any ``.git`` folder.

``Path.rglob("*")`` walks the git dir too, and a sleep run's removed worktree is deleted there by a detached
``rm -rf`` (``GitRepo.remove_worktree``, docs/sleep.md §2.2) that may still be running when a test looks: a walk
that enters ``.git`` can meet a folder vanishing under it (FileNotFoundError). Tests about the work tree list it
with :func:`work_tree_paths`, which never descends into a folder named ``.git``."""

from __future__ import annotations

import os
from pathlib import Path


def work_tree_paths(root: Path) -> list[Path]:
    """Every file and folder under ``root`` outside any ``.git`` folder, sorted (what ``sorted(root.rglob("*"))``
    lists once the ``.git`` entries are dropped)."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        base = Path(folder)
        found.extend(base / d for d in dirs)
        found.extend(base / f for f in files if f != ".git")
    return sorted(found)
