"""Corpora of the deep-sleep tests: claims whose fake-embedder cosines land where a test needs them.

The fake embedder hashes tokens (``embed/fake.py``), so cosines follow shared words. Claims are made of made-up words
(no English, no digits: the merge veto's number and negation predicates never fire), so only the pairs a corpus
builds are near. Every test guards the cosines it relies on before it asserts anything else.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.template import render_memory
from git_memhtml.llm.scripted import Answer, Reply, ScriptedRequest, blocks

WORDS = [f"{a}{b}" for a in ("zor", "kel", "mip", "tav", "dun", "rax", "bel", "sop", "qui", "wen", "fal", "gor",
                             "hup", "jin", "lor", "nev")
         for b in ("ak", "em", "ox", "ul", "ir", "an", "et", "ob")]
"""128 made-up words."""

CREATED = "2026-01-01T00:00:00Z"


def band_claims(seed: int, n: int = 3) -> list[str]:
    """``n`` claims of 24 words, each with its own 3 of them changed: pairwise cosine ~0.79 under the 256-dim fake
    embedder, inside the grouping band [0.72, 0.85) and under the 0.85 mining floor."""
    rng = random.Random(seed)
    base = rng.sample(WORDS, 24)
    rest = [w for w in WORDS if w not in base]
    rng.shuffle(rest)
    out = []
    for i in range(n):
        alt = list(base)
        for j in range(3):
            alt[(i * 3 + j) % 24] = rest.pop()
        out.append(" ".join(alt) + ".")
    return out


def loose_claims(seed: int, n: int) -> list[str]:
    """``n`` claims of 12 words drawn apart: no pair near the band."""
    rng = random.Random(seed)
    return [" ".join(rng.sample(WORDS, 12)) + "." for _ in range(n)]


def doc(claim: str, *, title: str, entities: Sequence[str] = (), memory_type: str = "semantic",
        body: Sequence[str] = ()) -> str:
    """One memory with ``claim`` as its mark, created :data:`CREATED` (in the compress band at the run date)."""
    return render_memory(MemoryDraft(title=title, memory_type=memory_type, claim=claim, entities=tuple(entities),
                                     body=tuple(body)), now=CREATED)


def absorb_first(n: int = 2) -> Callable[[ScriptedRequest], Reply]:
    """A compress responder that absorbs the first ``n`` members offered, its canonical carrying their texts whole
    (the ``not-carried`` rail then lets them through); a batch of fewer members is declined."""

    def reply(req: ScriptedRequest) -> Reply:
        offered = blocks(req.prompt)
        keys = list(offered)[:n]
        if len(keys) < n:
            return Answer({"title": "", "claim": "", "paragraphs": [], "absorbedKeys": []})
        texts = [" ".join(offered[k].split()) for k in keys]
        return Answer({"title": f"Canonical {req.index + 1}", "claim": texts[0], "paragraphs": texts,
                       "absorbedKeys": keys})

    return reply


def decline(req: ScriptedRequest) -> Reply:
    """A compress responder that folds nothing."""
    return Answer({"title": "none", "claim": "none", "paragraphs": [], "absorbedKeys": []})
