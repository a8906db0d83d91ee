"""The runs of tests/probes/runs.py are what they claim: finished runs the landing rail lets land, holding the
losses and the fold the acceptance tests of issue 10 judge."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memhtml.document import editors
from git_memhtml.gitrepo import GitRepo
from git_memhtml.sleep.engine.contract import SLEEP_PHASES
from git_memhtml.sleep.engine.journal import EntityRenamed, read_journal
from git_memhtml.sleep.engine.runfiles import journal_file
from git_memhtml.sleep.landing.rail import check_sleep_output
from tests.probes.conftest import copy_of
from tests.probes.runs import AMBER, FALSE_MERGES, STAMPED, BuiltRun, amber_path, cli_json, git

RUNS = ["crafted", "journaled", "fault_hooked", "folded", "forged_pointer", "evicted", "true_alias", "bookkeeping",
        "demo", "conv26"]
"""Fixture names of every built run; a new run joins by adding its fixture name."""


def phases_of(run: BuiltRun) -> list[str]:
    """The ``Memhtml-Phase`` trailer of every commit of ``base..tip``, oldest first."""
    out = git(run.root, "log", "--reverse", "--format=%(trailers:key=Memhtml-Phase,valueonly)",
              f"{run.base}..{run.tip}")
    return out.split()


@pytest.mark.parametrize("name", RUNS)
def test_each_run_is_a_finished_run_the_rail_accepts(request: pytest.FixtureRequest, name: str) -> None:
    run: BuiltRun = request.getfixturevalue(name)
    repo = GitRepo.discover(run.root)
    assert git(run.root, "rev-parse", "main").strip() == run.base
    assert git(run.root, "rev-parse", run.run_id).strip() == run.tip
    assert git(run.root, "symbolic-ref", "--short", "HEAD").strip() == "main"
    assert git(run.root, "status", "--porcelain") == ""
    phases = phases_of(run)
    assert phases[-1] == "report" and phases == sorted(phases, key=SLEEP_PHASES.index), phases
    check_sleep_output(repo, run.run_id, run.base, run.tip)  # raises NotSleepOutput when the rail refuses


@pytest.mark.parametrize("name", ["crafted", "journaled", "fault_hooked"])
def test_the_false_merges_rewrite_31_of_50_entities_in_one_entity_resolution_commit(
    request: pytest.FixtureRequest, name: str
) -> None:
    run: BuiltRun = request.getfixturevalue(name)
    assert len(run.lost) == len(FALSE_MERGES) == 31 and run.phase == "entity-resolution"
    commits = git(run.root, "log", "--format=%H", f"{run.base}..{run.tip}", "--", *run.lost).split()
    assert len(commits) == 1
    assert "Memhtml-Phase: entity-resolution" in git(run.root, "show", "-s", "--format=%B", commits[0])
    for n in range(1, AMBER + 1):
        old = f"svc-amber-{n}"
        head = git(run.root, "show", f"{run.tip}:{amber_path(n)}")
        expected = f"service:{FALSE_MERGES.get(old, old)}"
        assert editors.get_metas(head, "entity") == [expected], (n, editors.get_metas(head, "entity"))


@pytest.mark.parametrize("name", ["journaled", "fault_hooked"])
def test_the_journal_claims_every_false_rename_in_the_entity_resolution_commit(
    request: pytest.FixtureRequest, name: str
) -> None:
    run: BuiltRun = request.getfixturevalue(name)
    repo = GitRepo.discover(run.root)
    (sha,) = git(run.root, "log", "--format=%H", "--grep=^Memhtml-Phase: entity-resolution$",
                 f"{run.base}..{run.tip}").split()
    assert journal_file(run.run_id) in git(run.root, "show", "--name-only", "--format=", sha).split()
    renamed = {(e.old, e.new) for e in read_journal(repo, run.tip, run.run_id) if isinstance(e, EntityRenamed)}
    assert renamed == set(FALSE_MERGES.items())


def test_the_fault_hook_is_gone_once_the_run_is_built(fault_hooked: BuiltRun) -> None:
    from git_memhtml.domain.entities import DISTINCT, pair_verdict

    verdict = pair_verdict("svc-amber-2", "svc-amber-20", "service")
    assert verdict is not None and verdict.verdict == DISTINCT


def test_the_folded_run_archives_the_duplicate_with_a_pointer(folded: BuiltRun) -> None:
    (dropped,) = folded.explained
    archived = git(folded.root, "show", f"{folded.tip}:archive/2026/{dropped}")
    assert editors.get_meta(archived, "status") == "archived"
    keeper = editors.get_meta(archived, "superseded-by")
    assert keeper is not None
    assert f"/archive/2026/{dropped}" in {link.href for link in editors.get_links(
        git(folded.root, "show", f"{folded.tip}:{keeper.lstrip('/')}")) if link.rel == "supersedes"}


def test_merged_without_a_gate_the_crafted_branch_loses_the_entity_search(crafted: BuiltRun, tmp_path: Path) -> None:
    """What the outside review saw (issue 10 "Why"): before the run, ``search --entity service:svc-amber-20``
    finds its memory; merged past every gate (``--skip-gate``, in a copy), the rail lets it land and the search
    finds nothing."""
    run = copy_of(crafted, tmp_path)
    found = cli_json("-C", str(run.root), "search", "--entity", "service:svc-amber-20", "svc-amber")
    assert found[0] == 0 and [r["path"] for r in found[1]["data"]["hits"]] == [amber_path(20)], found
    code, merged = cli_json("-C", str(run.root), "sleep", "merge", run.run_id, "--skip-gate")
    assert code == 0 and merged["data"]["merged"], merged
    assert git(run.root, "rev-parse", "main").strip() == run.tip
    found = cli_json("-C", str(run.root), "search", "--entity", "service:svc-amber-20", "svc-amber")
    assert found[0] == 0 and found[1]["data"]["hits"] == [], found


def test_the_sampled_runs_are_one_content_under_three_run_ids(sampled: list[BuiltRun]) -> None:
    trees = {git(run.root, "rev-parse", f"{run.tip}^{{tree}}").strip() for run in sampled}
    assert len(trees) == 1 and len({run.run_id for run in sampled}) == len(sampled) == 3
    for run in sampled:
        assert phases_of(run) == ["retention-triage", "report"]
        check_sleep_output(GitRepo.discover(run.root), run.run_id, run.base, run.tip)
        live = git(run.root, "ls-tree", "-r", "--name-only", run.tip).split()
        assert not set(run.lost) & set(live) and len(run.lost) == 60


def test_the_bookkeeping_run_changes_head_metas_only(bookkeeping: BuiltRun) -> None:
    changed = git(bookkeeping.root, "diff", "--name-only", f"{bookkeeping.base}..{bookkeeping.tip}").split()
    assert changed == sorted(STAMPED)
    for path in changed:
        before = git(bookkeeping.root, "show", f"{bookkeeping.base}:{path}")
        after = git(bookkeeping.root, "show", f"{bookkeeping.tip}:{path}")
        assert editors.without_format_tags(before) == editors.without_format_tags(after)
        assert editors.get_metas(before, "entity") == editors.get_metas(after, "entity")
        assert editors.get_links(before) == editors.get_links(after)
