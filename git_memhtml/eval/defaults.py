"""The fixture corpus and discrimination defaults, in a module that imports nothing (``eval -h`` shows them without
loading the index or the embedder, issue 12 item 4)."""

from __future__ import annotations

DEFAULT_SEED = 20260802
DEFAULT_SIZE = 200
DEFAULT_PROBES = 36
"""Corpus defaults (docs/gate.md §8.1)."""

MRR_FLOOR = 0.85
"""Minimum discrimination MRR to pass (docs/gate.md §8.4). With zero inversions the MRR is exactly 1."""
