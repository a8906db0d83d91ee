"""A phase's handle on the bound model: budget, isolation, usage and rails (docs/models.md §2, §3).

Every model phase makes its calls through one :class:`PhaseModel`:

- **Budget.** ``sleep run --max-llm-calls N`` is one budget per run, shared by every phase
  (``env.services.llm_budget``). A call asked for once it is spent is not made: the batch is counted
  ``budgetSkipped`` and the phase goes on (the run stays green; the night is not *judged*, so no sweep).
- **Isolation.** A call that fails (unreachable, timed out, malformed or off-schema answer, refusal) costs its own
  batch only: it is counted (``failedCalls``), logged, and :meth:`PhaseModel.call` returns ``None``.
- **Usage.** Input and output tokens of every answer are summed per phase.
- **Size.** Every request is counted before it is sent (``sleep/engine/tokens.py``: system + user + the template
  allowance); the phase's total and largest are kept. A request over ``memhtml.llmmaxprompt`` is never sent: it
  is counted ``overCap`` and logged, and the batch is lost like a failed call (the phase does not sweep). Phases
  avoid that by building their batches with :meth:`PhaseModel.fit` (the kernel's split-then-cut rule,
  ``batch.py:fit_batch``; docs/models.md §11).
- **Rails.** Every proposal the code refuses is counted per rail (:meth:`PhaseModel.reject`) and logged with its
  payload to the run's rails log in the git dir (``<common-dir>/memhtml/runs/<run stem>.rails.jsonl``), so a
  model that keeps proposing what the rules forbid is visible. Rails are code; no prompt or setting reaches them.

:meth:`PhaseModel.usage` is what the phase returns in :class:`~git_memhtml.sleep.engine.env.PhaseOutcome`; the
runner adds its wire keys to the phase's counts (trailer, state row, JSON, report page) only when a model was bound,
so a night with ``memhtml.llm = off`` keeps exactly the counts it always had.
"""

from __future__ import annotations

import json
import math
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from git_memhtml.errors import BudgetExhausted, LlmContractViolation, ModelUnavailable, ProviderRefused
from git_memhtml.llm.contract import ModelRequest, Usage
from git_memhtml.sleep.engine.batch import Fitted, KeyedBatch, Member, fit_batch
from git_memhtml.sleep.engine.env import ModelUsage, PhaseEnv
from git_memhtml.sleep.engine.runfiles import run_file_stem
from git_memhtml.sleep.engine.tokens import request_tokens

T = TypeVar("T", bound=BaseModel)

UNKNOWN_KEY = "unknown-key"
"""The rail of an answer naming a key its batch never offered (every phase counts it under this name)."""

NO_MODEL = "no model bound"
"""Detail of a model phase with no model bound (``memhtml.llm = off``; docs/models.md §4)."""

OVER_CAP = "over-cap"
"""The rails log line of a request not sent because it is over ``memhtml.llmmaxprompt`` (docs/models.md §11)."""

DRY_RUN = "dry run: no model calls"
"""Detail of a model phase on ``--dry-run``: a dry run spends nothing (our decision, docs/models.md §4)."""

PAYLOAD_CHARS = 2000
"""Longest rendering of one value of a rejected payload in the rails log (a log, not an archive)."""

PAYLOAD_KEYS = 20
"""Most keys of one payload kept in the rails log (the rest are counted under ``"…"``)."""

KEY_CHARS = 100
"""Longest payload key kept in the rails log."""

LINE_CHARS = 16 * PAYLOAD_CHARS
"""Longest rails log line; a payload that still renders longer is replaced by the start of its JSON text."""


@dataclass
class PhaseModel:
    """The model as one phase sees it. Build with :meth:`for_phase`.

    ``bound`` is False with no model bound and on a dry run; :meth:`call` then returns ``None`` without counting.
    """

    env: PhaseEnv
    phase: str
    bound: bool
    calls: int = 0
    failed_calls: int = 0
    budget_skipped: int = 0
    usage_total: Usage = field(default_factory=Usage)
    prompt_bytes: int = 0
    prompt_tokens: int = 0
    largest_prompt: int = 0
    over_cap: int = 0
    members_cut: int = 0
    seconds: float = 0.0
    rails: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    """Failed calls by error class name (``ModelUnavailable``: not reached or timed out; ``LlmContractViolation``,
    ``ProviderRefused``: reached, nothing usable)."""
    first_failure: str | None = None
    """``<error class>: <message>`` of the first failed call (the message names the endpoint, never memory text)."""

    @classmethod
    def for_phase(cls, env: PhaseEnv, phase: str) -> PhaseModel:
        """The handle of ``phase`` in ``env``'s run."""
        return cls(env, phase, bound=env.services.model is not None and not env.dry_run)

    @property
    def detail(self) -> str | None:
        """Why nothing was asked: ``no model bound``, ``dry run: no model calls``, or ``None`` when bound."""
        if self.env.services.model is None:
            return NO_MODEL
        return DRY_RUN if self.env.dry_run else None

    @property
    def judged_all(self) -> bool:
        """Every batch asked for got an answer (no failed call, no budget skip) and no answer named a key it was not
        offered: the night judged its whole candidate set, so a detector may sweep what it no longer sees.

        An answer about members it was never shown (``unknown-key``) is not a judgment of the ones it was: silence on
        the offered keys then proves nothing, and counting it as a verdict would let a misbehaving model close every
        open detection by answering junk (our decision, stricter than the seeds' ``skipped === 0``; docs/models.md
        §2)."""
        return (self.bound and self.failed_calls == 0 and self.budget_skipped == 0 and self.over_cap == 0
                and self.rails.get(UNKNOWN_KEY, 0) == 0)

    @property
    def max_prompt(self) -> int:
        """Tokens one request may send (``memhtml.llmmaxprompt``)."""
        return self.env.services.max_prompt

    def fit(
        self,
        groups: Sequence[Sequence[Member]],
        render: Callable[[KeyedBatch], ModelRequest[T]],
        *,
        label: str,
        member_chars: int,
    ) -> list[tuple[KeyedBatch, ModelRequest[T]]]:
        """One phase batch of whole ``groups`` as requests under :attr:`max_prompt`: ``(keyed batch, request)``
        pairs in order, by the kernel's rule (``batch.py:fit_batch``: split between groups, then cut the texts of
        a group that does not fit alone). ``render`` builds the request of a keyed batch. Members cut are counted
        (``membersCut``)."""
        cap = self.max_prompt
        fitted: list[Fitted] = fit_batch(groups, label=label, member_chars=member_chars, cap=cap,
                                         size=lambda batch: self.tokens(render(batch)))
        self.members_cut += sum(f.cut for f in fitted)
        return [(f.batch, render(f.batch)) for f in fitted]

    @staticmethod
    def tokens(request: ModelRequest[T]) -> int:
        """The size of ``request`` in tokens (``sleep/engine/tokens.py:request_tokens``)."""
        return request_tokens(request.system, request.prompt)

    def call(self, request: ModelRequest[T]) -> T | None:
        """Make one call within the run's budget; ``None`` when unbound, over budget, or the call failed.

        A failure is counted (``failed_calls``), logged on the ``call-failed`` rail log line with the error's class
        and message (no memory text), and never raised: one batch is lost, never the phase.
        """
        client = self.env.services.model
        if client is None or not self.bound:
            return None
        tokens = self.tokens(request)
        if tokens > self.max_prompt:
            self.over_cap += 1
            self._log(OVER_CAP, {"schema": request.name, "tokens": tokens, "cap": self.max_prompt})
            return None
        try:
            self.env.services.llm_budget.spend()
        except BudgetExhausted:
            self.budget_skipped += 1
            return None
        self.calls += 1
        self.prompt_tokens += tokens
        self.largest_prompt = max(self.largest_prompt, tokens)
        self.prompt_bytes += len(request.system.encode("utf-8", "replace")) + len(
            request.prompt.encode("utf-8", "replace"))
        started = time.monotonic()
        try:
            answer = client.call(request)
        except (ModelUnavailable, LlmContractViolation, ProviderRefused) as exc:
            self.failed_calls += 1
            self.failures[type(exc).__name__] += 1
            if self.first_failure is None:
                self.first_failure = f"{type(exc).__name__}: {exc.message}"
            self._log("call-failed", {"schema": request.name, "error": type(exc).__name__, "message": exc.message})
            return None
        finally:
            self.seconds += time.monotonic() - started
        self.usage_total = self.usage_total + answer.usage
        return answer.value

    def reject(self, rail: str, payload: Mapping[str, object]) -> None:
        """Count one proposal refused by ``rail`` and log it with ``payload`` (JSON values) to the rails log."""
        self.rails[rail] += 1
        self._log(rail, payload)

    def usage(self) -> ModelUsage | None:
        """The phase's :class:`ModelUsage`, or ``None`` when no model was bound or on a dry run (nothing was asked,
        so the counts stay exactly as without a model: docs/models.md §4)."""
        if not self.bound:
            return None
        return ModelUsage(
            calls=self.calls,
            failed_calls=self.failed_calls,
            budget_skipped=self.budget_skipped,
            input_tokens=self.usage_total.input_tokens,
            output_tokens=self.usage_total.output_tokens,
            prompt_bytes=self.prompt_bytes,
            rails=tuple(self.rails.items()),
            seconds=self.seconds,
            prompt_tokens=self.prompt_tokens,
            largest_prompt=self.largest_prompt,
            over_cap=self.over_cap,
            members_cut=self.members_cut,
        )

    def _log(self, rail: str, payload: Mapping[str, object]) -> None:
        """Append one JSON line to the rails log; a log that cannot be written is no reason to fail the phase."""
        if self.env.dry_run:
            return
        line = log_line(self.env.run_id, self.phase, rail, payload)
        path = rails_log_path(self.env)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="ascii") as handle:
                handle.write(line + "\n")
        except OSError:
            return


def rails_log_path(env: PhaseEnv) -> Path:
    """``<common-dir>/memhtml/runs/<run stem>.rails.jsonl`` of ``env``'s run (outside every work tree)."""
    return env.repo.common_dir / "memhtml" / "runs" / f"{run_file_stem(env.run_id)}.rails.jsonl"


def log_line(run_id: str, phase: str, rail: str, payload: Mapping[str, object]) -> str:
    """One rails log line: ASCII JSON ``{"payload", "phase", "rail", "run"}`` of at most about :data:`LINE_CHARS`
    characters (the payload bounded by :func:`_bounded`, then cut as a whole if it still renders longer)."""
    def render(body: object) -> str:
        return json.dumps({"run": run_id, "phase": phase, "rail": rail[:KEY_CHARS], "payload": body},
                          ensure_ascii=True, sort_keys=True, default=str)

    bounded = _bounded(payload)
    line = render(bounded)
    if len(line) > LINE_CHARS:
        text = json.dumps(bounded, ensure_ascii=True, sort_keys=True, default=str)
        line = render({"truncated": text[:LINE_CHARS // 2] + "…"})
    return line


def _bounded(payload: Mapping[str, object]) -> dict[str, object]:
    """``payload`` with at most :data:`PAYLOAD_KEYS` keys of at most :data:`KEY_CHARS` characters, every long value
    cut to :data:`PAYLOAD_CHARS` characters (non-scalars as JSON text)."""
    out: dict[str, object] = {}
    items = list(payload.items())
    for key, value in items[:PAYLOAD_KEYS]:
        key = str(key)[:KEY_CHARS]
        if isinstance(value, bool | int) or value is None or (isinstance(value, float) and math.isfinite(value)):
            out[key] = value
            continue
        if not isinstance(value, str):
            try:
                text = json.dumps(value, default=str, ensure_ascii=True, allow_nan=False)
            except (TypeError, ValueError):  # a key JSON cannot hold, NaN, a cycle: log its repr instead
                value = repr(value)
            else:
                if len(text) <= PAYLOAD_CHARS:
                    out[key] = json.loads(text)
                    continue
                value = text
        out[key] = value if len(value) <= PAYLOAD_CHARS else value[:PAYLOAD_CHARS] + "…"
    if len(items) > PAYLOAD_KEYS:
        out["…"] = len(items) - PAYLOAD_KEYS
    return out
