"""The runs of tests/probes, each built once for the whole package (tests/probes/runs.py).

Package-scoped: the session's hermetic environment (tests/conftest.py ``hermetic_session``) is already pinned when
they are built. A test that moves a ref (``sleep merge``) works on :func:`copy_of` a run, never on the shared one.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from tests.probes import runs
from tests.probes.runs import BuiltRun


@pytest.fixture(scope="package")
def crafted(tmp_path_factory: pytest.TempPathFactory) -> BuiltRun:
    """The hand-made false-merge branch (issue 10 acceptance 1, first way)."""
    return runs.false_entity_merge_branch(tmp_path_factory.mktemp("crafted"))


@pytest.fixture(scope="package")
def journaled(tmp_path_factory: pytest.TempPathFactory) -> BuiltRun:
    """The hand-made false-merge branch with a journal that claims every false rename."""
    return runs.journaled_false_merge_branch(tmp_path_factory.mktemp("journaled"))


@pytest.fixture(scope="package")
def fault_hooked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BuiltRun]:
    """A real run with the old entity rule forced through a fault hook (issue 10 acceptance 1, second way)."""
    patch = pytest.MonkeyPatch()
    try:
        yield runs.fault_hook_false_merge_run(tmp_path_factory.mktemp("fault-hook"), patch)
    finally:
        patch.undo()


@pytest.fixture(scope="package")
def folded(tmp_path_factory: pytest.TempPathFactory) -> BuiltRun:
    """A real run whose dedup-merge archives a near-duplicate with a pointer (issue 10 acceptance 3)."""
    return runs.archive_with_pointer_run(tmp_path_factory.mktemp("folded"))


@pytest.fixture(scope="package")
def true_alias(tmp_path_factory: pytest.TempPathFactory) -> BuiltRun:
    """A real run whose entity-resolution merges ``checkout_api`` into ``checkout-api`` (a true alias)."""
    return runs.true_alias_run(tmp_path_factory.mktemp("true-alias"))


@pytest.fixture(scope="package")
def bookkeeping(tmp_path_factory: pytest.TempPathFactory) -> BuiltRun:
    """A hand-made run that only stamps ``updated`` and ``confidence`` on 40 of 50 memories: benign."""
    return runs.bookkeeping_only_branch(tmp_path_factory.mktemp("bookkeeping"))


@pytest.fixture(scope="package")
def demo(tmp_path_factory: pytest.TempPathFactory) -> BuiltRun:
    """The demo corpus and a full real run (issue 10 acceptance 2)."""
    return runs.demo_run(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="package")
def conv26(tmp_path_factory: pytest.TempPathFactory) -> BuiltRun:
    """LoCoMo conv-26 and a full real run (issue 10 acceptance 2)."""
    return runs.conv26_run(tmp_path_factory.mktemp("conv26"))


def copy_of(run: BuiltRun, folder: Path) -> BuiltRun:
    """``run`` with its repository copied into ``folder`` (git dir, index and state included, symlinks kept), for
    a test that moves refs. The runs' repositories have no linked worktree left, so the copy is whole but for
    ``.git/memhtml/trash``, which the detached deletes of removed worktrees may still be emptying."""
    root = folder / "memory"
    trash = run.root / ".git" / "memhtml" / "trash"

    def detached_deletes(where: str, names: list[str]) -> list[str]:
        """The trash folder: a removed worktree's detached ``rm -rf`` may still be emptying it (docs/sleep.md
        §2.2), so a copy would meet files vanishing under it; it is no part of the run's state."""
        return ["trash"] if Path(where) == trash.parent else []

    shutil.copytree(run.root, root, symlinks=True, ignore=detached_deletes)
    return replace(run, root=root)


@pytest.fixture(scope="package")
def evicted(tmp_path_factory: pytest.TempPathFactory) -> BuiltRun:
    """A real run whose retention-triage evicts two stale memories (archived, no pointer)."""
    return runs.retention_archive_run(tmp_path_factory.mktemp("evicted"))


@pytest.fixture(scope="package")
def sampled(tmp_path_factory: pytest.TempPathFactory) -> list[BuiltRun]:
    """One repository, three hand-made runs of the same content under three run ids (the sample's seed)."""
    return runs.archive_everything_branches(tmp_path_factory.mktemp("sampled"))


@pytest.fixture(scope="package")
def forged_pointer(tmp_path_factory: pytest.TempPathFactory) -> BuiltRun:
    """A hand-made fold whose superseded-by names an unrelated memory."""
    return runs.forged_pointer_branch(tmp_path_factory.mktemp("forged-pointer"))
