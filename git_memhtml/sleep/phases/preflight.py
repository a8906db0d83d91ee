"""Phase 1, preflight: a clean tree, a fresh index in the run's vector space, and a corpus snapshot.

Source: docs/phases.md §1.1 and docs/phases.md §0.2 (v0.6: a hard prerequisite of every later
phase; vector coverage floor 0.5 hard, 0.95 warning, only when the vector plane is in use). Never commits.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from git_memhtml.cut import clip_join
from git_memhtml.errors import DirtyTree, IndexStale
from git_memhtml.index.indexer import update
from git_memhtml.index.stats import corpus_counts
from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome

VECTOR_COVERAGE_HARD_FLOOR = 0.5
VECTOR_COVERAGE_WARN_FLOOR = 0.95
"""docs/phases.md §1.1: under 0.5 refuse; between 0.5 and 0.95 warn and continue."""


@dataclass(frozen=True)
class PreflightCounts(PhaseCounts):
    """The corpus snapshot and what the index refresh did; ``vector_coverage`` only with an embedder and chunks,
    ``index_errors`` only when files were skipped as unparseable."""

    active: int
    archived: int
    chunks: int
    embeddings: int
    edges: int
    derived_edges: int
    indexed_added: int
    indexed_modified: int
    indexed_removed: int
    indexed_renamed: int
    embeddings_written: int
    index_skipped: int
    vector_coverage: float | None = None
    index_errors: int | None = None


def run(env: PhaseEnv) -> PhaseOutcome:
    """Refuse a dirty run tree, bring the run's index up to date, and snapshot counts.

    Raises:
        DirtyTree: the run's work tree holds uncommitted bytes (a later phase would commit them).
        EmbedModelMismatch: the index holds another vector space.
        IndexStale: vector coverage below 0.5 while an embedder is bound.
    """
    dirty = env.repo.dirty()
    if dirty:
        shown = clip_join((e.path for e in dirty), 5)
        raise DirtyTree(
            f"the run's work tree is dirty ({len(dirty)} paths: {shown})",
            hint=f"git memhtml sleep abort {env.run_id}, then run again",
        )
    report = update(env.repo, env.db, env.embedder, now=env.at)
    space = env.embedder.space if env.embedder is not None else None
    snapshot = corpus_counts(env.db, space=space)
    counts = PreflightCounts(
        active=snapshot.live,
        archived=snapshot.archived,
        chunks=snapshot.chunks,
        embeddings=snapshot.embeddings,
        edges=snapshot.edges,
        derived_edges=snapshot.derived_edges,
        indexed_added=report.added,
        indexed_modified=report.modified,
        indexed_removed=report.removed,
        indexed_renamed=report.renamed,
        embeddings_written=report.embeddings_written,
        index_skipped=report.skipped,
    )
    detail = None
    if env.embedder is not None and snapshot.chunks:
        coverage = snapshot.embeddings / snapshot.chunks
        counts = replace(counts, vector_coverage=round(coverage, 4))
        if coverage < VECTOR_COVERAGE_HARD_FLOOR:
            raise IndexStale(
                f"vector coverage {coverage:.2f} is below {VECTOR_COVERAGE_HARD_FLOOR}: "
                "cosine phases would see a sample",
                hint="run `git memhtml index rebuild`, or set MEMHTML_EMBED=off for a lexical-only store",
            )
        if coverage < VECTOR_COVERAGE_WARN_FLOOR:
            detail = f"vector coverage {coverage:.2f} below {VECTOR_COVERAGE_WARN_FLOOR}"
    if report.errors:
        counts = replace(counts, index_errors=len(report.errors))
        shown = clip_join((f"{p}: {r}" for p, r in report.errors), 3, "; ")
        detail = (detail + "; " if detail else "") + f"skipped unparseable files: {shown}"
    return PhaseOutcome(counts, detail=detail)


register(PhaseSpec("preflight", run, PreflightCounts, commits=False, prerequisites=()))
