"""Small helpers of the git choke point: library versions, dates, folders (child processes: :mod:`process`)."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pygit2


def library_versions() -> str:
    """Return ``pygit2 X (libgit2 Y)`` for crash reports."""
    return f"pygit2 {getattr(pygit2, '__version__', '?')} (libgit2 {pygit2.LIBGIT2_VERSION})"


def parse_git_date(value: str) -> tuple[int, int] | None:
    """Parse a ``GIT_*_DATE`` value (ISO 8601 or ``@<epoch> [+hhmm]``) into (epoch seconds, offset minutes)."""
    value = value.strip()
    match = re.fullmatch(r"@?(\d+)(?:\s+([+-])(\d{2})(\d{2}))?", value)
    if match:
        offset = 0
        if match.group(2):
            offset = int(match.group(3)) * 60 + int(match.group(4))
            offset = -offset if match.group(2) == "-" else offset
        return int(match.group(1)), offset
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    delta = parsed.utcoffset()
    offset_minutes = int(delta.total_seconds() // 60) if delta is not None else 0
    return int(parsed.timestamp()), offset_minutes


def prune_empty_dirs(folder: Path, root: Path) -> None:
    """Remove ``folder`` and its now-empty parents, stopping at ``root`` or the first non-empty folder."""
    while folder != root and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


def enclosing_bare_repository(path: Path) -> Path | None:
    """The git dir of the bare repository that ``path`` is (or lies inside), or ``None`` (no repository, or one
    with a work tree). ``init`` refuses there: a bare repository has no work tree to hold memory files."""
    found = pygit2.discover_repository(str(path))
    if found is None:
        return None
    repo = pygit2.Repository(found)
    return Path(repo.path).resolve() if repo.is_bare else None


def write_atomic(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` through a temporary sibling ``.<name>.memhtml-tmp-<pid>`` and a rename
    (``os.replace``): a reader, git's status among them, sees the old bytes or the new ones, never a truncated file.

    Raises:
        OSError: the disk failed (the temporary file is removed).
    """
    temp = target.with_name(f".{target.name}.memhtml-tmp-{os.getpid()}")
    try:
        temp.write_bytes(data)
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
