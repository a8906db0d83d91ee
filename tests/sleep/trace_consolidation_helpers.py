"""Shared set-up of the trace-consolidation tests: real transcripts copied into a temporary trace root, scanned into
the repository's trace plane, settled (mtime before the run instant less an hour), and a scripted model that
answers with quotes taken from the real text."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from git_memhtml.index.db import IndexDB
from git_memhtml.index.traces import TraceTables
from git_memhtml.llm.scripted import Answer, Reply, ScriptedRequest, blocks
from git_memhtml.traces.scan import discover, scan
from tests.conftest import SHARED_DATA

TRANSCRIPTS = SHARED_DATA / "transcripts" / "claude-code"
SMALL = "4b2030ed-5563-49ea-b703-6a002f2d3cc8"
"""The 27 KB session: one prompt, one sub-agent call, the answer about Thai curry colours."""
POEMS = "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68"
"""The 84 KB session with five sub-agent sidecars (curry poems)."""

SETTLED = datetime(2026, 3, 9, 12, 0, tzinfo=UTC).timestamp()
"""An mtime 12 hours before the run instant of ``tests.sleep.sleep_corpus_helpers.DATE`` (2026-03-10T00:00Z)."""

Q_SMALL = ("spawn a subagent to perform a websearch",
           "was voted the world's #1 most delicious food by CNN in 2011")
"""Two quotes the small session holds (the prompt's words; the assistant's, inside one JSON string)."""
Q_POEMS = ("Spaw sub-agents to write poems about Thai green curry",
           "I only spawned the red one initially")
"""Two quotes the poems session holds."""
ABSENT = "the curry was invented in 1850 by a committee"
"""A quote no transcript holds."""


def settle(path: Path, mtime: float = SETTLED) -> None:
    """Set ``path``'s access and modification times to ``mtime`` (seconds)."""
    os.utime(path, (mtime, mtime))


def copy_sessions(tmp_path: Path, sessions: Sequence[str] = (SMALL, POEMS), *, mtime: float = SETTLED) -> Path:
    """Copy the named real sessions (main files and sidecars) under ``tmp_path/claude``, settled; return the root."""
    root = tmp_path / "claude"
    for source in sorted(TRANSCRIPTS.rglob("*.jsonl")):
        relative = source.relative_to(TRANSCRIPTS)
        if not any(part.startswith(s) for s in sessions for part in relative.parts):
            continue
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        settle(target, mtime)
    return root


def index_traces(db: IndexDB, claude: Path, codex: Path | None = None) -> None:
    """Scan ``claude`` (and ``codex``) into ``db``'s trace plane, as ``git memhtml trace index`` does."""
    roots, files = discover(claude, codex if codex is not None else claude.parent / "no-codex")
    scan(TraceTables(db), roots, files, now="2026-03-09T13:00:00Z")


def candidate(claim: str, quotes: Sequence[str], *, kind: str = "semantic", gist: str | None = None,
              entities: Sequence[str] = ()) -> dict[str, Any]:
    """One extraction candidate in wire shape."""
    return {"kind": kind, "claim": claim, "gist": gist or f"{claim} Seen in a session.", "entities": list(entities),
            "evidence": [{"quote": q} for q in quotes]}


def commitment(statement: str, quote: str, *, confidence: float = 0.9, resolved: bool = False,
               actor: str = "user") -> dict[str, Any]:
    """One extraction commitment in wire shape."""
    return {"statement": statement, "actor": actor, "dueHint": "", "quote": quote, "confidence": confidence,
            "resolved": resolved}


def transcript_of(req: ScriptedRequest) -> str:
    """The transcript text an extraction request framed."""
    return next(iter(blocks(req.prompt).values()), "")


def echo_synthesis(req: ScriptedRequest) -> Reply:
    """A synthesis that keeps every candidate as its own memory (no restatement merged)."""
    memories = []
    for key, text in blocks(req.prompt).items():
        head, _, gist = text.partition("\n")
        kind, _, claim = head.partition("] ")
        memories.append({"kind": kind.lstrip("["), "claim": claim, "gist": gist or claim, "entities": [],
                         "candidateKeys": [key]})
    return Answer({"memories": memories})


def curry_extraction(req: ScriptedRequest) -> Reply:
    """Candidates for the two real sessions: a grounded one each, and one citing :data:`ABSENT` for the small one."""
    text = transcript_of(req)
    found: list[dict[str, Any]] = []
    if "perform a websearch" in text:
        found.append(candidate("Green curry is the most popular Thai curry.", Q_SMALL,
                               entities=["thai-curry", "dish:thai curry"]))
        found.append(candidate("Thai curry was invented by a committee.", (Q_SMALL[0], ABSENT)))
    if "Spaw sub-agents" in text:
        found.append(candidate("The user asks for curry poems written by background sub-agents.", Q_POEMS,
                               kind="episodic"))
    return Answer({"candidates": found, "commitments": []})


CURRY_SCRIPT = {"TraceExtraction": curry_extraction, "TraceSynthesis": echo_synthesis}
