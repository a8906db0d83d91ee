"""The corpus digest corroboration compares (docs/models.md §5): what the memories claim, not what sleep wrote."""

from __future__ import annotations

from pathlib import Path

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.template import render_memory
from git_memhtml.index.corpus import corpus_digest
from tests.sleep.sleep_corpus_helpers import make_env, make_repo, memory

BASE = {"areas/inbox/a.html": memory("Ana owns the budget report."),
        "areas/inbox/b.html": memory("Bo reviews the budget report.")}


def _digest(tmp_path: Path, files: dict[str, str]) -> str:
    tmp_path.mkdir()
    env = make_env(make_repo(tmp_path, files), embed=False)
    try:
        return corpus_digest(env.db)
    finally:
        env.db.close()


def test_a_memory_a_person_adds_changes_the_digest(tmp_path: Path) -> None:
    more = {**BASE, "areas/inbox/c.html": memory("Cy approves the budget report.")}
    assert _digest(tmp_path / "one", BASE) != _digest(tmp_path / "two", more)


def test_what_sleep_wrote_itself_is_no_new_evidence(tmp_path: Path) -> None:
    """An arc or canonical a night wrote (author agent:sleep) must not unlock the second look of its own proposal."""
    arc = render_memory(MemoryDraft(title="Budget reports", memory_type="arc", author="agent:sleep",
                                    claim="Budget reports have an owner and a reviewer."), now="2026-01-01T00:00:00Z")
    assert _digest(tmp_path / "one", BASE) == _digest(tmp_path / "two", {**BASE, "areas/arcs/budget.html": arc})
