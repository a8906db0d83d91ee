"""Acceptance of issue 10 (a gate that sees the run), one test per acceptance line, through the CLI.

The runs are real (tests/probes/runs.py, built once per package by tests/probes/conftest.py):

1. A run that renames entities the way the false merges did — crafted by hand, or a real run with the old entity
   rule forced through a fault hook (its false renames journaled) — is refused by ``eval run`` and by ``sleep
   merge`` (refusal ``probes-failed``) with the current entity rule in place; the message names the lost memories
   and the phase ``entity-resolution``; main, every ref and the work tree stay as they were.
2. A benign run (the demo corpus, LoCoMo conv-26) passes with its figures printed, and ``sleep merge`` lands it.
3. A run that archives a memory with a pointer (a dedup fold) counts it as explained, not lost.
4. The probe sample is a function of the run id; the verdict of a fresh clone (the forge-CI job of
   docs/forge-ci.md §4, with no index and no state) equals the local one.

Verdict shape (the contract of ``eval run --json``): ``data.verdict`` = {runId, baseSha, headSha, space, k,
sampleSize, maxLost, passed, families: {claim|entity|control: {run, foundBefore, foundAfter, lost, explained,
meanRankChange}}, lost: [{family, probe, path, phases, commits, why}], explained: [{family, probe, path, via,
how}]}; ``data.timing`` is not deterministic and never compared.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.main import main
from tests.probes.conftest import copy_of
from tests.probes.runs import ALIAS_HOLDER, DROPPED, KEEPER, STALE, BuiltRun, git

FAMILIES = ("claim", "entity", "control")
FIGURES = ("run", "foundBefore", "foundAfter", "lost", "explained", "meanRankChange")
"""The verdict's probe families and the figures of each (issue 10 Build 2)."""

REFUSAL = "probes-failed"


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    """``git memhtml <args> --json`` in-process: (exit code, envelope or ``None``, stderr)."""
    capsys.readouterr()
    code = main([*args, "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def human(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``git memhtml <args>`` in-process, human output: (exit code, stdout + stderr)."""
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out + err


def verdict_of(capsys: pytest.CaptureFixture[str], run: BuiltRun, *extra: str) -> tuple[int, dict[str, Any]]:
    """``eval run <run> [extra] --json`` in ``run``'s repository: (exit code, ``data.verdict``)."""
    code, out, err = cli(capsys, "-C", str(run.root), "eval", "run", run.run_id, *extra)
    assert out is not None and "verdict" in out["data"], (code, out, err)
    return code, out["data"]["verdict"]


def snapshot(root: Path) -> tuple[str, str, str, str]:
    """Every ref, HEAD, the worktree list and the work tree's status (ignored files too)."""
    return (git(root, "for-each-ref", "--format=%(refname) %(objectname)"), git(root, "rev-parse", "HEAD"),
            git(root, "worktree", "list", "--porcelain"), git(root, "status", "--porcelain", "--ignored"))


def lost_paths(verdict: dict[str, Any], family: str | None = None) -> set[str]:
    """Paths of the verdict's lost rows (of one family, or all)."""
    return {row["path"] for row in verdict["lost"] if family is None or row["family"] == family}


def entity_resolution_commit(run: BuiltRun) -> str:
    """The sha of the run's one ``entity-resolution`` commit."""
    shas = git(run.root, "log", "--format=%H", "--grep=^Memhtml-Phase: entity-resolution$",
               f"{run.base}..{run.tip}").split()
    assert len(shas) == 1, shas
    return shas[0]


def check_shape(verdict: dict[str, Any], run: BuiltRun) -> None:
    """The verdict describes ``run`` and carries every family's figures, whose counts add up."""
    assert (verdict["runId"], verdict["baseSha"], verdict["headSha"]) == (run.run_id, run.base, run.tip)
    assert set(verdict["families"]) == set(FAMILIES), verdict["families"]
    for family, figures in verdict["families"].items():
        assert set(figures) >= set(FIGURES), (family, figures)
        assert 0 <= figures["foundBefore"] <= figures["run"], (family, figures)
        assert figures["lost"] == sum(1 for row in verdict["lost"] if row["family"] == family), family
        assert figures["explained"] == sum(1 for row in verdict["explained"] if row["family"] == family), family
        assert figures["lost"] + figures["explained"] <= figures["foundBefore"], (family, figures)
    total_lost = sum(f["lost"] for f in verdict["families"].values())
    assert verdict["passed"] is (total_lost <= verdict["maxLost"]), verdict


# -- 1. the false merges are refused ------------------------------------------------------------------------

def refuse_by_merge(capsys: pytest.CaptureFixture[str], run: BuiltRun) -> tuple[int, str]:
    code, out, err = cli(capsys, "-C", str(run.root), "sleep", "merge", run.run_id)
    assert out is not None, err
    assert out["refusal"] == REFUSAL and out["hint"], out
    return code, str(out["error"])


def refuse_by_eval_human(capsys: pytest.CaptureFixture[str], run: BuiltRun) -> tuple[int, str]:
    return human(capsys, "-C", str(run.root), "eval", "run", run.run_id)


def refuse_by_merge_human(capsys: pytest.CaptureFixture[str], run: BuiltRun) -> tuple[int, str]:
    return human(capsys, "-C", str(run.root), "sleep", "merge", run.run_id)


REFUSING_VERBS: dict[str, Callable[[pytest.CaptureFixture[str], BuiltRun], tuple[int, str]]] = {
    "eval-run": refuse_by_eval_human,
    "sleep-merge-json": refuse_by_merge,
    "sleep-merge": refuse_by_merge_human,
}
"""label → how a verb is asked about the run: (exit code, the text that must name the losses)."""

FALSE_MERGE_RUNS = ["crafted", "journaled", "fault_hooked"]
"""Fixture names of the runs that lose 31 entity searches (tests/probes/conftest.py)."""


@pytest.mark.parametrize("verb", sorted(REFUSING_VERBS))
@pytest.mark.parametrize("name", FALSE_MERGE_RUNS)
def test_a_false_entity_merge_run_is_refused_naming_the_lost_memories_and_the_phase(
    request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str], name: str, verb: str
) -> None:
    run: BuiltRun = request.getfixturevalue(name)
    before = snapshot(run.root)
    code, text = REFUSING_VERBS[verb](capsys, run)
    assert code == 1, (name, verb, text)
    assert run.phase in text, (name, verb, text)
    named = {path for path in run.lost if path in text}
    assert named, (name, verb, text)
    assert not {f"resources/services/svc-amber-{n}.html" for n in range(1, 20)} & {
        word.strip(".,;:()'\"") for word in text.split()}, (name, verb, "names a memory the run did not touch")
    assert snapshot(run.root) == before, (name, verb)


@pytest.mark.parametrize("name", FALSE_MERGE_RUNS)
def test_the_verdict_of_a_false_merge_run_lists_exactly_its_31_losses_with_their_commit(
    request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """Each lost entity search is attributed to the commit that rewrote the memory and to its phase trailer; a
    journaled rename the current veto calls distinct (the fault-hooked run journals them) explains nothing."""
    run: BuiltRun = request.getfixturevalue(name)
    code, verdict = verdict_of(capsys, run)
    assert code == 1 and verdict["passed"] is False and verdict["maxLost"] == 0
    check_shape(verdict, run)
    assert lost_paths(verdict) == set(run.lost) == lost_paths(verdict, "entity")
    assert verdict["families"]["entity"]["lost"] >= len(run.lost) == 31
    sha = entity_resolution_commit(run)
    for row in verdict["lost"]:
        assert row["phases"] == [run.phase] and sha in row["commits"] and row["why"], row
    assert not {row["path"] for row in verdict["explained"]} & set(run.lost), verdict["explained"]


def test_the_threshold_comes_from_max_lost_then_git_config(
    crafted: BuiltRun, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run = copy_of(crafted, tmp_path)
    lost = len(run.lost)
    assert verdict_of(capsys, run, "--max-lost", str(lost))[0] == 0
    code, verdict = verdict_of(capsys, run, "--max-lost", str(lost - 1))
    assert code == 1 and verdict["maxLost"] == lost - 1
    git(run.root, "config", "memhtml.gatemaxlost", str(lost))
    code, verdict = verdict_of(capsys, run)
    assert code == 0 and verdict["passed"] is True and verdict["maxLost"] == lost
    assert verdict_of(capsys, run, "--max-lost", "0")[0] == 1  # the flag wins over the config


USAGE_ROWS = [["--k", "0"], ["--k", "ten"], ["--probes", "-1"], ["--max-lost", "-1"], ["--max-lost", "x"]]
"""Bad arguments of ``eval run``: each a usage error (exit 2)."""


@pytest.mark.parametrize("args", USAGE_ROWS, ids=[" ".join(r) for r in USAGE_ROWS])
def test_eval_run_refuses_bad_arguments_as_usage(
    crafted: BuiltRun, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    before = snapshot(crafted.root)
    code, out, err = cli(capsys, "-C", str(crafted.root), "eval", "run", crafted.run_id, *args)
    assert code == 2, (args, out, err)
    assert snapshot(crafted.root) == before


# -- 2. benign runs pass and merge ---------------------------------------------------------------------------

BENIGN_RUNS = ["demo", "conv26"]
"""Fixture names of the benign real runs."""


@pytest.mark.parametrize("name", BENIGN_RUNS)
def test_a_benign_run_passes_with_its_figures(
    request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    run: BuiltRun = request.getfixturevalue(name)
    code, verdict = verdict_of(capsys, run)
    assert code == 0 and verdict["passed"] is True, verdict["lost"]
    check_shape(verdict, run)
    assert verdict["lost"] == [] and all(f["lost"] == 0 for f in verdict["families"].values())
    claims = verdict["families"]["claim"]
    assert claims["run"] > 0 and claims["foundBefore"] > 0, claims
    assert verdict["families"]["entity"]["run"] > 0, verdict["families"]["entity"]
    code, text = human(capsys, "-C", str(run.root), "eval", "run", run.run_id)
    assert code == 0
    for word in (*FAMILIES, "found before", "found after", "lost", "explained"):
        assert word in text.lower(), (word, text)
    assert str(claims["run"]) in text and str(claims["foundBefore"]) in text, text


@pytest.mark.parametrize("name", BENIGN_RUNS)
def test_sleep_merge_lands_a_benign_run(
    request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    run = copy_of(request.getfixturevalue(name), tmp_path)
    code, out, err = cli(capsys, "-C", str(run.root), "sleep", "merge", run.run_id)
    assert code == 0 and out["data"]["merged"], (out, err)
    assert git(run.root, "rev-parse", "main").strip() == run.tip


def test_a_true_alias_merge_is_explained_by_its_journaled_rename(
    true_alias: BuiltRun, capsys: pytest.CaptureFixture[str]
) -> None:
    """The other side of the veto's re-judgement: a rename the current rule accepts (a separator variant) explains
    the entity probe of the old spelling; the run passes."""
    code, verdict = verdict_of(capsys, true_alias)
    assert code == 0 and verdict["passed"] is True, verdict["lost"]
    check_shape(verdict, true_alias)
    rows = [row for row in verdict["explained"] if row["family"] == "entity" and row["path"] == ALIAS_HOLDER]
    assert rows and all("checkout_api" in row["probe"] and "checkout-api" in f"{row['via']} {row['how']}"
                        for row in rows), verdict["explained"]


def test_a_run_that_only_stamps_bookkeeping_metas_loses_nothing(
    bookkeeping: BuiltRun, capsys: pytest.CaptureFixture[str]
) -> None:
    """confidence-decay's stamps (``updated``, ``confidence``) on 40 of 50 memories change no claim, entity or link:
    no probe may be lost, least of all one of the 10 memories no commit touched (a lost row with no phase)."""
    code, verdict = verdict_of(capsys, bookkeeping)
    assert [(row["path"], row["rankBefore"], row["phases"]) for row in verdict["lost"]] == []
    assert code == 0 and verdict["passed"] is True
    check_shape(verdict, bookkeeping)


def test_review_carries_the_probe_verdict_in_every_format(demo: BuiltRun, capsys: pytest.CaptureFixture[str]) -> None:
    """``sleep review``: ``--json`` carries ``data.probes`` = the verdict of ``eval run``; the human and markdown
    forms print the probe table."""
    _, verdict = verdict_of(capsys, demo)
    code, out, err = cli(capsys, "-C", str(demo.root), "sleep", "review", demo.run_id)
    assert code == 0, err
    assert out["data"]["probes"] == verdict
    for extra in ([], ["--format", "markdown"]):
        code, text = human(capsys, "-C", str(demo.root), "sleep", "review", demo.run_id, *extra)
        assert code == 0, text
        lowered = text.lower()
        assert all(word in lowered for word in (*FAMILIES, "found before", "lost")), (extra, text)
    assert any(line.startswith("|") and "claim" in line for line in text.splitlines()), text


# -- 3. an archive with a pointer is explained -----------------------------------------------------------------

def test_a_fold_with_a_pointer_counts_as_explained_not_lost(
    folded: BuiltRun, capsys: pytest.CaptureFixture[str]
) -> None:
    code, verdict = verdict_of(capsys, folded)
    assert code == 0 and verdict["passed"] is True, verdict["lost"]
    check_shape(verdict, folded)
    assert DROPPED not in lost_paths(verdict)
    rows = [row for row in verdict["explained"] if row["path"] == DROPPED]
    assert rows, verdict["explained"]
    for row in rows:
        assert KEEPER in f"{row['via']} {row['how']}", row


def test_an_eviction_is_explained_by_its_archived_copy(evicted: BuiltRun, capsys: pytest.CaptureFixture[str]) -> None:
    """retention-triage archives with no pointer (docs/gate.md §9.2: with no live replacement the archived copy is
    searched, archived files admitted): an evicted memory found on the base is explained by its archive copy."""
    code, verdict = verdict_of(capsys, evicted)
    assert code == 0 and verdict["passed"] is True, verdict["lost"]
    check_shape(verdict, evicted)
    assert not lost_paths(verdict) & set(STALE), verdict["lost"]
    rows = [row for row in verdict["explained"] if row["path"] in STALE]
    assert rows, verdict["explained"]
    for row in rows:
        assert row["via"] == f"archive/2026/{row['path']}", row


def test_a_pointer_to_an_unrelated_memory_explains_nothing(
    forged_pointer: BuiltRun, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fold's pointer is followed, not trusted: the "keeper" of the forged fold neither answers the dropped
    memory's claim nor carries its entity, so the dropped memory is lost in both families, attributed to the
    dedup-merge commit, and never explained."""
    run = forged_pointer
    code, verdict = verdict_of(capsys, run)
    assert code == 1 and verdict["passed"] is False
    check_shape(verdict, run)
    assert lost_paths(verdict) == lost_paths(verdict, "claim") == lost_paths(verdict, "entity") == set(run.lost)
    assert not {row["path"] for row in verdict["explained"]} & set(run.lost), verdict["explained"]
    for row in verdict["lost"]:
        assert row["phases"] == [run.phase] and row["commits"], row


# -- 4. deterministic for a run id, equal in a fresh clone ------------------------------------------------------

def canonical(verdict: dict[str, Any]) -> str:
    """The verdict as bytes to compare: sorted keys, no whitespace."""
    return json.dumps(verdict, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def drawn(verdict: dict[str, Any]) -> frozenset[str]:
    """The claim probes a verdict drew, on a run that archives every memory with no pointer: each drawn probe
    found on the base is a claim row (lost or explained)."""
    rows = [row for row in (*verdict["lost"], *verdict["explained"]) if row["family"] == "claim"]
    return frozenset(row["path"] for row in rows)


def test_the_sample_is_a_function_of_the_run_id(sampled: list[BuiltRun], capsys: pytest.CaptureFixture[str]) -> None:
    """Three runs of one content under three ids: each id draws the same 5 probes twice; the ids do not all draw
    the same 5 (60 memories: 4 of 50 and 1 of 10, 2,303,000 samples). Every claim of the corpus is found on the
    base, so the five drawn probes are exactly the claim rows."""
    samples = []
    for run in sampled:
        _, first = verdict_of(capsys, run, "--probes", "5")
        _, second = verdict_of(capsys, run, "--probes", "5")
        assert canonical(first) == canonical(second), run.run_id
        assert first["sampleSize"] == 5, first["sampleSize"]
        claims = first["families"]["claim"]
        assert claims["run"] == claims["foundBefore"] == 5 and claims["foundAfter"] == 0, claims
        assert len(drawn(first)) == 5 and drawn(first) <= set(run.lost), drawn(first)
        samples.append(drawn(first))
    assert len(set(samples)) > 1, samples


def test_the_sample_is_stratified_by_bucket_and_type(
    sampled: list[BuiltRun], capsys: pytest.CaptureFixture[str]
) -> None:
    """50 semantic memories in ``resources`` and 10 episodic ones in ``areas``: 6 probes are 5 and 1 under every
    run id (issue 10 Build 1, "stratified by bucket and type")."""
    for run in sampled:
        _, verdict = verdict_of(capsys, run, "--probes", "6")
        sample = drawn(verdict)
        assert len(sample) == 6, sample
        assert len({p for p in sample if p.startswith("areas/")}) == 1, (run.run_id, sorted(sample))


@pytest.mark.parametrize("name", ["crafted", "fault_hooked", "folded", "demo"])
def test_two_eval_runs_give_the_same_verdict(
    request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    run: BuiltRun = request.getfixturevalue(name)
    first = verdict_of(capsys, run)
    second = verdict_of(capsys, run)
    assert first[0] == second[0] and canonical(first[1]) == canonical(second[1]), name


@pytest.mark.parametrize("name", ["crafted", "fault_hooked", "folded", "demo"])
def test_the_forge_ci_job_of_a_fresh_clone_gives_the_local_verdict(
    request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    """docs/forge-ci.md §4: a fresh clone (no index, no state.db), the run branch made from its remote-tracking
    branch, ``git memhtml eval run <run> --json`` as a subprocess there: the same exit code and the same verdict
    bytes as in the repository that made the run, and, for a refused run, as the local ``sleep merge`` refusal
    carries (its ``probes``)."""
    run: BuiltRun = request.getfixturevalue(name)
    local_code, local = verdict_of(capsys, run)
    clone = tmp_path / "ci"
    subprocess.run(["git", "clone", "-q", str(run.root), str(clone)], check=True, capture_output=True)
    assert not (clone / ".git" / "memhtml").exists()
    git(clone, "branch", "-f", run.run_id, f"origin/{run.run_id}")
    done = subprocess.run(["git", "memhtml", "eval", "run", run.run_id, "--json"], cwd=clone, capture_output=True,
                          text=True, check=False)
    assert done.returncode == local_code, (done.returncode, done.stderr)
    remote = json.loads(done.stdout)["data"]["verdict"]
    assert canonical(remote) == canonical(local), name
    assert git(clone, "status", "--porcelain") == ""
    if local_code == 1:  # the local merge refuses with the very same verdict
        before = snapshot(run.root)
        code, refused, err = cli(capsys, "-C", str(run.root), "sleep", "merge", run.run_id)
        assert code == 1 and refused["refusal"] == REFUSAL, err
        assert canonical(refused["probes"]) == canonical(remote), name
        assert snapshot(run.root) == before
