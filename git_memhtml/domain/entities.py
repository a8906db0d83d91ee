"""Entity-name normalisation, character similarity and the survivor-picking union-find (sleep-eval §6 steps 2, 3, 8).

The character pass is deterministic and cheap: names that normalise together merge exactly, pairs at or above
:data:`AUTO_MERGE_RATIO` merge automatically, and the [0.75, 0.85) band goes to review. Which name survives is
decided by the corpus's own file counts (higher count wins, ties to the lexicographically smaller name), never by
a model (seed 000 §8). Pure.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping

AUTO_MERGE_RATIO = 0.85
"""Character ratio at or above which two names merge without review (sleep-eval §6 step 3; seed 000 §5)."""

REVIEW_RATIO = 0.75
"""Lower bound of the review band [0.75, 0.85) (sleep-eval §6 step 3; seed 000 §5)."""

_WHITESPACE = re.compile(r"\s+")


def normalize_name(name: str) -> str:
    """NFC, lowercase, collapse whitespace runs to one space, trim (sleep-eval §6 step 2)."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFC", name).lower()).strip()


def lcs_length(a: str, b: str) -> int:
    """Length of the longest common subsequence of ``a`` and ``b`` (O(|a|·|b|) time, O(|b|) memory)."""
    if not a or not b:
        return 0
    previous = [0] * (len(b) + 1)
    for char in a:
        current = [0]
        for j, other in enumerate(b):
            current.append(previous[j] + 1 if char == other else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def lcs_ratio(a: str, b: str) -> float:
    """``2·LCS(a, b) / (|a| + |b|)`` in [0, 1]; identical strings score 1, an empty side scores 0 (sleep-eval §6).

    >>> round(lcs_ratio("checkout-api", "checkout api"), 2)
    0.92
    """
    if a == b and a:
        return 1.0
    if not a or not b:
        return 0.0
    return 2 * lcs_length(a, b) / (len(a) + len(b))


class UnionFind:
    """Union-find over names where a merged set's root is its survivor (sleep-eval §6 step 8).

    On :meth:`union` the root with the higher count wins; equal counts go to the lexicographically smaller name.
    A root's count is the count of the name itself (the corpus file count), not the size of its set: the
    survivor is the most-used *name*, which a later merge with a less-used name cannot displace.

    Args:
        counts: file count per name; a name not listed counts 0. Names may also be added lazily by :meth:`find`.
    """

    def __init__(self, counts: Mapping[str, int] | None = None) -> None:
        self._counts: dict[str, int] = dict(counts or {})
        self._parent: dict[str, str] = {name: name for name in sorted(self._counts)}

    def add(self, name: str, count: int = 0) -> None:
        """Register ``name`` (idempotent; an existing count is kept)."""
        if name not in self._parent:
            self._parent[name] = name
            self._counts.setdefault(name, count)

    def find(self, name: str) -> str:
        """The survivor of ``name``'s set (registers an unknown name with count 0)."""
        self.add(name)
        root = name
        while self._parent[root] != root:
            root = self._parent[root]
        while self._parent[name] != root:
            self._parent[name], name = root, self._parent[name]
        return root

    def _wins(self, a: str, b: str) -> bool:
        ca, cb = self._counts.get(a, 0), self._counts.get(b, 0)
        return ca > cb or (ca == cb and a < b)

    def union(self, a: str, b: str) -> str:
        """Merge the sets of ``a`` and ``b``; return the surviving root."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return ra
        winner, loser = (ra, rb) if self._wins(ra, rb) else (rb, ra)
        self._parent[loser] = winner
        return winner

    def mapping(self) -> dict[str, str]:
        """``{name: survivor}`` for every registered name, in sorted name order."""
        return {name: self.find(name) for name in sorted(self._parent)}


def merge_names(counts: Mapping[str, int], pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Union every accepted pair over names taken in sorted order; return ``{name: survivor}`` (sleep-eval §6 step 8).

    Pairs are applied sorted (each pair's two names sorted, then the pair list sorted), so the result does not
    depend on the order the three sources (character, alias, model) produced them in.
    """
    forest = UnionFind(counts)
    for a, b in sorted(tuple(sorted(pair)) for pair in pairs):
        forest.union(a, b)
    return forest.mapping()
