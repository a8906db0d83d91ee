"""placement-triage's moves as the landing rail and the probe gate read them from a tree diff (docs/phases.md §1.14,
docs/sleep.md "The landing rail", docs/gate.md §9.2).

A re-filing is a deletion of ``areas/inbox/<name>`` plus an addition of ``areas/<topic>/<name>`` or
``resources/<topic>/<name>`` (one topic level; never the inbox, the arcs or the people folder) whose article is the
same: the two blobs have one content hash (``document.hash.content_hash``: head edits of later phases, such as an
inbound link rewrite, never change it). The shape alone is not enough, so a branch cannot pass off the deletion of
one memory and the addition of another under the same name as a move.
"""

from __future__ import annotations

from collections.abc import Sequence

from git_memhtml.document.hash import content_hash
from git_memhtml.errors import MemhtmlError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.gitrepo.values import TreeChange
from git_memhtml.tree.layout import ARCS_DIR, INBOX_DIR, PEOPLE_DIR

REFILE_BUCKETS: tuple[str, ...] = (INBOX_DIR.split("/")[0], PEOPLE_DIR.split("/")[0])
"""Buckets a topic folder lives in, ``areas`` and ``resources`` (carried over, seeds §16: ``areas/<topic>`` or
``resources/<topic>``); spelled from the layout's own folders."""

NOT_TOPICS: frozenset[str] = frozenset({INBOX_DIR, ARCS_DIR, PEOPLE_DIR})
"""Folders that are no topic: a move into one is no re-filing."""


def refiled_source(added: str) -> str | None:
    """The inbox path whose re-filing lands at ``added`` (``areas/inbox/<name>``), or ``None`` when ``added`` is not
    ``areas|resources/<topic>/<name>.html`` of a topic folder."""
    parts = added.split("/")
    if len(parts) != 3 or parts[0] not in REFILE_BUCKETS or f"{parts[0]}/{parts[1]}" in NOT_TOPICS:
        return None
    if not parts[2].lower().endswith(".html") or parts[1].startswith("."):
        return None
    return f"{INBOX_DIR}/{parts[2]}"


def _article_hash(repo: GitRepo, sha: str) -> str | None:
    try:
        return content_hash(repo.read_blob(sha).decode("utf-8"))
    except (MemhtmlError, UnicodeDecodeError, ValueError):
        return None


def refiled_moves(repo: GitRepo, changes: Sequence[TreeChange]) -> dict[str, str]:
    """``{inbox path deleted: topic path added}`` of every re-filing in ``changes`` (module docstring), each addition
    paired at most once, in path order. Two blob reads per candidate pair; a blob that cannot be read or parsed pairs
    nothing."""
    deleted = {c.path: c.old_sha for c in changes if c.new_sha is None and c.old_sha is not None}
    moves: dict[str, str] = {}
    for change in sorted(changes, key=lambda c: c.path):
        if change.old_sha is not None or change.new_sha is None:
            continue
        source = refiled_source(change.path)
        old_sha = deleted.get(source) if source is not None else None
        if source is None or old_sha is None or source in moves:
            continue
        before = _article_hash(repo, old_sha)
        if before is not None and before == _article_hash(repo, change.new_sha):
            moves[source] = change.path
    return moves
