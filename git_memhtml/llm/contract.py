"""The one call contract between the sleep phases and a model (docs/models.md §1).

A phase asks for one *structured* answer: a system prompt, a user prompt and a pydantic model that is both the
JSON schema sent on the wire and the decoder of the reply (extra fields forbidden). Whatever the dialect
(``openai`` chat completions with a strict ``json_schema`` response format, ``anthropic`` Messages with a forced
tool), a client returns the decoded value and the tokens the provider says it spent, or raises one of four typed
errors:

- :class:`~git_memhtml.errors.ModelUnavailable`: the server could not be reached, timed out, or kept failing after
  the retries;
- :class:`~git_memhtml.errors.LlmContractViolation`: it answered, but with no JSON, JSON that fails the schema, or a
  truncated answer;
- :class:`~git_memhtml.errors.ProviderRefused`: the provider declined (refusal, content filter, 4xx);
- :class:`~git_memhtml.errors.BudgetExhausted`: the run's call budget is spent (raised by the kernel, not the wire).

Nothing here knows about phases, members or rails: that is the batch kernel's (``sleep/engine/batch.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

Dialect = Literal["openai", "anthropic"]
"""The two wire dialects (``memhtml.llm``; ``off`` binds no client)."""

DEFAULT_MAX_TOKENS = 16384
"""Answer tokens asked for when a request gives none (carried over: ``max_tokens`` default of the original wire)."""

MAX_TOKENS_CLAMP = 128000
"""Upper clamp of ``max_tokens`` (carried over)."""

T = TypeVar("T", bound=BaseModel)


class AnswerSchema(BaseModel):
    """Base of every answer schema: frozen, extra fields forbidden, snake_case fields with camelCase wire names
    (``member_keys`` is ``memberKeys`` in the schema sent and in the JSON decoded). Subclass it for each call; the
    class name is the schema's wire name, so keep it unique across phases (``MergePartition``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True)


@dataclass(frozen=True)
class ModelRequest(Generic[T]):
    """One structured call.

    Attributes:
        schema: the answer's pydantic model. Its ``model_json_schema()`` is sent; its name is the tool /
            ``json_schema`` name on the wire (so a server, and the scripted test server, can tell the calls apart);
            the reply is decoded with ``model_validate`` and must forbid extra fields (``extra="forbid"``).
        system: the system prompt (instructions; never memory text). Empty sends none.
        prompt: the user message: members framed as data plus the instruction (``sleep/engine/batch.py``).
        max_tokens: answer tokens asked for, clamped to 1..:data:`MAX_TOKENS_CLAMP`.
        cache_system: mark the system prompt cache-eligible (Anthropic ``cache_control``; OpenAI caches a
            repeated prefix by itself, so the field is ignored there).
    """

    schema: type[T]
    system: str
    prompt: str
    max_tokens: int = DEFAULT_MAX_TOKENS
    cache_system: bool = True

    @property
    def name(self) -> str:
        """The schema's wire name: the pydantic model's class name (``MergePartition``)."""
        return self.schema.__name__


@dataclass(frozen=True)
class Usage:
    """Tokens one call spent, as the provider reported them (0 when it reported none)."""

    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens)


@dataclass(frozen=True)
class ModelAnswer(Generic[T]):
    """A decoded answer.

    Attributes:
        value: the reply, validated against the request's schema.
        usage: tokens spent (input, output).
        attempts: HTTP attempts it took (1 without a retry).
        seconds: wall time of the call, retries and waits included.
    """

    value: T
    usage: Usage
    attempts: int = 1
    seconds: float = 0.0


class ModelClient(Protocol):
    """A bound model: one structured call at a time (thread-compatible, not required to be thread-safe).

    ``describe()`` names the dialect, URL and model for logs and ``doctor --model`` (never the key).
    """

    def call(self, request: ModelRequest[T]) -> ModelAnswer[T]:
        """Make the call and decode the answer.

        Raises:
            ModelUnavailable: unreachable, timed out, or still failing after the retries.
            LlmContractViolation: the answer is not JSON of the schema (or was cut short).
            ProviderRefused: the provider declined to answer.
        """
        ...

    def describe(self) -> str:
        """``<dialect> <model> at <url>``."""
        ...
