"""Seeded hostile mixes of corpus lines and broken fragments (cut escapes, lone surrogates, half headers, NULs),
each followed by a space, tab or line end (real or escaped): spans stay inside the text and apart, ``redact`` ends
on a text in which nothing is found, and a whole corpus line in the mix loses its secret."""

from __future__ import annotations

import itertools
import json
import random

import pytest

from git_memhtml.secrets import find_secrets, redact
from tests.secrets.corpus import CORPUS

FRAGMENTS = [s.line for s in CORPUS] + [
    "\\", "\\u", "\\ud83d", "\\n", '"', "'", "-----BEGIN", "eyJ", "://", "@", "\ud800", "\x00", "日本", "\r",
    "\\\\n", "password=", "PRIVATE KEY-----", "Private-MAC: ",
]


def _mix(rng: random.Random) -> str:
    parts = [rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 12))]
    pieces = [p if rng.random() < 0.7 else p[: rng.randint(0, len(p))] for p in parts]
    text = "".join(piece + rng.choice((" ", "\n", "\\n", "\t", "\r\n")) for piece in pieces)
    return json.dumps({"x": text}) if rng.random() < 0.3 else text


@pytest.mark.parametrize("seed", range(4))
def test_hostile_mixes_keep_the_invariants(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(40):
        text = _mix(rng)
        findings = find_secrets(text)
        assert all(0 <= f.start < f.end <= len(text) for f in findings)
        assert all(a.end <= b.start for a, b in itertools.pairwise(findings))
        result = redact(text)
        assert find_secrets(result.text) == [] and result.count >= len(findings)
        for sample in CORPUS:
            if sample.line in text:
                assert sample.secret[:12] not in result.text
