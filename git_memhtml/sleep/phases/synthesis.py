"""What the two writing model phases share, arc-synthesis and compress (docs/phases.md §1.8, §1.10).

Both write a *new* memory whose path is ours, never the model's: a slug of the answer's title under a folder the
code chose, the first of ``<slug>.html``, ``<slug>-2.html`` … that is free on disk and not refused, and both key
their members through the batch kernel. Kept here so the two phases cannot drift apart on the path rules.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Collection, Sequence

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.model import Link
from git_memhtml.document.template import render_memory
from git_memhtml.errors import PathRefused
from git_memhtml.sleep.engine.batch import KeyedBatch
from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.sleep.engine.model import PhaseModel
from git_memhtml.tree.layout import is_valid_memory_path, slugify
from git_memhtml.tree.paths import symlink_problem, write_tree_file

SLEEP_AUTHOR = "agent:sleep"
"""Author of every memory a sleep run writes (docs/phases.md §0.6)."""

MAX_ORDINAL = 1000
"""Last ``-<n>`` tried for a free path (as the archive mirror does, docs/layout.md §2.4)."""


def rekey(batch: KeyedBatch, prefix: str) -> KeyedBatch:
    """``batch`` with keys ``<prefix>1..`` in place of ``m1..`` (same members, texts, framing and fence).

    Raises:
        ValueError: ``prefix`` is not lowercase letters.
    """
    if not prefix.isascii() or not prefix.isalpha() or not prefix.islower():
        raise ValueError(f"a key prefix is lowercase letters, not {prefix!r}")
    return dataclasses.replace(batch, keys=tuple(f"{prefix}{i}" for i in range(1, len(batch.keys) + 1)))


def free_memory_path(env: PhaseEnv, folder: str, title: str, refused: Collection[str]) -> str | None:
    """``<folder>/<slug(title)>.html`` or the first free ``<slug>-<n>.html``: a valid memory path, absent from
    disk (``lexists``: a dangling symlink counts as taken) and not in ``refused`` (paths taken this night, the
    members' own paths); ``None`` when all 1000 are taken or ``folder`` is not a memory folder."""
    slug = slugify(title)
    for ordinal in range(1, MAX_ORDINAL + 1):
        name = f"{slug}.html" if ordinal == 1 else f"{slug}-{ordinal}.html"
        path = f"{folder}/{name}"
        if not is_valid_memory_path(path):  # a generated name (``index``) or a folder outside the buckets
            continue
        if path not in refused and not os.path.lexists(env.repo.root / path):
            return path
    return None


def write_new_memory(env: PhaseEnv, path: str, text: str) -> None:
    """Write ``text`` at ``path`` in the run's work tree (folders made as needed) and stage it.

    Raises:
        PathRefused: the path or a folder on the way is a symlink (nothing is written). OSError: the disk failed.
    """
    problem = symlink_problem(env.repo.root, path)
    if problem is not None:
        raise PathRefused(f"{path}: {problem}", hint="replace the linked folder by a real one", path=path)
    (env.repo.root / path).parent.mkdir(parents=True, exist_ok=True)
    write_tree_file(env.repo.root, path, text.encode("utf-8"))
    env.repo.stage([path])


def usage_counts(model: PhaseModel) -> dict[str, int | float]:
    """The model usage keys the runner adds to the counts, as they stand (for an intermediate step commit)."""
    usage = model.usage()
    return dict(usage.wire()) if usage is not None else {}


def one_line(text: str) -> str:
    """``text`` with every whitespace run collapsed to one space and trimmed."""
    return " ".join(text.split())


def render_synthesis(memory_type: str, title: str, claim: str, paragraphs: Sequence[str], *, now: str,
                     links: Sequence[Link] = ()) -> str:
    """A memory sleep synthesised (an arc, a canonical): ``memory_type``, author ``agent:sleep``, the title and claim
    on one line, the non-blank paragraphs, ``links``; stamped ``now``.

    Raises:
        InvalidMemory: the render gate refused the text.
    """
    return render_memory(MemoryDraft(
        title=one_line(title),
        memory_type=memory_type,
        claim=one_line(claim),
        body=tuple(p.strip() for p in paragraphs if p.strip()),
        author=SLEEP_AUTHOR,
        links=tuple(links),
    ), now=now)
