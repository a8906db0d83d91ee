"""Read-command defaults the CLI shows in ``-h``, in a module that imports only the document vocabulary (so
``recall -h`` and ``neighbors -h`` load neither SQLite nor numpy, issue 12 item 4)."""

from __future__ import annotations

from git_memhtml.document.model import REL_CLASSES

DEFAULT_BUDGET = 16000
"""Default recall budget in characters (docs/retrieval.md §4.8 ``budgetChars``)."""

MAX_DEPTH = 2
"""Deepest neighbor walk (docs/retrieval.md §4: ``neighbors`` depth ≤ 2)."""

MEMORY_RELS: tuple[str, ...] = tuple(sorted(r for r, c in REL_CLASSES.items() if c == "memory"))
"""Rels a neighbor walk may follow (memory class, docs/format.md §1.3)."""

GROUPING_ONLY_REL = "laterally_related"
"""The rel of deep sleep's grouping-band edges: a *derived* edge of it is read by compress's deep grouping only, never
by a neighbour walk, search, retention scoring, PageRank or bridges (docs/deep-sleep.md). An authored link of the rel
is an ordinary memory edge."""
