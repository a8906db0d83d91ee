"""LoCoMo retrieval recall through the real store, indexer and ``search`` (issue 4 item 7).

For each conversation: the converted ``apply`` stream (``bench/locomo.py``, cached under :data:`CACHE_DIR`) is
written into a fresh memory repository by the real ``apply_batch`` (one commit), indexed by the real incremental
indexer with the chosen embedder, and every question with evidence is run through
``git_memhtml.index.retrieval.search`` (default scope, :data:`SEARCH_LIMIT` hits). A hit's dialogue ids are its
``dia_id`` facets, read from the index. Nothing about the questions or their evidence is seen at import time.

Metrics (per question, then averaged over questions, overall and per :data:`CATEGORIES`):

- ``recall@k`` = |evidence ids covered by the ``dia_id`` facets of the top k hits| / |evidence ids| (the LoCoMo
  paper's definition: the share of a question's evidence found, not "any hit");
- ``MRR`` = 1 / rank of the first hit carrying any evidence id, 0 when none is in the top :data:`SEARCH_LIMIT`.

The DRAGON reference points are the LoCoMo paper's (Maharana et al., ACL 2024, table of retrieval recall),
pinned in :data:`DRAGON`.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

from git_memhtml.cli.common import init_memory as init_repo
from git_memhtml.embed.base import Embedder
from git_memhtml.embed.registry import get_embedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.index.indexer import update
from git_memhtml.index.memories import hash_holders
from git_memhtml.index.retrieval import ArmWeights, search
from git_memhtml.index.weights import default_weights
from git_memhtml.store.ops import parse_op_stream
from git_memhtml.store.writer import apply_batch

KS: tuple[int, ...] = (5, 10, 25, 50)
"""Cut-offs reported (issue 4 item 7)."""
SEARCH_LIMIT = max(KS)
"""Hits asked per question: the largest cut-off."""
IMPORT_NOW = "2026-01-15T12:00:00Z"
"""Write, index and search instant of every run (fixed, so runs are reproducible; sessions are in 2023)."""
CACHE_DIR = Path(tempfile.gettempdir()) / "memhtml-locomo"
"""Where converted streams are cached, keyed by conversation, units, context and a hash of the stream."""
DRAGON: dict[str, dict[int, float]] = {
    "turns": {5: 0.588, 10: 0.675, 25: 0.799, 50: 0.848},
    "observations": {5: 0.496, 10: 0.571, 25: 0.660, 50: 0.711},
}
"""LoCoMo paper, DRAGON retriever, recall@k over dialogue turns and over observations (issue 4 item 7)."""


@dataclass(frozen=True)
class QuestionResult:
    """One question's outcome: ``recall`` maps each k of :data:`KS` to the covered share of its evidence;
    ``first_rank`` is the 1-based rank of the first hit carrying any evidence id (``None`` beyond the limit)."""

    sample_id: str
    question: str
    category: int
    evidence: tuple[str, ...]
    recall: Mapping[int, float]
    first_rank: int | None

    @property
    def reciprocal_rank(self) -> float:
        """``1 / first_rank``, 0 when absent."""
        return 0.0 if self.first_rank is None else 1.0 / self.first_rank


@dataclass(frozen=True)
class Summary:
    """Means over ``count`` questions: ``recall`` per k and ``mrr``."""

    count: int
    recall: Mapping[int, float]
    mrr: float


@dataclass(frozen=True)
class RecallReport:
    """Everything one ``recall`` run measured and the configuration that produced it."""

    units: str
    embed: str
    context: int
    weights: ArmWeights
    mmr_lambda: float | None
    conversations: tuple[str, ...]
    memories: int
    questions: tuple[QuestionResult, ...]
    seconds: float

    def overall(self) -> Summary:
        """Means over every question."""
        return summarise(self.questions)

    def by_category(self) -> dict[int, Summary]:
        """Means per category number present, ascending."""
        cats = sorted({q.category for q in self.questions})
        return {c: summarise([q for q in self.questions if q.category == c]) for c in cats}


def summarise(results: Sequence[QuestionResult]) -> Summary:
    """Mean recall@k and MRR of ``results`` (zeros for none)."""
    n = len(results)
    if n == 0:
        return Summary(0, dict.fromkeys(KS, 0.0), 0.0)
    recall = {k: sum(r.recall[k] for r in results) / n for k in KS}
    return Summary(n, recall, sum(r.reciprocal_rank for r in results) / n)


def score_question(
    evidence: Sequence[str], ranked_ids: Sequence[frozenset[str]]
) -> tuple[dict[int, float], int | None]:
    """Recall at every k of :data:`KS` and the first relevant rank, from the hits' dialogue ids in rank order.

    ``evidence`` must be non-empty (questions without evidence are skipped upstream).
    """
    wanted = set(evidence)
    covered: set[str] = set()
    first: int | None = None
    recall: dict[int, float] = {}
    cuts = sorted(KS)
    for rank, ids in enumerate(ranked_ids, start=1):
        hit = wanted & ids
        if hit and first is None:
            first = rank
        covered |= hit
        for k in cuts:
            if rank == k:
                recall[k] = len(covered) / len(wanted)
    for k in cuts:
        recall.setdefault(k, len(covered) / len(wanted))
    return recall, first


def cached_stream(locomo: ModuleType, data: Sequence[Mapping[str, Any]], sample_id: str, units: str,
                  context: int) -> str:
    """The apply stream of one conversation, from :data:`CACHE_DIR` when an identical one was converted before."""
    text: str = locomo.dumps_jsonl(locomo.convert(data, sample_id, units, context=context))
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    path = CACHE_DIR / f"{sample_id}-{units}-c{context}-{digest}.jsonl"
    if not path.exists():
        path.write_text(text, encoding="utf-8")
    return path.read_text(encoding="utf-8")


def import_conversation(root: Path, stream: str, embedder: Embedder | None) -> tuple[GitRepo, IndexDB, int]:
    """Initialise a memory repository at ``root``, apply ``stream`` as one commit, index it; returns the repo,
    the open index and the number of memories written."""
    init_repo(root)
    repo = GitRepo.discover(root)
    db = IndexDB.for_repo(repo)
    update(repo, db, embedder, now=IMPORT_NOW)

    result = apply_batch(repo, parse_op_stream(stream, source="locomo"), now=IMPORT_NOW,
                         dedupe_view=partial(hash_holders, db))  # what `git memhtml apply` asks the index
    if not result.ok:
        bad = next(r for r in result.results if r.code)
        raise RuntimeError(f"apply refused op {bad.index}: {bad.code} {bad.error}")
    report = update(repo, db, embedder, now=IMPORT_NOW)
    if report.errors or report.embed_error:
        raise RuntimeError(f"indexing failed: {report.errors[:3]} {report.embed_error}")
    return repo, db, len(result.written)


def dia_ids_by_path(db: IndexDB) -> dict[str, frozenset[str]]:
    """``path → {dia_id facet values}`` of every indexed memory."""
    out: dict[str, set[str]] = {}
    for path, value in db.query("SELECT path, value FROM file_facets WHERE name = 'dia_id'", {}):
        out.setdefault(str(path), set()).add(str(value))
    return {p: frozenset(v) for p, v in out.items()}


def run_recall(locomo: ModuleType, data: Sequence[Mapping[str, Any]], sample_ids: Sequence[str], *, units: str,
               embed: str, context: int, weights: ArmWeights | None, workdir: Path,
               mmr_lambda: float | None = None) -> RecallReport:
    """Import each conversation into its own fresh repository under ``workdir`` and score every question.

    ``weights`` ``None`` means the embedder's defaults (:func:`git_memhtml.index.weights.default_weights`).
    ``mmr_lambda`` ``None`` measures the fused ranking itself (what ``search`` returns by default); a value
    applies the MMR pass the CLI applies (``memhtml.mmrlambda``, docs/retrieval.md §4 0.5).
    """
    started = time.perf_counter()
    embedder = get_embedder(embed)
    chosen = weights or default_weights(embed)
    results: list[QuestionResult] = []
    memories = 0
    for sample_id in sample_ids:
        stream = cached_stream(locomo, data, sample_id, units, context)
        _repo, db, written = import_conversation(workdir / sample_id, stream, embedder)
        memories += written
        try:
            ids = dia_ids_by_path(db)
            for question, evidence, category in locomo.load_questions(data, sample_id):
                found = search(db, question, limit=SEARCH_LIMIT, embedder=embedder, weights=chosen, now=IMPORT_NOW,
                               mmr_lambda=mmr_lambda)
                ranked = [ids.get(hit.path, frozenset()) for hit in found.hits]
                recall, first = score_question(evidence, ranked)
                results.append(QuestionResult(sample_id, question, category, tuple(evidence), recall, first))
        finally:
            db.close()
    return RecallReport(units, embed, context, chosen, mmr_lambda, tuple(sample_ids), memories, tuple(results),
                        time.perf_counter() - started)


def render_report(report: RecallReport, categories: Mapping[int, str]) -> str:
    """Plain-text table: overall and per category, DRAGON beside ours, then the configuration line."""
    dragon = DRAGON[report.units]
    w = report.weights
    head = f"{'slice':<16}{'n':>6}" + "".join(f"{'R@' + str(k):>8}" for k in KS) + f"{'MRR':>8}"
    lines = [
        f"LoCoMo recall, units={report.units}, embed={report.embed}, context={report.context}, "
        f"weights fts={w.fts} vector={w.vector} recency={w.recency} salience={w.salience}, "
        f"mmr={'off' if report.mmr_lambda is None else report.mmr_lambda}",
        f"{len(report.conversations)} conversation(s), {report.memories} memories, "
        f"{len(report.questions)} questions, {report.seconds:.1f} s",
        head,
        "-" * len(head),
    ]

    def row(label: str, s: Summary) -> str:
        return f"{label:<16}{s.count:>6}" + "".join(f"{s.recall[k]:>8.3f}" for k in KS) + f"{s.mrr:>8.3f}"

    lines.append(row("overall", report.overall()))
    for cat, summary in report.by_category().items():
        lines.append(row(f"{cat} {categories.get(cat, '?')}", summary))
    lines.append(f"{'DRAGON (paper)':<16}{'':>6}" + "".join(f"{dragon[k]:>8.3f}" for k in KS) + f"{'':>8}")
    return "\n".join(lines) + "\n"


def report_json(report: RecallReport, categories: Mapping[int, str]) -> str:
    """The report as one JSON object (overall, per category, DRAGON, configuration)."""

    def shape(s: Summary) -> dict[str, Any]:
        return {"n": s.count, **{f"recall@{k}": round(s.recall[k], 4) for k in KS}, "mrr": round(s.mrr, 4)}

    w = report.weights
    body = {
        "units": report.units,
        "embed": report.embed,
        "context": report.context,
        "mmrLambda": report.mmr_lambda,
        "weights": {"fts": w.fts, "vector": w.vector, "recency": w.recency, "salience": w.salience},
        "conversations": list(report.conversations),
        "memories": report.memories,
        "overall": shape(report.overall()),
        "byCategory": {f"{c} {categories.get(c, '?')}": shape(s) for c, s in report.by_category().items()},
        "dragon": {f"recall@{k}": v for k, v in DRAGON[report.units].items()},
        "seconds": round(report.seconds, 1),
    }
    return json.dumps(body, indent=2) + "\n"
