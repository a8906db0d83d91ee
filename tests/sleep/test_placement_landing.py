"""A re-filing as the landing rail and the probe gate read it from a tree diff (git_memhtml/sleep/engine/refile.py,
docs/phases.md §1.14): the same article moved from the inbox to a topic folder is a move, anything else of that
shape is still a deletion."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from git_memhtml.gitrepo import GitRepo
from git_memhtml.sleep.engine.refile import refiled_moves, refiled_source
from git_memhtml.sleep.landing.rail import path_violations
from git_memhtml.sleep.probes.pointers import Target, read_pointers
from git_memhtml.store import edits
from tests.sleep.sleep_corpus_helpers import git, make_repo, memory, write

RUN = "sleep/2026-03-10"
NOTE = "areas/inbox/vacuum.html"
FACT = "Autovacuum on the orders table runs every night."


def _moved(repo: GitRepo) -> None:
    """The phase's move, then a later head edit of the moved file (an inbound-link rewrite does the same)."""
    assert edits.move_file(repo, NOTE, "resources/postgres/vacuum.html")
    assert edits.stamp_file(repo, "resources/postgres/vacuum.html", [edits.set_meta("confidence", "0.800")],
                            stage=False)
    repo.stage([NOTE, "resources/postgres/vacuum.html"])


def _other_article(repo: GitRepo) -> None:
    """The inbox memory deleted and another memory added under its name in a topic folder."""
    (repo.root / NOTE).unlink()
    write(repo.root, {"resources/postgres/vacuum.html": memory("Autovacuum is switched off everywhere.")})
    repo.stage([NOTE, "resources/postgres/vacuum.html"])


def _into(folder: str) -> Callable[[GitRepo], None]:
    def move(repo: GitRepo) -> None:
        assert edits.move_file(repo, NOTE, f"{folder}/vacuum.html")
        repo.stage([NOTE, f"{folder}/vacuum.html"])
    return move


CASES: list[tuple[str, Callable[[GitRepo], None], bool]] = [
    ("the same article re-filed, head edited after", _moved, True),
    ("another article under the same name", _other_article, False),
    ("into the arcs folder", _into("areas/arcs"), False),
    ("into the people folder", _into("resources/people"), False),
    ("two levels down", _into("resources/postgres/tuning"), False),
    ("into a project", _into("projects/db"), False),
]


@pytest.mark.parametrize(("change", "accepted"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_rail_accepts_a_re_filing_and_nothing_else_of_its_shape(
    tmp_path: Path, change: Callable[[GitRepo], None], accepted: bool
) -> None:
    repo = make_repo(tmp_path, {NOTE: memory(FACT), "resources/postgres/bloat.html": memory("Bloat is checked.")})
    base = repo.head_sha()
    change(repo)
    tip = repo.commit("move")
    assert base is not None and tip is not None
    changes = repo.tree_changes(base, tip)
    refiled = refiled_moves(repo, changes)
    found = path_violations(RUN, changes, refiled)
    if accepted:
        assert refiled == {NOTE: "resources/postgres/vacuum.html"} and found == []
    else:
        assert refiled == {} and found == [f"{NOTE}: deleted (sleep never deletes; it only moves a memory into "
                                           "archive/<YYYY>/)"]


def test_a_probe_of_a_re_filed_memory_looks_at_its_new_path_as_itself(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {NOTE: memory(FACT)})
    base = repo.head_sha()
    _moved(repo)
    tip = repo.commit("move")
    assert base is not None and tip is not None
    pointers = read_pointers(repo, base, tip, status={"resources/postgres/vacuum.html": False}, supersedes={},
                             journal=[])
    assert pointers.targets(NOTE) == [Target("resources/postgres/vacuum.html", "self")]
    assert git(repo.root, "show", "-M", "--name-status", "--format=", tip).startswith("R")


@pytest.mark.parametrize(("added", "source"), [
    ("areas/oncall/x.html", "areas/inbox/x.html"),
    ("resources/postgres/x.HTML", "areas/inbox/x.HTML"),
    ("areas/inbox/x.html", None),
    ("areas/arcs/x.html", None),
    ("resources/people/x.html", None),
    ("areas/x.html", None),
    ("areas/a/b/x.html", None),
    ("areas/.hidden/x.html", None),
    ("archive/2026/areas/inbox/x.html", None),
    ("areas/oncall/notes.txt", None),
])
def test_refiled_source_names_the_inbox_path_of_a_topic_folder_file_only(added: str, source: str | None) -> None:
    assert refiled_source(added) == source
