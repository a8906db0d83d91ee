"""Shared fixtures of the arc-synthesis and compress tests: memories with links, a PhaseEnv with a scripted model,
the runner's closing commit, and the failing answers every model phase is tested with."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.model import Link
from git_memhtml.document.template import render_memory
from git_memhtml.gitrepo import GitRepo
from git_memhtml.llm.scripted import Answer, Malformed, Refusal, Reply, Script, ScriptedClient, Stall, Status
from git_memhtml.sleep.engine.commit import commit_phase
from git_memhtml.sleep.engine.env import LlmBudget, PhaseEnv, PhaseOutcome, RunServices
from tests.sleep.sleep_corpus_helpers import make_env

CREATED = "2026-01-01T00:00:00Z"


def mem(claim: str, *, links: Sequence[str] = (), memory_type: str = "semantic", title: str | None = None,
        body: Sequence[str] = (), rel: str = "relates_to", entities: Sequence[str] = ()) -> str:
    """One memory file with ``claim`` as its mark and a ``rel`` link to each path of ``links``."""
    return render_memory(MemoryDraft(
        title=title or claim[:60], memory_type=memory_type, claim=claim, body=tuple(body),
        links=tuple(Link(rel, "/" + p) for p in links), entities=tuple(entities),
    ), now=CREATED)


def model_env(repo: GitRepo, script: Script, *, remaining: int | None = None,
              dry_run: bool = False) -> tuple[PhaseEnv, ScriptedClient]:
    """An indexed PhaseEnv over ``repo`` whose bound model plays ``script`` (budget ``remaining`` calls)."""
    client = ScriptedClient(script)
    env = make_env(repo, dry_run=dry_run)
    services = RunServices(model=client, llm_budget=LlmBudget(remaining=remaining))
    return replace(env, services=services), client


def finish(env: PhaseEnv, phase: str, outcome: PhaseOutcome) -> str | None:
    """What the runner does after the body: commit what is staged with the phase's trailers and final counts."""
    counts = {**outcome.counts.wire(), **(outcome.model.wire() if outcome.model is not None else {})}
    return commit_phase(env.repo, run_id=env.run_id, phase=phase, subject=outcome.subject or phase,
                        body=outcome.body, counts=counts)


def git(root: Path, *args: str) -> str:
    """The git binary in ``root``."""
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def commits_since(repo: GitRepo, base: str) -> list[tuple[str, str, dict[str, object]]]:
    """``(subject, Memhtml-Phase, Memhtml-Counts)`` of each commit of ``base..HEAD``, oldest first."""
    out = git(repo.root, "log", "--reverse", "--format=%s%x1f%(trailers:key=Memhtml-Phase,valueonly,separator=)"
              "%x1f%(trailers:key=Memhtml-Counts,valueonly,separator=)%x1e", f"{base}..HEAD")
    rows = []
    for record in out.split("\x1e"):
        if record.strip():
            subject, phase, counts = record.strip("\n").split("\x1f")
            rows.append((subject, phase.strip(), json.loads(counts.strip())))
    return rows


def tree_status(repo: GitRepo) -> str:
    """``git status --porcelain`` of the work tree (empty when nothing is dirty or staged)."""
    return git(repo.root, "status", "--porcelain")


FAILING: list[tuple[str, Reply]] = [
    ("malformed-json", Malformed()),
    ("schema-failing", Answer({"unexpected": True})),
    ("http-429", Status(429, retry_after=1)),
    ("timeout", Stall(120)),
    ("refusal", Refusal()),
]
"""label → a reply that costs its batch (in-process, a 429 is one failed call: no retry)."""
