"""The claim-probe sample (git_memhtml/sleep/probes/sample.py): deterministic per run id, stratified by bucket and
type, proportional shares that always sum to the sample size (issue 10 item 1)."""

from __future__ import annotations

from collections import Counter

import pytest

from git_memhtml.index.probe_rows import ClaimCandidate
from git_memhtml.sleep.probes.sample import claim_sample, quotas


def _corpus(sizes: dict[tuple[str, str], int]) -> list[ClaimCandidate]:
    out = []
    for (para, kind), size in sizes.items():
        out += [ClaimCandidate(f"{para}/{kind}/m{i:04d}.html", para, kind, f"claim {i}") for i in range(size)]
    return out


SIZES = {("areas", "semantic"): 600, ("projects", "episodic"): 300, ("resources", "procedural"): 90,
         ("areas", "procedural"): 9, ("projects", "semantic"): 1}


def test_same_run_id_same_sample_any_input_order() -> None:
    corpus = _corpus(SIZES)
    first = claim_sample(corpus, "sleep/2026-12-01", 100)
    again = claim_sample(list(reversed(corpus)), "sleep/2026-12-01", 100)
    assert [c.path for c in first] == [c.path for c in again]


def test_another_run_id_samples_differently() -> None:
    corpus = _corpus(SIZES)
    one = {c.path for c in claim_sample(corpus, "sleep/2026-12-01", 100)}
    two = {c.path for c in claim_sample(corpus, "sleep/2026-12-01-2", 100)}
    assert one != two and len(one) == len(two) == 100


def test_shares_are_proportional_per_stratum() -> None:
    picked = Counter((c.para, c.memory_type) for c in claim_sample(_corpus(SIZES), "sleep/2026-12-01", 100))
    assert picked == {("areas", "semantic"): 60, ("projects", "episodic"): 30, ("resources", "procedural"): 9,
                      ("areas", "procedural"): 1}


@pytest.mark.parametrize("n", [1, 2, 7, 99, 100, 999, 1000, 5000])
def test_quotas_sum_to_n_and_never_exceed_a_stratum(n: int) -> None:
    share = quotas(dict(SIZES), n)
    assert sum(share.values()) == min(n, sum(SIZES.values()))
    assert all(0 <= share[k] <= SIZES[k] for k in SIZES)


def test_a_sample_larger_than_the_corpus_takes_everything_sorted() -> None:
    corpus = _corpus({("areas", "semantic"): 5})
    assert [c.path for c in claim_sample(corpus, "sleep/2026-12-01", 500)] == sorted(c.path for c in corpus)


def test_a_sample_of_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        claim_sample(_corpus(SIZES), "sleep/2026-12-01", 0)


def test_touched_memories_are_always_probed_on_top_of_the_sample() -> None:
    from git_memhtml.sleep.probes.sample import probe_sample

    corpus = _corpus(SIZES)
    base = {c.path for c in claim_sample(corpus, "sleep/2026-12-01", 10)}
    touched = [c.path for c in corpus if c.path not in base][:7]
    picked = [c.path for c in probe_sample(corpus, set(touched), "sleep/2026-12-01", 10)]
    assert set(picked) == base | set(touched) and picked == sorted(picked)
    capped = probe_sample(corpus, {c.path for c in corpus}, "sleep/2026-12-01", 10)
    assert len(capped) <= 20  # at most n of the touched on top of the n sampled
