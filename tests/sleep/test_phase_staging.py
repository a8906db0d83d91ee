"""Rewriting phases stage what they stamped in one go: every changed file staged, nothing left unstaged."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from git_memhtml.sleep.engine.env import PhaseEnv, PhaseOutcome
from git_memhtml.sleep.phases import confidence_decay, entity_resolution, person_links
from git_memhtml.store import edits
from tests.sleep.sleep_corpus_helpers import git, make_env, make_repo, memory

WEEK_AGO = "2026-03-03T00:00:00Z"  # one decay period before the helpers' run date (2026-03-10)


def _files() -> dict[str, str]:
    names = ["service:Checkout API", "service:checkout-api", "service:checkout api"]
    return {
        f"areas/inbox/m{i}.html": memory(
            f"Checkout fact number {i} holds.", created=WEEK_AGO, entities=[names[i % 3], "person:Sam Ortiz"]
        )
        for i in range(6)
    }


def _unstaged(root: Path) -> list[str]:
    return git(root, "diff", "--name-only").split()


def _staged(root: Path) -> list[str]:
    return git(root, "diff", "--cached", "--name-only").split()


@pytest.mark.parametrize(
    ("phase", "at_least"),
    [(entity_resolution.run, 4), (person_links.run, 6), (confidence_decay.run, 6)],
    ids=["entity-resolution", "person-links", "confidence-decay"],
)
def test_every_stamped_file_is_staged_for_the_phase_commit(
    tmp_path: Path, phase: Callable[[PhaseEnv], PhaseOutcome], at_least: int
) -> None:
    env = make_env(make_repo(tmp_path, _files()))
    phase(env)
    root = env.repo.root
    staged = [p for p in _staged(root) if p.startswith("areas/inbox/m")]
    assert len(staged) >= at_least
    assert _unstaged(root) == []
    status = git(root, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert status and all(line[1] == " " for line in status), status  # nothing unstaged, nothing untracked


def test_stamp_file_without_stage_writes_but_leaves_staging_to_the_caller(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, _files()))
    root = env.repo.root
    assert edits.stamp_file(env.repo, "areas/inbox/m0.html", [edits.set_meta("updated", "2026-03-10T00:00:00Z")],
                            stage=False)
    assert _unstaged(root) == ["areas/inbox/m0.html"] and _staged(root) == []
    assert edits.stamp_file(env.repo, "areas/inbox/m1.html", [edits.set_meta("updated", "2026-03-10T00:00:00Z")])
    assert _staged(root) == ["areas/inbox/m1.html"]


def test_archive_file_without_stage_moves_and_stamps_but_stages_nothing(tmp_path: Path) -> None:
    """A sweep archiving many files stages once (issue 12: one index write per file was quadratic); the staged
    result equals archiving file by file."""
    batched = make_env(make_repo(_mkdir(tmp_path / "a"), _files()))
    single = make_env(make_repo(_mkdir(tmp_path / "b"), _files()))
    paths = ["areas/inbox/m0.html", "areas/inbox/m3.html"]
    staged: list[str] = []
    for path in paths:
        target = edits.archive_file(batched.repo, path, at="2026-03-10T00:00:00Z", stage=False)
        assert target is not None
        staged += [path, target]
        assert edits.archive_file(single.repo, path, at="2026-03-10T00:00:00Z") == target
    assert _staged(batched.repo.root) == []
    batched.repo.stage(staged)
    assert _unstaged(batched.repo.root) == []
    assert git(batched.repo.root, "write-tree") == git(single.repo.root, "write-tree")


def _mkdir(folder: Path) -> Path:
    folder.mkdir(parents=True)
    return folder
