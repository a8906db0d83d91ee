"""The request counter (docs/models.md §11): the Llama 2 tokenizer wordllama ships, counted by segment, equals the
tokenizer's own encode on real and hostile text, and falls back to a bound no byte-fallback tokenizer exceeds."""

from __future__ import annotations

import json
import random

import pytest
from tokenizers import Tokenizer

from git_memhtml.sleep.engine import tokens
from git_memhtml.sleep.engine.tokens import TEMPLATE_TOKENS, count_tokens, request_tokens, tokenizer_file
from tests.conftest import SHARED_DATA

SPECIAL = ("<s>", "</s>", "<unk>")


def _encoder() -> Tokenizer:
    path = tokenizer_file()
    assert path is not None, "the installed wordllama ships no l2_supercat tokenizer"
    return Tokenizer.from_file(str(path))


def _texts() -> list[str]:
    data = json.loads((SHARED_DATA / "locomo" / "locomo-dev.json").read_text(encoding="utf-8"))
    item = data[0]
    turns = [t["text"] for k, v in item["conversation"].items() if k.startswith("session_") and isinstance(v, list)
             for t in v]
    rnd = random.Random(27)
    alphabet = "ab ▁\n\t<s>😀日1 .,\u200b\ufffd"
    hostile = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 40))) for _ in range(1500)]
    return [*turns[:600], "\n".join(turns), *hostile, "", " ", "  ", "\n", "x" * 3000, "😀" * 40]


def test_the_segment_count_is_the_tokenizers_own_count() -> None:
    encoder = _encoder()
    for text in _texts():
        exact = len(encoder.encode(text, add_special_tokens=False).ids)
        if any(s in text for s in SPECIAL):
            assert count_tokens(text) >= exact, repr(text)  # a literal <s> counts as its characters
        else:
            assert count_tokens(text) == exact, repr(text)


def test_no_vocabulary_piece_spans_a_segment_boundary() -> None:
    vocab = _encoder().get_vocab()
    assert not [p for p in vocab if "\n" in p]
    assert not [p for p in vocab if any(c == "\u2581" and i and p[i - 1] != "\u2581" for i, c in enumerate(p))]


def test_a_request_adds_the_template_allowance() -> None:
    assert request_tokens("Hello world", "") == count_tokens("Hello world") + TEMPLATE_TOKENS == 2 + TEMPLATE_TOKENS


def test_without_the_tokenizer_a_text_counts_its_bytes_plus_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "tokenizer_file", lambda: None)
    tokens._counter.cache_clear()
    try:
        assert count_tokens("Hello world") == 12 and count_tokens("😀") == 5 and count_tokens("") == 0
        assert tokens.counter_name().startswith("utf-8 bytes + 1")
    finally:
        tokens._counter.cache_clear()
    encoder = _encoder()
    for text in _texts()[:300]:  # the fallback is a bound
        assert len(text.encode()) + 1 >= len(encoder.encode(text, add_special_tokens=False).ids)
