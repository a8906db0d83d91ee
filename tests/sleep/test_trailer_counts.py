"""A ``Memhtml-Counts`` trailer is typed text: whatever JSON it holds, the readers of a run's trailers (resume's
``completed_phases``) read a non-object as no counts and never crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memhtml.sleep.engine.run import completed_phases
from tests.sleep.sleep_corpus_helpers import git, make_repo, memory


@pytest.mark.parametrize("counts", ['{"checked": 3}', "[1, 2]", "7", "{not json", "[" * 50_000 + "]" * 50_000],
                         ids=["object", "list", "number", "broken", "deep"])
def test_completed_phases_reads_any_counts_trailer(tmp_path: Path, counts: str) -> None:
    repo = make_repo(tmp_path, {"resources/notes/a.html": memory("Ann likes tea.")})
    base = repo.head_sha()
    assert base is not None
    git(repo.root, "commit", "-q", "--allow-empty", "-m", "memhtml(sleep(integrity)): check",
        "-m", f"Memhtml-Run: sleep/2026-03-10\nMemhtml-Phase: integrity\nMemhtml-Counts: {counts}")
    tip = repo.head_sha()
    assert tip is not None
    done = completed_phases(repo, base, tip)
    assert done == {"integrity": (tip, {"checked": 3} if counts.startswith('{"') else {})}
