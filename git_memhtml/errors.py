"""The one error base of git-memhtml.

Core code raises subclasses of :class:`MemhtmlError`; only the CLI (``git_memhtml.cli.main``) turns them into an
exit code, a one-line message and a ``hint:`` line. Error codes are the original tool's append-only vocabulary
(docs/design.md §3.8). Errors carry actionable fields (path, shas, operation) and never memory text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class MemhtmlError(Exception):
    """Base of every expected failure.

    Args:
        message: one line saying what went wrong (names the file or argument).
        hint: one line saying how to fix it (an exact command, flag or variable), or ``None``.
        path: the repository path the error is about, if any.

    Attributes:
        details: extra actionable fields (JSON values, camelCase keys) added to the ``--json`` error envelope,
            e.g. a refused merge's ``refusal`` and ``runId``; empty by default.
        code: the stable ``ERR_*`` code printed in ``--json`` envelopes.
        exit_code: the process exit code the CLI uses (1 failure, 2 usage).
    """

    code = "ERR_UNKNOWN"
    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None, path: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.path = path
        self.details: dict[str, Any] = {}


class UsageError(MemhtmlError):
    """A bad flag, argument or input stream; exits 2."""

    code = "ERR_INVALID_FLAG"
    exit_code = 2


class PathRefused(UsageError):
    """A path argument that does not name a memory: outside the repository, in the git dir or a dot-folder, a
    generated listing, a symlink, malformed text (``git_memhtml.tree.paths``); exits 2, nothing moved."""

    code = "ERR_INVALID_FLAG"


class NotARepo(MemhtmlError):
    """The directory is not inside a git repository."""

    code = "ERR_GIT"


class GitError(MemhtmlError):
    """A git operation failed (wraps ``pygit2.GitError`` and failures of the ``git`` binary)."""

    code = "ERR_GIT"


class PathNotFound(MemhtmlError):
    """A memory path named by the caller does not exist."""

    code = "ERR_PATH_NOT_FOUND"


class InvalidMemory(MemhtmlError):
    """A memory file (or rendered memory) violates the format; ``violations`` lists every finding.

    Args:
        violations: every violation found in one pass (docs/format.md §1.7).
    """

    code = "ERR_INVALID_MEMORY"

    def __init__(
        self,
        message: str,
        *,
        violations: Sequence[str] = (),
        hint: str | None = None,
        path: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint, path=path)
        self.violations = tuple(violations)


class SecretInMemory(InvalidMemory):
    """A memory (or the text of a write) would carry a secret the detector finds (docs/secrets.md); exits 2, nothing
    written. The message names the field or file and the secret's kind only, never its text."""

    code = "ERR_SECRET_DETECTED"
    exit_code = 2

    def __init__(self, message: str, *, kinds: Sequence[str] = (), hint: str | None = None,
                 path: str | None = None) -> None:
        super().__init__(message, violations=[message], hint=hint, path=path)
        self.kinds = tuple(kinds)
        if self.kinds:
            self.details = {"secretKinds": list(self.kinds)}


class RunNotFound(MemhtmlError):
    """No sleep run of that id (the seeds' ``no-run``)."""

    code = "ERR_NO_RUN"


class RunRefused(MemhtmlError):
    """A sleep run cannot start (no trunk branch, run ids exhausted)."""

    code = "ERR_GIT"


class DuplicateContent(MemhtmlError):
    """The content hash already belongs to an active memory."""

    code = "ERR_DUPLICATE_CONTENT"


class WriteConflict(MemhtmlError):
    """Two writers touched the same path."""

    code = "ERR_WRITE_CONFLICT"


class DirtyTree(MemhtmlError):
    """The work tree has uncommitted changes where a clean tree is required."""

    code = "ERR_DIRTY_TREE"


class IndexStale(MemhtmlError):
    """The index does not describe the tree and cannot be brought up to date."""

    code = "ERR_INDEX_STALE"


class EmbedModelMismatch(MemhtmlError):
    """The index holds vectors of another space than the configured embedder's."""

    code = "ERR_EMBED_MODEL_MISMATCH"


class ModelUnavailable(MemhtmlError):
    """An embedder or model could not be loaded or reached."""

    code = "ERR_MODEL_UNAVAILABLE"


class LlmContractViolation(ModelUnavailable):
    """A model answered, but not in the contract: no JSON, JSON that fails the schema, or a truncated answer.

    A subclass of :class:`ModelUnavailable` so a caller that only tells "no usable answer" apart needs one
    ``except``; the batch kernel counts it separately (docs/models.md §2).
    """

    code = "ERR_LLM_CONTRACT"


class ProviderRefused(ModelUnavailable):
    """The provider declined to answer (a refusal stop reason, a content filter, or HTTP 400/401/403/404)."""

    code = "ERR_LLM_REFUSED"


class BudgetExhausted(MemhtmlError):
    """The run's model-call budget (``sleep run --max-llm-calls N``) is spent; no call was made."""

    code = "ERR_LLM_BUDGET"


class StorageError(MemhtmlError):
    """SQLite or the file system failed (wraps ``apsw.Error``)."""

    code = "ERR_STORAGE"


class DiscriminationFailed(MemhtmlError):
    """The discrimination gate refused."""

    code = "ERR_DISCRIMINATION_FAILED"


class ProbesFailed(MemhtmlError):
    """The run gate refused: probes on your own memory found what the run made harder to find (docs/gate.md §9)."""

    code = "ERR_PROBES_FAILED"


class ConfigError(MemhtmlError):
    """A configuration value is invalid."""

    code = "ERR_INVALID_FLAG"
    exit_code = 2


class WriteLocked(WriteConflict):
    """Another writer held the repository-wide write lock for longer than the timeout (docs/store.md)."""


class HeadMoved(WriteConflict):
    """The branch moved between the read of ``HEAD`` and the ref update; nothing was committed."""


class AgentConfigRefused(MemhtmlError):
    """An agent configuration file cannot be changed safely (it does not parse, is a symlink, already holds an entry
    of ours that no receipt records, …); nothing was written (docs/agents.md)."""

    code = "ERR_AGENT_CONFIG"


class NotAMemoryRepo(MemhtmlError):
    """The repository is not a memory repository (no ``git memhtml init`` scaffold)."""

    code = "ERR_GIT"
