"""The defaults of the ``memhtml.llm*`` settings, in a module that imports nothing (issue 12 item 4).

``git_memhtml.config`` reads these at import time; the dialect modules and the client re-export them under their
old names. Keeping them here means resolving the settings (which every command does) never imports the model
layer, its transport or httpx.
"""

from __future__ import annotations

DEFAULT_TIMEOUT_SECONDS = 120.0
"""Seconds per HTTP attempt (``memhtml.llmtimeout``): a batch of members can take a model a minute to answer."""
DEFAULT_MAX_ATTEMPTS = 4
"""Attempts per call on 429/5xx (``memhtml.llmattempts``; 1 try + 3 retries, as the embedder)."""

DEFAULT_MAX_PROMPT_TOKENS = 4000
"""Tokens one request may send (``memhtml.llmmaxprompt``; docs/models.md §11): Ollama's usual context, 4,096 tokens
(its default below 24 GiB of VRAM, per the "Context length" page of the Ollama documentation), rounded down. A
server whose context is smaller than the prompt cuts the prompt without saying so, so the phases keep every request
under it."""
MIN_MAX_PROMPT_TOKENS = 1000
"""Smallest ``memhtml.llmmaxprompt``: the largest fixed part of a shipped request (system prompt, instruction and
framing, about 800 tokens for placement-triage) with room for one member."""
MAX_MAX_PROMPT_TOKENS = 2_000_000
"""Largest ``memhtml.llmmaxprompt``: above every context window on offer (2M tokens)."""

OPENAI_URL = "https://api.openai.com/v1"
"""``memhtml.llmurl`` when unset and ``memhtml.llm = openai``."""
OPENAI_KEY_ENV = "OPENAI_API_KEY"
"""``memhtml.llmkeyenv`` when unset and ``memhtml.llm = openai`` (the variable OpenAI's own clients read)."""
ANTHROPIC_URL = "https://api.anthropic.com"
"""``memhtml.llmurl`` when unset and ``memhtml.llm = anthropic``."""
ANTHROPIC_KEY_ENV = "ANTHROPIC_API_KEY"
"""``memhtml.llmkeyenv`` when unset and ``memhtml.llm = anthropic`` (the variable Anthropic's own clients read)."""
