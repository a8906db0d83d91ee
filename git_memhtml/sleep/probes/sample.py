"""The claim-probe sample: deterministic for a run id, stratified by bucket and type (docs/gate.md §9.1).

Strata are ``(bucket, type)`` pairs; each gets a share of ``n`` proportional to its size (largest remainder, ties
to the smaller stratum key), and inside a stratum the memories are taken in the order of
``sha256(run id NUL path)``. The same run id over the same base always gives the same sample, on every machine; no
random generator is involved.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from typing import TypeVar

from git_memhtml.index.probe_rows import ClaimCandidate
from git_memhtml.sleep.probes.defaults import DEFAULT_SAMPLE

C = TypeVar("C", bound=ClaimCandidate)


def _order(run_id: str, path: str) -> bytes:
    return hashlib.sha256(f"{run_id}\0{path}".encode("utf-8", "surrogatepass")).digest()


def quotas(sizes: dict[tuple[str, str], int], n: int) -> dict[tuple[str, str], int]:
    """Share ``n`` among strata of ``sizes`` proportionally (largest remainder); all of each when ``n`` covers them.

    >>> quotas({("areas", "semantic"): 3, ("projects", "episodic"): 1}, 2)
    {('areas', 'semantic'): 2, ('projects', 'episodic'): 0}
    """
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    exact = {key: n * size / total for key, size in sizes.items()}
    share = {key: int(value) for key, value in exact.items()}
    left = n - sum(share.values())
    for key in sorted(exact, key=lambda k: (-(exact[k] - share[k]), k))[:left]:
        share[key] += 1
    return share


def probe_sample(candidates: Sequence[C], touched: Collection[str], run_id: str, n: int = DEFAULT_SAMPLE) -> list[C]:
    """The stratified :func:`claim_sample` plus, on top, up to ``n`` of the memories the run ``touched`` (its article
    changed, or it left the live tree), drawn from them by the same stratified rule: what a run rewrote or archived
    is always probed, not only when the dice fall on it. Sorted by path, each memory once (when every memory was
    touched the two draws coincide).

    Raises:
        ValueError: ``n`` < 1.
    """
    picked = {c.path: c for c in claim_sample(candidates, run_id, n)}
    hit = [c for c in candidates if c.path in touched]
    for candidate in claim_sample(hit, run_id, n) if hit else []:
        picked.setdefault(candidate.path, candidate)
    return [picked[path] for path in sorted(picked)]


def claim_sample(candidates: Sequence[C], run_id: str, n: int = DEFAULT_SAMPLE) -> list[C]:
    """Up to ``n`` of ``candidates`` (module docstring), sorted by path.

    Raises:
        ValueError: ``n`` < 1.
    """
    if n < 1:
        raise ValueError(f"the probe sample must hold at least one memory, got {n}")
    strata: dict[tuple[str, str], list[C]] = {}
    for candidate in candidates:
        strata.setdefault((candidate.para, candidate.memory_type), []).append(candidate)
    share = quotas({key: len(members) for key, members in strata.items()}, n)
    picked: list[C] = []
    for key, members in strata.items():
        members.sort(key=lambda c: _order(run_id, c.path))
        picked.extend(members[: share[key]])
    return sorted(picked, key=lambda c: c.path)
