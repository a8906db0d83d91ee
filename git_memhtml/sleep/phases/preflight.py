"""Phase 1, preflight: a clean tree, a fresh index in the run's vector space, and a corpus snapshot.

Source: docs/phases.md §1.1 and docs/phases.md §0.2 (v0.6: a hard prerequisite of every later
phase; vector coverage floor 0.5 hard, 0.95 warning, only when the vector plane is in use). Never commits.
"""

from __future__ import annotations

from git_memhtml.errors import DirtyTree, IndexStale
from git_memhtml.index.indexer import update
from git_memhtml.sleep.env import PhaseEnv, PhaseOutcome
from git_memhtml.cut import clip_join

VECTOR_COVERAGE_HARD_FLOOR = 0.5
VECTOR_COVERAGE_WARN_FLOOR = 0.95
"""docs/phases.md §1.1: under 0.5 refuse; between 0.5 and 0.95 warn and continue."""


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
    db = env.db
    (active,) = db.query_one("SELECT count(*) FROM files WHERE archived = 0") or (0,)
    (archived,) = db.query_one("SELECT count(*) FROM files WHERE archived = 1") or (0,)
    (chunks,) = db.query_one("SELECT count(*) FROM chunks") or (0,)
    space = env.embedder.space if env.embedder is not None else None
    (embedded,) = db.query_one("SELECT count(*) FROM embeddings WHERE model = ?", (space,)) or (0,)
    (edges,) = db.query_one("SELECT count(*) FROM edges") or (0,)
    (derived,) = db.query_one("SELECT count(*) FROM edges WHERE derived = 1") or (0,)
    counts: dict[str, object] = {
        "active": active,
        "archived": archived,
        "chunks": chunks,
        "embeddings": embedded,
        "edges": edges,
        "derivedEdges": derived,
        "indexedAdded": report.added,
        "indexedModified": report.modified,
        "indexedRemoved": report.removed,
        "indexedRenamed": report.renamed,
        "embeddingsWritten": report.embeddings_written,
        "indexSkipped": report.skipped,
    }
    detail = None
    if env.embedder is not None and chunks:
        coverage = embedded / chunks
        counts["vectorCoverage"] = round(coverage, 4)
        if coverage < VECTOR_COVERAGE_HARD_FLOOR:
            raise IndexStale(
                f"vector coverage {coverage:.2f} is below {VECTOR_COVERAGE_HARD_FLOOR}: cosine phases would see a sample",
                hint="run `git memhtml index rebuild`, or set MEMHTML_EMBED=off for a lexical-only store",
            )
        if coverage < VECTOR_COVERAGE_WARN_FLOOR:
            detail = f"vector coverage {coverage:.2f} below {VECTOR_COVERAGE_WARN_FLOOR}"
    if report.errors:
        counts["indexErrors"] = len(report.errors)
        shown = clip_join((f"{p}: {r}" for p, r in report.errors), 3, "; ")
        detail = (detail + "; " if detail else "") + f"skipped unparseable files: {shown}"
    return PhaseOutcome(counts, detail=detail)
