"""Phase commits with trailers (docs/phases.md §0 "commitPhase", docs/design.md §3.4).

Subject ``memhtml(sleep(<phase>)): <subject>``; every non-blank body line indented two spaces so untrusted memory
text can never forge a trailer; trailers ``Memhtml-Run``, ``Memhtml-Phase``, ``Memhtml-Counts`` (one-line JSON).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from git_memhtml.gitrepo import GitRepo
from git_memhtml.store.writer import commit_subject

TRAILER_RUN = "Memhtml-Run"
TRAILER_PHASE = "Memhtml-Phase"
TRAILER_COUNTS = "Memhtml-Counts"


def phase_subject(phase: str, subject: str) -> str:
    """Return ``memhtml(sleep(<phase>)): <subject>``: whitespace collapsed, capped at 72 chars with ``…``."""
    return commit_subject(f"sleep({phase})", subject)


def indent_body(body: str | None) -> str | None:
    """Indent every non-blank line of ``body`` by two spaces; control characters other than tab are dropped."""
    if body is None or not body.strip():
        return None
    lines = []
    for line in body.splitlines():
        clean = "".join(ch for ch in line if ch == "\t" or ch >= " ")
        lines.append("  " + clean if clean.strip() else "")
    return "\n".join(lines)


def counts_json(counts: Mapping[str, Any]) -> str:
    """Return the counts as one-line JSON with keys in insertion order."""
    return json.dumps(dict(counts), separators=(",", ":"), ensure_ascii=True)


def commit_phase(
    repo: GitRepo, *, run_id: str, phase: str, subject: str, body: str | None, counts: Mapping[str, Any]
) -> str | None:
    """Commit what is staged as this phase's commit; return its sha, or ``None`` when nothing is staged."""
    return repo.commit(
        phase_subject(phase, subject),
        body=indent_body(body),
        trailers=[(TRAILER_RUN, run_id), (TRAILER_PHASE, phase), (TRAILER_COUNTS, counts_json(counts))],
    )
