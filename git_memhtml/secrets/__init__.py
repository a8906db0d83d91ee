"""Secret detection and redaction for text that may reach a prompt, a memory, the trace index or a commit.

Public API (docs/secrets.md):

- :func:`redact` ``(text: str) -> Redaction``: the text with each secret replaced by ``[redacted:<kind>]``,
  the count and the sorted kinds.
- :func:`find_secrets` ``(text: str) -> list[Finding]``: the spans (kind, start, end) without the secrets.

Both accept any ``str`` and raise nothing; neither ever logs or reprs a secret.
"""

from git_memhtml.secrets.detect import Finding, Redaction, find_secrets, redact

__all__ = ["Finding", "Redaction", "find_secrets", "redact"]
