"""The discrimination gate: can the retrieval stack rank a memory above its own high-similarity WRONG twins?
(docs/gate.md §8.4; docs/sleep.md §2.6, docs/gate.md §8 "discrimination gate").

``run_discrimination`` writes the seeded fixture corpus into a fresh git repository under ``workdir`` (one
commit), indexes it with the real indexer and the deterministic fake embedder, seeds the access plane, and runs
the real four-arm search once per probe. It never opens the user's store: the index and state databases live in
the fixture repository's own git dir. ``gate`` is the refusal ``sleep merge`` runs before it moves ``main``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_memhtml.cut import clip_join
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.errors import DiscriminationFailed
from git_memhtml.eval.corpus import FixtureCorpus, build_corpus
from git_memhtml.eval.defaults import DEFAULT_PROBES, DEFAULT_SEED, DEFAULT_SIZE, MRR_FLOOR
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.access import seed_access
from git_memhtml.index.db import IndexDB
from git_memhtml.index.indexer import rebuild
from git_memhtml.index.retrieval import ArmWeights, Scope, search

EVAL_NOW = "2026-08-02T00:00:00Z"
"""The instant the fixture index is built and searched at (docs/gate.md §8.4)."""

PROBE_LIMIT = 40
"""Hits asked per probe; a target or control beyond it has no rank (docs/gate.md §8.4)."""

FAKE_DIM = 1024
"""Dimension of the gate's fake embedder (docs/gate.md §8.3)."""

GATE_HINT = "git memhtml eval discriminate --json  # shows which probes inverted"


@dataclass(frozen=True)
class ProbeResult:
    """One probe's outcome.

    Attributes:
        target_path, query: the probe.
        target_rank: 1-based rank of the target among the hits, ``None`` when absent.
        control_ranks: ``(family, control rank or None)`` per control, in family order.
        discrimination_rank: 1 + number of controls the target fails to outrank (``outranks(t, c)`` =
            ``t is not None and (c is None or t < c)``).
        discriminated: ``discrimination_rank == 1``.
        degraded: the search ran without its vector arm.
    """

    target_path: str
    query: str
    target_rank: int | None
    control_ranks: tuple[tuple[str, int | None], ...]
    discrimination_rank: int
    discriminated: bool
    degraded: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (camelCase keys) for the ``--json`` envelope."""
        return {
            "targetPath": self.target_path,
            "query": self.query,
            "targetRank": self.target_rank,
            "controlRanks": dict(self.control_ranks),
            "discriminationRank": self.discrimination_rank,
            "discriminated": self.discriminated,
            "degraded": self.degraded,
        }


@dataclass(frozen=True)
class DiscriminationReport:
    """The gate's outcome.

    Attributes:
        probes: per-probe rows, in probe order.
        requested: probes asked for; ``len(probes)`` may be smaller when targets run out.
        inversions: number of probes whose target failed to outrank at least one of its controls.
        mrr: mean of ``1 / discrimination_rank`` over probes, 4 dp (0.0 with no probes).
        corpus_mrr: mean of ``1 / target_rank`` (0 when absent), 4 dp; reported, never gated.
        mrr_floor: the floor ``passed`` used.
        passed: ``probes > 0 and inversions == 0 and mrr >= mrr_floor and not index_errors``.
        seed, corpus_size: the corpus seed and its number of files (base, people, archive, controls).
        all_degraded: every probe ran without its vector arm.
        index_errors: ``(path, reason)`` of fixture files the indexer skipped (always a bug; fails the gate).
        weights: the arm weights used.
    """

    probes: tuple[ProbeResult, ...]
    requested: int
    inversions: int
    mrr: float
    corpus_mrr: float
    mrr_floor: float
    passed: bool
    seed: int
    corpus_size: int
    all_degraded: bool
    index_errors: tuple[tuple[str, str], ...]
    weights: ArmWeights

    @property
    def inverted(self) -> tuple[ProbeResult, ...]:
        """The probes that were not discriminated."""
        return tuple(p for p in self.probes if not p.discriminated)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape for the ``--json`` envelope: ``{"summary": {...}, "probes": [...]}``."""
        return {
            "summary": {
                "probes": len(self.probes),
                "requested": self.requested,
                "inversions": self.inversions,
                "mrr": self.mrr,
                "corpusMrr": self.corpus_mrr,
                "mrrFloor": self.mrr_floor,
                "passed": self.passed,
                "seed": self.seed,
                "corpusSize": self.corpus_size,
                "allDegraded": self.all_degraded,
                "indexErrors": [list(e) for e in self.index_errors],
                "weights": {
                    "fts": self.weights.fts,
                    "vector": self.weights.vector,
                    "recency": self.weights.recency,
                    "salience": self.weights.salience,
                },
            },
            "probes": [p.to_dict() for p in self.probes],
        }


def outranks(target: int | None, control: int | None) -> bool:
    """``target`` is ranked and strictly above ``control`` (an absent control is outranked) (docs/gate.md §8.4)."""
    return target is not None and (control is None or target < control)


def discrimination_rank(target: int | None, controls: Sequence[int | None]) -> int:
    """``1 + #controls the target fails to outrank`` (docs/gate.md §8.4)."""
    return 1 + sum(1 for c in controls if not outranks(target, c))


FIXTURE_IDENTITY = (("user.name", "git-memhtml eval"), ("user.email", "eval@git-memhtml.invalid"))
"""Repository-local identity of the fixture's one commit (``.invalid`` never resolves; RFC 2606)."""


def _write_fixture(corpus: FixtureCorpus, root: Path) -> GitRepo:
    """Create a repository at ``root`` (branch ``main``) holding the corpus in one commit."""
    repo = GitRepo.init(root, branch="main")
    for key, value in FIXTURE_IDENTITY:  # a throwaway repository: never depend on (or refuse for) the user's identity
        repo.config_set(key, value)
    for path, text in corpus.files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8", newline="\n")
    repo.stage(corpus.files)
    repo.commit(f"memhtml(eval): fixture corpus seed {corpus.seed}, {len(corpus.files)} files")
    return repo


def _rank(paths: Sequence[str], path: str) -> int | None:
    try:
        return paths.index(path) + 1
    except ValueError:
        return None


def run_discrimination(
    *,
    workdir: Path,
    seed: int = DEFAULT_SEED,
    size: int = DEFAULT_SIZE,
    probes: int = DEFAULT_PROBES,
    mrr_floor: float = MRR_FLOOR,
    weights: ArmWeights | None = None,
) -> DiscriminationReport:
    """Run the discrimination evaluation in fake mode (docs/gate.md §8.4).

    Args:
        workdir: an existing folder; a fresh ``memhtml-eval-*`` repository is created inside it and left there
            (the caller owns the folder and its cleanup).
        seed, size, probes: the corpus (defaults 20260802, 200, 36; docs/gate.md §8.1).
        mrr_floor: the MRR floor (default 0.85).
        weights: arm weights (default ``ArmWeights()``: fts 1.0, vector 1.0, recency 0.5, salience 0.4).

    Returns:
        The :class:`DiscriminationReport`; it never raises for a failing gate (see :func:`gate`).

    Raises:
        GitError: the fixture repository could not be written. StorageError: SQLite failed.
    """
    weights = weights or ArmWeights()
    corpus = build_corpus(seed, size, probes)
    root = Path(tempfile.mkdtemp(prefix="memhtml-eval-", dir=workdir))
    repo = _write_fixture(corpus, root)
    embedder = FakeEmbedder(dim=FAKE_DIM)
    db = IndexDB.for_repo(repo)
    try:
        report = rebuild(repo, db, embedder, now=EVAL_NOW)
        seed_access(db, corpus.access)
        results = []
        for probe in corpus.probes:
            found = search(db, probe.query, scope=Scope(include_archived=False), limit=PROBE_LIMIT,
                           embedder=embedder, weights=weights, now=EVAL_NOW)
            paths = [hit.path for hit in found.hits]
            target = _rank(paths, probe.target_path)
            ranks = tuple((c.family, _rank(paths, c.path)) for c in probe.controls)
            d_rank = discrimination_rank(target, [r for _, r in ranks])
            results.append(ProbeResult(probe.target_path, probe.query, target, ranks, d_rank, d_rank == 1,
                                       found.degraded))
    finally:
        db.close()
    count = len(results)
    mrr = round(sum(1 / r.discrimination_rank for r in results) / count, 4) if count else 0.0
    corpus_mrr = round(sum(1 / r.target_rank for r in results if r.target_rank) / count, 4) if count else 0.0
    inversions = sum(1 for r in results if not r.discriminated)
    errors = tuple(report.errors)
    passed = count > 0 and inversions == 0 and mrr >= mrr_floor and not errors
    return DiscriminationReport(
        probes=tuple(results), requested=probes, inversions=inversions, mrr=mrr, corpus_mrr=corpus_mrr,
        mrr_floor=mrr_floor, passed=passed, seed=seed, corpus_size=len(corpus.files),
        all_degraded=count > 0 and all(r.degraded for r in results), index_errors=errors, weights=weights,
    )


def gate_figures(report: DiscriminationReport) -> str:
    """One line of the gate's figures: ``gate passed: 36 probes, 0 inversions, mrr 1.0000 (floor 0.85)``."""
    verdict = "passed" if report.passed else "refused"
    return (f"gate {verdict}: {len(report.probes)} probes, {report.inversions} inversions, "
            f"mrr {report.mrr:.4f} (floor {report.mrr_floor})")


def gate(*, workdir: Path, mrr_floor: float = MRR_FLOOR, weights: ArmWeights | None = None) -> DiscriminationReport:
    """The pre-merge gate: run the default-seed evaluation and refuse unless it passed (docs/sleep.md §2.6).

    Returns:
        The passing report.

    Raises:
        DiscriminationFailed: the evaluation did not pass; the message names the inverted probes' targets and
            the hint is ``git memhtml eval discriminate --json``.
    """
    return refuse_unless_passed(run_discrimination(workdir=workdir, mrr_floor=mrr_floor, weights=weights))


def refuse_unless_passed(report: DiscriminationReport) -> DiscriminationReport:
    """Return ``report`` when it passed, else raise :class:`DiscriminationFailed` (the gate's verdict alone).

    Raises:
        DiscriminationFailed: as :func:`gate`.
    """
    if not report.passed:
        inverted = clip_join((p.target_path for p in report.inverted), 3)
        reason = (f"{report.inversions} of {len(report.probes)} probes inverted: {inverted}"
                  if report.inversions else
                  f"{len(report.index_errors)} fixture files failed to index" if report.index_errors else
                  f"{len(report.probes)} probes, mrr {report.mrr} below floor {report.mrr_floor}")
        raise DiscriminationFailed(f"discrimination gate refused: {reason}", hint=GATE_HINT)
    return report


class TempFolderGate:
    """The pre-merge gate as a callable for ``merge_run``: each call evaluates in a fresh ``memhtml-gate-*``
    temporary folder that is removed when the call returns or raises, and keeps the report in :attr:`report`
    so the caller can print the figures (:func:`gate_figures`) whether the gate passed or refused.

    Raises (on call):
        DiscriminationFailed: as :func:`gate`.
    """

    def __init__(self, *, mrr_floor: float = MRR_FLOOR, weights: ArmWeights | None = None) -> None:
        self.mrr_floor = mrr_floor
        self.weights = weights
        self.report: DiscriminationReport | None = None

    def __call__(self) -> DiscriminationReport:
        with tempfile.TemporaryDirectory(prefix="memhtml-gate-") as folder:
            self.report = run_discrimination(workdir=Path(folder), mrr_floor=self.mrr_floor, weights=self.weights)
        return refuse_unless_passed(self.report)
