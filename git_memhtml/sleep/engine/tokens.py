"""Counting a request's tokens without a model, a network or a download (docs/models.md §11).

The count is that of the **Llama 2 tokenizer** (a 32,000-piece SentencePiece BPE with byte fallback), read from the
file the ``wordllama`` wheel ships for its default model (``tokenizers/l2_supercat_tokenizer_config.json``, the
tokenizer of ``meta-llama/Llama-2-70b-hf``; ``wordllama`` and ``tokenizers`` are already dependencies: the default
embedder uses both). Why this one: it is a real local-model tokenizer, and one of the least compact in use, so a
count made with it is high for the models people run locally today (Meta reports Llama 3's 128k-piece tokenizer
uses up to 15 % fewer tokens than Llama 2's on the same text; Qwen, Gemma and Mistral's newer tokenizers are as large
or larger), and exact for the Llama 2 family (Llama 2, Mistral 7B's first tokenizer, Phi-3). Its byte fallback
makes a hostile text cost what it costs: an emoji is four tokens, a rare CJK character three.

**Exactness.** :func:`count_tokens` equals ``len(Tokenizer.encode(text, add_special_tokens=False).ids)`` for every
text except one holding the literal ``<s>``, ``</s>`` or ``<unk>``, which it counts as their characters (more tokens,
never fewer) (``tests/llm/test_tokens.py`` checks both on LoCoMo text and on random hostile strings). It is about
fifteen times faster than the full encode: the normalised text (``▁`` + spaces as ``▁``) is cut before every ``▁``
that follows another character and around every newline, boundaries no piece of this vocabulary spans (the test
checks the vocabulary), so each segment is counted on its own by the BPE model and remembered.

**Fallback.** Without the file (a ``wordllama`` that moved it), a text counts its UTF-8 bytes plus one: a bound no
byte-fallback tokenizer can exceed (a piece holds at least one byte, plus the leading ``▁``), about four times the
real count for English. Never an error: requests only get smaller.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

TOKENIZER_CONFIG = "l2_supercat"
"""The wordllama model whose bundled tokenizer counts (its default model, Llama 2's tokenizer)."""

TEMPLATE_TOKENS = 32
"""Tokens added to every request for the chat template the server wraps around the two messages (Llama 3's header
and end-of-turn tokens for a system, a user and the assistant turn come to about 15; ChatML's to about 13; Llama
3.1's template adds a date line of about 15): a stated allowance, not a measurement of one server."""

_SEGMENT = re.compile(r"\n|\u2581+[^\u2581\n]*|[^\u2581\n]+")
"""A segment of the normalised text: a newline, a run of ``▁`` and the characters up to the next ``▁`` or newline,
or a run at the start of a line (no vocabulary piece spans a newline or holds ``▁`` after another character)."""

_CACHE_LIMIT = 200_000
"""Segments remembered before the cache is cleared (a few MB; a night's prompts repeat their words)."""


def count_tokens(text: str) -> int:
    """Tokens of ``text`` by the Llama 2 tokenizer (module docstring), or UTF-8 bytes + 1 without its file."""
    if not text:
        return 0
    counter = _counter()
    if counter is None:
        return len(text.encode("utf-8", "surrogatepass")) + 1
    return counter(text)


def request_tokens(system: str, prompt: str) -> int:
    """Tokens of one request: its system prompt, its user message and :data:`TEMPLATE_TOKENS`."""
    return count_tokens(system) + count_tokens(prompt) + TEMPLATE_TOKENS


def counter_name() -> str:
    """What counts: ``llama-2 tokenizer (wordllama l2_supercat)`` or ``utf-8 bytes + 1 (tokenizer not found)``."""
    if _counter() is None:
        return "utf-8 bytes + 1 (tokenizer not found)"
    return f"llama-2 tokenizer (wordllama {TOKENIZER_CONFIG})"


def tokenizer_file() -> Path | None:
    """The bundled tokenizer file, or ``None`` when the installed wordllama has none there."""
    from git_memhtml.embed.wordllama import TOKENIZER_FILE, wordllama_folder  # noqa: PLC0415 - finds, not imports

    folder = wordllama_folder()
    if folder is None:
        return None
    path = folder / TOKENIZER_FILE.format(config=TOKENIZER_CONFIG)
    return path if path.is_file() else None


@lru_cache(maxsize=1)
def _counter() -> Callable[[str], int] | None:
    """The segment counter over the bundled tokenizer's BPE model (loaded once a process, about 0.6 s), or ``None``."""
    path = tokenizer_file()
    if path is None:
        return None
    try:
        from tokenizers import Tokenizer  # noqa: PLC0415 - loaded only when a model is bound

        model = Tokenizer.from_file(str(path)).model
    except Exception:
        return None
    cache: dict[str, int] = {}

    def count(text: str) -> int:
        total = 0
        for segment in _SEGMENT.findall("\u2581" + text.replace(" ", "\u2581")):
            n = cache.get(segment)
            if n is None:
                if len(cache) >= _CACHE_LIMIT:
                    cache.clear()
                try:
                    n = len(model.tokenize(segment))
                except UnicodeEncodeError:  # a lone surrogate: the wire sends it as U+FFFD
                    n = len(model.tokenize(segment.encode("utf-8", "replace").decode("utf-8")))
                cache[segment] = n
            total += n
        return total

    return count
