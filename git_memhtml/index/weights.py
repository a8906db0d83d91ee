"""Default RRF arm weights per embedder (docs/design.md §3.13: retrieval is tuned by measurement; weights are config).

The weights of :class:`~git_memhtml.index.retrieval_sql.ArmWeights` (``fts 1.0, vector 1.0, recency 0.5,
salience 0.4``, docs/retrieval.md §4) suit a strong embedder over a store whose access history means something. Measured
on LoCoMo (``python bench/locomo.py recall``, docs/retrieval-tuning.md) they do not suit the embedders this version
ships: a weak vector arm at equal weight pulls in near-misses, and recency/salience arms at 0.5/0.4 push the
evidence of older events out of the top k. So each embedder gets its own defaults, used whenever the user set
none (``git config memhtml.weight*`` / ``MEMHTML_WEIGHT_*`` override per key). Every default set here also
passes the discrimination gate with zero inversions at the default seed (tests/index/test_default_weights.py).

Why recency and salience stay at 0.05 rather than 0: with RRF (k = 60) an arm of weight 0.05 adds at most
``0.05/61 ≈ 0.0008`` — less than the gap between the lexical arm's rank 1 and rank 40 (``1/61 − 1/100 ≈ 0.0064``)
— so a memory that only recency or salience likes can never displace a query match, but among near-equal
matches the newer, more used memory wins, which is what an agent expects. On LoCoMo this costs ≤ 0.007 R@5.
"""

from __future__ import annotations

from git_memhtml.embed.providers import DEFAULT_EMBEDDER
from git_memhtml.index.retrieval_sql import ArmWeights

TIEBREAK_WEIGHT = 0.05
"""Recency and salience weight of the tuned defaults: re-rank within query matches, never displace them
(LoCoMo turns, wordllama: 0.05 → R@5 0.693, 0.1 → 0.663 with vector 0.2, 0.5/0.4 → 0.376 lexical-only)."""

WORDLLAMA_WEIGHTS = ArmWeights(fts=1.0, vector=0.1, recency=TIEBREAK_WEIGHT, salience=TIEBREAK_WEIGHT)
"""wordllama 256-d static embeddings. LoCoMo, six conversations, turns with two preceding turns carried
(1,155 questions): vector 0 → R@5/R@10 0.683/0.768, 0.1 → 0.693/0.781, 0.2 → 0.671/0.772, 1.0 → 0.609/0.721
(recency/salience 0); observations: vector 0 → 0.558/0.602, 0.1 → 0.566/0.614, 0.5 → 0.512/0.573. At 0.1 the
vector arm adds recall deeper in the list (turns R@50 0.868 → 0.890) without costing the head."""

OFF_WEIGHTS = ArmWeights(fts=1.0, vector=0.0, recency=TIEBREAK_WEIGHT, salience=TIEBREAK_WEIGHT)
"""No embedder: lexical arm plus tie-breakers. LoCoMo turns (context 2): R@5/R@10 0.683/0.768; with the
docs/retrieval.md §4 recency/salience 0.5/0.4 instead: 0.376/0.681."""

FAKE_WEIGHTS = ArmWeights()
"""The fake (feature-hashing) embedder exists to exercise every arm deterministically in tests and in the
discrimination gate, whose weights docs/gate.md §8.4 pins to the docs/retrieval.md §4 values; its defaults stay those.
Measured, it is no retriever: LoCoMo turns (context 2) vector 0 → R@5 0.685, 0.3 → 0.607, 1.0 → 0.520."""

REMOTE_WEIGHTS = ArmWeights(fts=1.0, vector=1.0, recency=TIEBREAK_WEIGHT, salience=TIEBREAK_WEIGHT)
"""``openai`` (any OpenAI-compatible endpoint) and any embedder without its own entry: a dense model the
user chose on purpose gets the docs/retrieval.md §4 equal vector weight; NOT measured on LoCoMo here (no endpoint in the
harness) — measure with ``bench/locomo.py recall`` and set ``memhtml.weightvector`` if it underperforms.
Recency/salience take the embedder-independent tie-break weight measured above."""

DEFAULT_WEIGHTS: dict[str, ArmWeights] = {
    "wordllama": WORDLLAMA_WEIGHTS,
    "off": OFF_WEIGHTS,
    "fake": FAKE_WEIGHTS,
    "openai": REMOTE_WEIGHTS,
}
"""Embedder name (``memhtml.embed``) → default arm weights."""


def default_weights(embedder: str | None) -> ArmWeights:
    """Default arm weights of the embedder called ``embedder`` (case-insensitive, trimmed).

    ``None`` or empty means the default embedder (``wordllama``, docs/design.md §3.6); an unknown name gets
    :data:`REMOTE_WEIGHTS`. Never raises.
    """
    key = (embedder or DEFAULT_EMBEDDER).strip().lower() or DEFAULT_EMBEDDER
    return DEFAULT_WEIGHTS.get(key, REMOTE_WEIGHTS)
