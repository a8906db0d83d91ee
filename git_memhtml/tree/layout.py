"""Where memories live: PARA placement, slugs with ordinals, and the archive algebra (docs/layout.md §2).

Pure functions over repository paths (POSIX, no leading slash). The path is the id.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence

from git_memhtml.document.model import PARA_BUCKETS

SLUG_MAX = 80
"""Slug length cap (docs/layout.md §2.3)."""
MAX_ORDINAL = 1000
"""Collision ordinals tried before giving up (docs/layout.md §2.3)."""
INDEX_NAME = "index.html"
"""The generated folder listing's file name (docs/layout.md §2.7)."""
SITEMAP_PATH = "sitemap.xml"
"""The generated sitemap, at the repository root (docs/layout.md §2.7)."""
GENERATED_NAMES = frozenset({INDEX_NAME, SITEMAP_PATH})
"""File names that are generated, never memories (docs/layout.md §2.1)."""
ARCHIVE_MIRROR = re.compile(r"^archive/\d{4,}/")
"""The archive mirror prefix ``archive/<YYYY>/`` of an archived memory (docs/layout.md §2.4); the one spelling of it."""
_ARCHIVE_RE = re.compile(ARCHIVE_MIRROR.pattern + r"(.+)$")

INBOX_DIR = "areas/inbox"
"""Where a memory with no better placement goes (docs/layout.md §2.2)."""
ARCS_DIR = "areas/arcs"
"""Where arcs live (docs/layout.md §2.2)."""
PEOPLE_DIR = "resources/people"
"""Where ``person-links`` mints person files, ``resources/people/<slugify(name)>.html`` (docs/layout.md §2.5). What
makes a file a person file is the file itself (``tree.people``), never this folder; placement files no fact here
(docs/layout.md §2.2)."""
STATE_DIR = ".memhtml/state"
"""The committed state folder (docs/layout.md §2.1, §2.6)."""
ACCESS_SIDECAR = f"{STATE_DIR}/access.jsonl"
"""The committed access sidecar, one JSON line per path (docs/layout.md §2.1, docs/index.md §3.8; docs/design.md
§3.2)."""
REPORT_DIR = ".memhtml/sleep"
"""Where run reports and ledgers are committed (docs/layout.md §2.1)."""


def slugify(text: str, *, cap: int = SLUG_MAX) -> str:
    """NFKD, drop combining marks, lowercase, non-``[a-z0-9]`` runs → ``-``, trim, cap (re-trim); empty →
    ``untitled``."""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()
    slug = re.sub(r"[^a-z0-9]+", "-", stripped).strip("-")
    slug = slug[:cap].strip("-")
    return slug or "untitled"


def normalize_path(path: str) -> str:
    """Strip a leading ``/``, collapse ``//`` and drop one trailing ``/``."""
    path = re.sub(r"/{2,}", "/", path.strip())
    path = path.lstrip("/")
    return path[:-1] if path.endswith("/") else path


MEMORY_SUFFIX = ".html"
"""The memory file extension, matched in any case (``.html``, ``.HTML``, ``.Html``): what git and editors on a
case-insensitive file system produce is still a memory (issue 8 item 11)."""


def has_memory_suffix(name: str) -> bool:
    """Whether a file name ends in ``.html`` in any case."""
    return name.lower().endswith(MEMORY_SUFFIX)


def is_valid_memory_path(path: str) -> bool:
    """Bucket-rooted, ``.html`` (any case), at least two segments, no empty, ``.`` or ``..`` segment, not a
    generated name."""
    parts = path.split("/")
    if len(parts) < 2 or parts[0] not in PARA_BUCKETS or not has_memory_suffix(path):
        return False
    if any(p in ("", ".", "..") for p in parts):
        return False
    return parts[-1] not in GENERATED_NAMES


def is_indexable(path: str) -> bool:
    """Return whether ``path`` is a memory the index holds (docs/layout.md §2.1: ``.html`` under a bucket, not
    generated)."""
    return is_valid_memory_path(path)


def is_archived_path(path: str) -> bool:
    """Return whether ``path`` lies under ``archive/``."""
    return path.startswith("archive/")


def archive_path_for(path: str, year: int | str) -> str:
    """Return ``archive/<YYYY>/<path>`` (docs/layout.md §2.4)."""
    return f"archive/{int(year):04d}/{path}"


def unarchive_path(path: str) -> str:
    """Strip exactly one ``archive/<YYYY>/`` prefix; a path without one is returned unchanged."""
    match = _ARCHIVE_RE.match(path)
    return match.group(1) if match else path


_ORDINAL = re.compile(r"^(?P<stem>.+)-\d+(?P<ext>\.[^./]+)$")


def archive_sources(added: str) -> tuple[str, ...]:
    """The live paths whose archive move lands at ``added``: itself without ``archive/<YYYY>/`` and, for the ordinal
    form ``<stem>-<n>.html`` of a collision (``store.edits.free_archive_path``), its de-ordinaled form; ``()`` for a
    path outside the archive mirror (docs/layout.md §2.4).

    >>> archive_sources("archive/2026/areas/x-2.html")
    ('areas/x-2.html', 'areas/x.html')
    """
    rest = unarchive_path(added)
    if rest == added:
        return ()
    ordinal = _ORDINAL.match(rest)
    return (rest, ordinal.group("stem") + ordinal.group("ext")) if ordinal else (rest,)


def placement_for(
    memory_type: str,
    *,
    path: str | None = None,
    workspace: str | None = None,
    tags: Sequence[str] = (),
) -> str:
    """Return the directory a new memory goes to (docs/layout.md §2.2, total).

    An explicit valid ``path`` returns its directory; then arc → ``areas/arcs``; task → the workspace's
    ``tasks/`` or ``areas/inbox/tasks``; a workspace → ``projects/<slug(ws)>``; semantic/procedural/precedent with a
    tag → ``resources/<slug(tag)>``; else ``areas/inbox``. Entities choose no folder: a fact about a person is not
    that person's file, so nothing is filed under ``resources/people`` but by an explicit ``path`` (the original's
    rule "semantic with a ``person:`` entity → ``resources/people``" is dropped on purpose, issue 27).
    """
    if path:
        normal = normalize_path(path)
        if is_valid_memory_path(normal):
            return normal.rsplit("/", 1)[0]
    ws = workspace.strip() if workspace else ""
    if memory_type == "arc":
        return ARCS_DIR
    if memory_type == "task":
        return f"projects/{slugify(ws)}/tasks" if ws else f"{INBOX_DIR}/tasks"
    if ws:
        return f"projects/{slugify(ws)}"
    first_tag = next((t for t in tags if t.strip()), None)
    if memory_type in ("semantic", "procedural", "precedent") and first_tag:
        return f"resources/{slugify(first_tag)}"
    return INBOX_DIR


def filename_stem(title: str, memory_type: str, *, date: str) -> str:
    """Return the file stem: ``slugify(title)``, prefixed ``YYYYMMDD-`` for episodic (outside the 80 budget).

    Args:
        date: the write instant ``YYYY-MM-DD…``; only its date part is used.
    """
    slug = slugify(title)
    if memory_type == "episodic":
        return date[:10].replace("-", "") + "-" + slug
    return slug


def free_path(directory: str, stem: str, taken: Callable[[str], bool]) -> str | None:
    """Return ``<directory>/<stem>.html`` or the first free ``-2``, ``-3``… ordinal, or ``None`` past 1000.

    The suffix stays inside the 80-character slug budget: the stem is cut (and re-trimmed) to make room.
    """
    candidate = f"{directory}/{stem}.html"
    if not taken(candidate):
        return candidate
    for ordinal in range(2, MAX_ORDINAL + 1):
        suffix = f"-{ordinal}"
        dated = stem[:8].isdigit() and stem[8:9] == "-"
        prefix, base = (stem[:9], stem[9:]) if dated else ("", stem)
        room = SLUG_MAX - len(suffix)
        cut = base[:room].rstrip("-") or "untitled"
        candidate = f"{directory}/{prefix}{cut}{suffix}.html"
        if not taken(candidate):
            return candidate
    return None
