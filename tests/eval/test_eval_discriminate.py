"""The gate over the real stack: real git repo, real indexer, real SQLite, fake embedder (docs/gate.md §8.4)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_memhtml.errors import DiscriminationFailed
from git_memhtml.eval.discriminate import (
    GATE_HINT,
    DiscriminationReport,
    discrimination_rank,
    gate,
    outranks,
    run_discrimination,
)
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.retrieval import ArmWeights


def test_outranks_and_discrimination_rank() -> None:
    assert outranks(1, 2) and outranks(3, None)
    assert not outranks(None, None) and not outranks(None, 4) and not outranks(2, 2) and not outranks(5, 2)
    assert discrimination_rank(1, [2, None, 9]) == 1
    assert discrimination_rank(4, [2, None, 3]) == 3
    assert discrimination_rank(None, [None, None]) == 3


def test_gate_passes_at_default_seed_with_zero_inversions(tmp_path: Path) -> None:
    report = gate(workdir=tmp_path)
    assert report.passed
    assert len(report.probes) == 36 and report.requested == 36
    assert report.inversions == 0 and report.mrr == 1.0
    assert report.index_errors == ()
    assert not report.all_degraded and not any(p.degraded for p in report.probes)
    assert 0.0 < report.corpus_mrr <= 1.0
    assert report.seed == 20260802 and report.corpus_size > 200
    for probe in report.probes:
        assert probe.target_rank is not None
        assert all(outranks(probe.target_rank, rank) for _, rank in probe.control_ranks)
    summary = report.to_dict()["summary"]
    assert summary["inversions"] == 0 and summary["passed"] is True and summary["corpusSize"] == report.corpus_size


def test_gate_refuses_a_stack_that_ranks_by_recency_alone(tmp_path: Path) -> None:
    # Controls are one day newer than their targets; a recency-only ranking puts every control first.
    with pytest.raises(DiscriminationFailed) as caught:
        gate(workdir=tmp_path, weights=ArmWeights(fts=0.0, vector=0.0, recency=1.0, salience=0.0))
    assert caught.value.hint == GATE_HINT
    assert "probes inverted" in caught.value.message


def test_report_lists_inverted_probes_and_fails_the_floor(tmp_path: Path) -> None:
    report = run_discrimination(workdir=tmp_path, weights=ArmWeights(fts=0.0, vector=0.0, recency=1.0, salience=0.0))
    assert isinstance(report, DiscriminationReport)
    assert not report.passed and report.inversions == len(report.inverted) > 0
    assert report.mrr < 1.0
    rows = report.to_dict()["probes"]
    assert {"targetPath", "query", "targetRank", "controlRanks", "discriminationRank", "discriminated"} <= set(rows[0])
    assert any(not row["discriminated"] for row in rows)


def test_fixture_index_lives_in_the_fixture_repo_never_the_callers(tmp_path: Path) -> None:
    user = tmp_path / "user"
    user.mkdir()
    GitRepo.init(user)
    work = tmp_path / "work"
    work.mkdir()
    cwd = os.getcwd()
    os.chdir(user)
    try:
        run_discrimination(workdir=work, size=40, probes=4)
    finally:
        os.chdir(cwd)
    assert not (user / ".git" / "memhtml").exists()
    fixtures = list(work.glob("memhtml-eval-*"))
    assert len(fixtures) == 1
    assert (fixtures[0] / ".git" / "memhtml" / "index.db").is_file()
    repo = GitRepo.discover(fixtures[0])
    assert repo.root == fixtures[0].resolve()
    assert repo.current_branch() == "main"
    assert repo.run_git(["rev-list", "--count", "HEAD"]).strip() == "1"  # the whole corpus is one commit
    assert repo.dirty() == []


def test_no_probes_never_passes(tmp_path: Path) -> None:
    report = run_discrimination(workdir=tmp_path, size=5, probes=0)
    assert report.probes == () and not report.passed and report.mrr == 0.0


def test_temp_folder_gate_keeps_the_report_and_removes_its_folder(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """TempFolderGate (sleep merge, demo): figures survive the call, the memhtml-gate-* folder does not,
    whether the gate passes or refuses."""
    import tempfile

    from git_memhtml.errors import DiscriminationFailed
    from git_memhtml.eval.discriminate import TempFolderGate, gate_figures

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    passing = TempFolderGate()
    report = passing()
    assert passing.report is report and report.passed
    assert gate_figures(report) == (f"gate passed: {len(report.probes)} probes, 0 inversions, "
                                    f"mrr {report.mrr:.4f} (floor 0.85)")
    refusing = TempFolderGate(mrr_floor=1.01)  # no corpus reaches an MRR above 1
    with pytest.raises(DiscriminationFailed):
        refusing()
    assert refusing.report is not None and gate_figures(refusing.report).startswith("gate refused: ")
    assert list(tmp_path.glob("memhtml-gate-*")) == []
