"""Curation on real memory: one no-model night on each LoCoMo conversation, then ``sleep merge`` (issue 27 item 1).

For each conversation of ``../shared/data/locomo/locomo-dev.json`` and each import shape:

1. **import** the conversation's observations into a fresh memory repository (one ``apply`` commit, the writer's
   content-hash dedupe against the index, as ``git memhtml apply`` does) and index it with ``--embed``
   (``wordllama``, the product default, unless told otherwise);
2. **before**: run every LoCoMo question (``bench/locomo.py`` ``load_questions``) through the product's
   ``search`` as an agent gets it (the embedder's default weights, ``memhtml.mmrlambda``'s default, top
   :data:`TOP_K`);
3. **night**: ``sleep run`` with no model bound, at :data:`RUN_DATE` (two weeks after the import, so
   confidence-decay has a due step);
4. **merge**: ``sleep merge`` through both gates (the discrimination gate and the run gate, each with the product's
   settings). When it is refused, the refusal, its reason and the lost probes are recorded and the run is then
   landed with ``--skip-gate`` **for measurement only**, so "after" always describes the night's tip;
5. **after**: the same questions again, and what the night did, read from the tree before and after.

Two import shapes (bench/README.md "curation.py" gives the reasons):

- ``agent``: what an agent writes. Title = the observation itself, the observation as the ``<mark>`` claim, the
  session date as the event time (``<time datetime>`` in the claim's paragraph, its text the day:
  ``8 May 2023``), one ``person:<speaker>`` entity, type ``episodic``; no tag, no workspace, no boilerplate. The
  dialogue ids ride in the ``turn_uuid`` provenance field (``memhtml-turn`` meta,
  ``"<sample_id>:<id>[,<id>…]"``), which is head metadata: neither the FTS text nor the embedded chunks read it
  (docs/index.md §3.5).
- ``converter``: ``bench/locomo.py``'s observation shape (title ``"<speaker>, session <n>, observation <k>"``,
  a second ``<p>`` naming speaker and session, a ``dia_id`` ``<dl>`` facet, tags ``locomo`` and the sample id,
  workspace = the sample id).

Figures per conversation and shape: whether the merge lands (the refusal, its reason and the lost probes); evidence
recall@5/@10 before and after the night, where a hit counts for every dialogue id of the memories it stands for
(its own, those of every memory it supersedes, transitively, and those of the writes the writer deduplicated into
it); the questions whose recall@10 fell or rose; files changed; folds (and how many crossed subjects), evictions,
arcs, links, tasks, person files; generated files (any live memory the night created: person files, arcs,
canonicals, distilled memories) in the top 10s, counted per question, with the worst examples.

Usage::

    python bench/curation.py                                            # all six, both shapes, wordllama
    python bench/curation.py --conversation conv-26 --shape agent --out conv26-agent.json
    python bench/curation.py --conversation conv-30 --sessions 3 --embed fake     # a smoke slice

Output: a table on stdout; ``--out FILE`` writes every figure as JSON. Exit 0 when every run finished (whether
or not its merge landed: a refusal is a figure), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

from git_memhtml.config import Settings
from git_memhtml.embed.base import Embedder
from git_memhtml.errors import MemhtmlError, UsageError
from git_memhtml.eval.discriminate import DiscriminationReport, refuse_unless_passed, run_discrimination
from git_memhtml.index.db import IndexDB
from git_memhtml.index.retrieval import search
from git_memhtml.index.weights import default_weights
from git_memhtml.output import emit, log, table
from git_memhtml.sleep.engine.run import RunReport, run_sleep
from git_memhtml.sleep.landing.merge import MergeReport, merge_run
from git_memhtml.sleep.probes.gate import ProbeSettings, probe_run
from git_memhtml.sleep.probes.verdict import Verdict
from git_memhtml.store.writer import BatchResult
from git_memhtml.tree.layout import PEOPLE_DIR

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from timing import RunFigures, conversation_ids, failure, imported_memory, load_script, scratch, write_json  # noqa: E402

IMPORT_NOW = "2026-11-30T09:00:00Z"
"""Every memory's ``created``/``updated`` (bench/import_sleep.py's instant, so the two benches compare)."""
RUN_DATE = "2026-12-14"
"""The night's date: the import date + 14 days, so confidence-decay has one due step (docs/phases.md §1.7)."""
SEARCH_NOW = f"{RUN_DATE}T09:00:00Z"
"""The instant of every search, before and after the night: only the night differs between the two."""
KS: tuple[int, ...] = (5, 10)
"""Recall cut-offs reported (issue 27 item 1)."""
TOP_K = max(KS)
"""Hits asked per question; generated files are counted in these top 10s."""
SHAPES: tuple[str, ...] = ("agent", "converter")
EMBED_CHOICES: tuple[str, ...] = ("wordllama", "fake")
EXAMPLES = 5
"""Worst examples kept per run (generated files in top 10s, cross-subject folds, lost probes shown)."""
_SESSION_KEY = re.compile(r"^session_(\d+)(?:_date_time|_observation|_summary)?$")


# --- the two import shapes -----------------------------------------------------------------------------------


def limit_sessions(locomo: ModuleType, item: Mapping[str, Any], count: int | None) -> dict[str, Any]:
    """``item`` with only its first ``count`` sessions holding turns (by number; all when ``None``): the dialogue,
    the dates, the observations and the summaries of later sessions are dropped, so a question keeps only the
    evidence in the slice and is skipped when none is left (``load_questions``)."""
    if count is None:
        return dict(item)
    keep = {number for number, _, _ in locomo.sessions(item["conversation"])[:count]}

    def kept(mapping: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in mapping.items()
                if (m := _SESSION_KEY.match(k)) is None or int(m.group(1)) in keep}

    out = dict(item)
    out["conversation"] = kept(item["conversation"])
    out["observation"] = kept(item.get("observation", {}))
    if isinstance(item.get("session_summary"), Mapping):
        out["session_summary"] = kept(item["session_summary"])
    return out


def shape_ops(locomo: ModuleType, item: Mapping[str, Any], shape: str) -> list[dict[str, Any]]:
    """The ops of ``item`` in ``shape`` (``agent`` or ``converter``).

    Raises:
        UsageError: an unknown shape.
    """
    if shape == "agent":
        return list(locomo.agent_observation_ops(item))
    if shape == "converter":
        return list(locomo.observation_ops(item))
    raise UsageError(f"unknown shape {shape!r}", hint="use --shape agent, converter or both")


# --- what the tree says ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One indexed file as the figures need it: memory type, title, author, entity values (sorted)."""

    kind: str
    title: str
    author: str
    entities: tuple[str, ...]


@dataclass(frozen=True)
class TreeState:
    """What one index (which describes ``main``) says about the memory, for the figures.

    ``live``: live path → :class:`Row`; ``archived``: archived path → :class:`Row` (an archive copy keeps its
    title and entities); ``keeper``: archived path → the live or archived path whose ``supersedes`` link names it;
    ``edges``: authored ``(src, rel, dst)``; ``ids``: path → its own dialogue ids (facets ``dia_id`` and the
    ``turn_uuid`` reference), archived paths included.
    """

    live: dict[str, Row]
    archived: dict[str, Row]
    keeper: dict[str, str]
    edges: frozenset[tuple[str, str, str]]
    ids: dict[str, frozenset[str]]

    def row(self, path: str) -> Row | None:
        """The row of ``path``, live or archived."""
        return self.live.get(path) or self.archived.get(path)


def tree_state(locomo: ModuleType, db: IndexDB, known: Iterable[str]) -> TreeState:
    """Read :class:`TreeState` from ``db`` (every row, archived ones too); ``known`` = the conversation's turn ids,
    which filter what a ``turn_uuid`` names."""
    allowed = list(known)
    entities: dict[str, list[str]] = {}
    for path, etype, name in db.query("SELECT path, entity_type, entity_name FROM file_entities", {}):
        entities.setdefault(str(path), []).append(f"{etype}:{name}")
    live: dict[str, Row] = {}
    archived: dict[str, Row] = {}
    ids: dict[str, set[str]] = {}
    for path, kind, title, author, is_archived, turn in db.query(
            "SELECT path, memory_type, title, author, archived, turn_uuid FROM files", {}):
        key = str(path)
        row = Row(str(kind), str(title), str(author), tuple(sorted(entities.get(key, []))))
        (archived if is_archived else live)[key] = row
        if turn and ":" in str(turn):
            ids.setdefault(key, set()).update(locomo.normalise_dia_ids(str(turn).split(":", 1)[1], allowed))
    for path, value in db.query("SELECT path, value FROM file_facets WHERE name = 'dia_id'", {}):
        ids.setdefault(str(path), set()).add(str(value))
    edges = frozenset((str(s), str(r), str(d)) for s, r, d in db.query(
        "SELECT src_path, rel, dst_path FROM edges WHERE derived = 0", {}))
    keeper = {dst: src for src, rel, dst in edges if rel == "supersedes" and dst in archived}
    return TreeState(live, archived, keeper, edges, {p: frozenset(v) for p, v in ids.items()})


def stands_for(state: TreeState, extra: Mapping[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    """Live path → every dialogue id it stands for: its own, ``extra``'s (writes deduplicated into it), and, through
    ``supersedes`` links followed transitively, those of every memory it superseded (a fold's dropped member, a
    compress canonical's members, an arc's earlier version)."""
    supersedes: dict[str, list[str]] = {}
    for src, rel, dst in state.edges:
        if rel == "supersedes":
            supersedes.setdefault(src, []).append(dst)
    out: dict[str, frozenset[str]] = {}
    for path in state.live:
        seen = {path}
        todo = [path]
        found: set[str] = set()
        while todo:
            here = todo.pop()
            found |= state.ids.get(here, frozenset()) | extra.get(here, frozenset())
            for older in supersedes.get(here, []):
                if older not in seen:
                    seen.add(older)
                    todo.append(older)
        out[path] = frozenset(found)
    return out


def deduped_ids(locomo: ModuleType, ops: Sequence[Mapping[str, Any]], result: BatchResult,
                known: Iterable[str]) -> dict[str, frozenset[str]]:
    """Holder path → dialogue ids of the ops the writer deduplicated into it (same article bytes as a memory it
    already held): the holder stands for them."""
    allowed = list(known)
    out: dict[str, set[str]] = {}
    for r in result.results:
        if r.deduped and r.existing_path:
            turn = str(ops[r.index].get("turn_uuid") or "")
            facets = re.findall(r"<dd>(D[^<]*)</dd>", str(ops[r.index].get("article_html") or ""))
            ids = locomo.normalise_dia_ids([turn.split(":", 1)[-1], *facets], allowed)
            out.setdefault(r.existing_path, set()).update(ids)
    return {p: frozenset(v) for p, v in out.items()}


# --- recall --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ranked:
    """One question's top :data:`TOP_K` paths (in rank order) and its evidence."""

    question: str
    category: int
    evidence: tuple[str, ...]
    paths: tuple[str, ...]


def rank_questions(db: IndexDB, questions: Sequence[tuple[str, list[str], int]], embedder: Embedder | None,
                   embed: str) -> list[Ranked]:
    """Every question through the product's ``search`` as the CLI and MCP run it: the embedder's default weights,
    ``memhtml.mmrlambda``'s default MMR pass, default scope (no archived memory, no task), top :data:`TOP_K`."""
    weights, mmr = default_weights(embed), Settings().mmr_lambda
    out = []
    for question, evidence, category in questions:
        found = search(db, question, limit=TOP_K, embedder=embedder, weights=weights, now=SEARCH_NOW,
                       mmr_lambda=None if mmr >= 1.0 else mmr)
        out.append(Ranked(question, category, tuple(evidence), tuple(h.path for h in found.hits)))
    return out


def recall_at(ranked: Ranked, ids: Mapping[str, frozenset[str]], k: int) -> float:
    """The share of ``ranked``'s evidence ids that the memories in its top ``k`` stand for."""
    covered: set[str] = set()
    for path in ranked.paths[:k]:
        covered |= ids.get(path, frozenset())
    return len(covered & set(ranked.evidence)) / len(ranked.evidence)


# --- the night's figures -------------------------------------------------------------------------------------


def generated_kind(path: str, kind: str, author: str) -> str:
    """What a file the night created is: ``person`` (under ``resources/people/``), ``arc``, ``task`` or the
    ``memory`` another phase wrote (a compress canonical, a distilled memory), with its author."""
    if path.startswith(PEOPLE_DIR + "/"):
        return "person"
    if kind in ("arc", "task"):
        return kind
    return f"memory ({author})"


def night_figures(before: TreeState, after: TreeState, changed: Sequence[str]) -> dict[str, Any]:
    """Files changed, folds (with the cross-subject ones), evictions, arcs, links by rel, tasks and person files:
    what ``after`` holds that ``before`` did not."""
    created = {p: r for p, r in after.live.items() if p not in before.live}
    folds, evicted = [], []
    for path in sorted(p for p in after.archived if p not in before.archived):
        keeper = after.keeper.get(path)
        if keeper is None:
            evicted.append(path)
            continue
        dropped, kept = after.archived[path], before.row(keeper) or after.row(keeper)
        kept_entities = kept.entities if kept else ()
        folds.append({"dropped": path, "droppedTitle": dropped.title, "droppedEntities": list(dropped.entities),
                      "keeper": keeper, "keeperTitle": kept.title if kept else "",
                      "keeperEntities": list(kept_entities),
                      "crossSubject": _subjects(dropped.entities) != _subjects(kept_entities)})
    links: dict[str, int] = {}
    for src, rel, _dst in after.edges - before.edges:
        if rel != "supersedes" and src in after.live:
            links[rel] = links.get(rel, 0) + 1
    memories = [p for p in changed if p.endswith(".html") and p.split("/", 1)[0] in
                ("projects", "areas", "resources", "archive")]
    return {
        "filesChanged": len(changed), "memoriesChanged": len(memories),
        "folds": len(folds), "crossSubjectFolds": sum(1 for f in folds if f["crossSubject"]),
        "evicted": len(evicted),
        "arcs": sum(1 for r in created.values() if r.kind == "arc"),
        "tasks": sum(1 for r in created.values() if r.kind == "task"),
        "personFiles": sum(1 for p in created if p.startswith(PEOPLE_DIR + "/")),
        "created": len(created),
        "links": sum(links.values()), "linksByRel": dict(sorted(links.items())),
        "foldList": folds, "evictedList": evicted,
        "createdList": sorted(f"{p} [{generated_kind(p, r.kind, r.author)}]" for p, r in created.items()),
    }


def _subjects(entities: Iterable[str]) -> frozenset[str]:
    """The subject entities of a memory (people, services, projects: every entity but ``lang:``/``concept:``), by
    lower-cased value."""
    return frozenset(e.lower() for e in entities if not e.startswith(("lang:", "concept:")))


def generated_in_top(after: Sequence[Ranked], created: Mapping[str, Row]) -> dict[str, Any]:
    """How generated files (``created``: live memories the night made) sit in the top 10s: questions with one in
    the top 10, in the top 3 and first, every slot they take, per kind, and the :data:`EXAMPLES` worst
    (best-ranked) occurrences."""
    slots: list[tuple[int, str, str, str, str]] = []
    questions10 = questions3 = questions1 = 0
    for ranked in after:
        ranks = [(i + 1, p) for i, p in enumerate(ranked.paths) if p in created]
        questions10 += bool(ranks)
        questions3 += any(rank <= 3 for rank, _ in ranks)
        questions1 += any(rank == 1 for rank, _ in ranks)
        for rank, path in ranks:
            row = created[path]
            slots.append((rank, ranked.question, path, row.title, generated_kind(path, row.kind, row.author)))
    by_kind: dict[str, int] = {}
    for *_, kind in slots:
        by_kind[kind] = by_kind.get(kind, 0) + 1
    worst = sorted(slots, key=lambda s: (s[0], s[2], s[1]))[:EXAMPLES]
    return {"questionsTop10": questions10, "questionsTop3": questions3, "questionsTop1": questions1,
            "slots": len(slots),
            "byKind": dict(sorted(by_kind.items())),
            "worst": [{"rank": r, "question": q, "path": p, "title": t, "kind": k} for r, q, p, t, k in worst]}


# --- one run -------------------------------------------------------------------------------------------------


class DiscriminationOnce:
    """The discrimination gate as ``merge_run`` calls it, evaluated once per process: its verdict is a function of
    the code and the default weights (a synthetic corpus of its own, docs/gate.md §8), not of the memory merged,
    so twelve merges share one evaluation. Raises :class:`DiscriminationFailed` on every call when it refused."""

    def __init__(self) -> None:
        self.report: DiscriminationReport | None = None
        self.seconds = 0.0

    def __call__(self) -> DiscriminationReport:
        if self.report is None:
            started = time.perf_counter()
            with tempfile.TemporaryDirectory(prefix="memhtml-gate-") as folder:
                self.report = run_discrimination(workdir=Path(folder))
            self.seconds = time.perf_counter() - started
        return refuse_unless_passed(self.report)


@dataclass
class Outcome:
    """The figures of one conversation in one shape (:meth:`as_json` is its ``--out`` shape)."""

    sample_id: str
    shape: str
    sessions: int | None
    memories: int
    deduplicated: int
    questions: int
    run_id: str
    failed_phases: list[str]
    merge: dict[str, Any]
    recall_before: dict[int, float]
    recall_after: dict[int, float]
    worse: int
    better: int
    night: dict[str, Any]
    generated: dict[str, Any]
    phases: list[dict[str, Any]]
    seconds: dict[str, float]
    per_question: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """camelCase JSON of every figure."""
        return {
            "conversation": self.sample_id, "shape": self.shape, "sessions": self.sessions,
            "memories": self.memories, "deduplicatedAtImport": self.deduplicated, "questions": self.questions,
            "runId": self.run_id, "failedPhases": self.failed_phases, "merge": self.merge,
            "recallBefore": {f"@{k}": round(v, 4) for k, v in self.recall_before.items()},
            "recallAfter": {f"@{k}": round(v, 4) for k, v in self.recall_after.items()},
            "questionsWorse@10": self.worse, "questionsBetter@10": self.better,
            "night": self.night, "generatedInTop10": self.generated, "phases": self.phases,
            "seconds": {k: round(v, 2) for k, v in self.seconds.items()}, "perQuestion": self.per_question,
        }


def merge_figures(report: MergeReport, forced: MergeReport | None) -> dict[str, Any]:
    """The merge as the figures show it: landed or not, the refusal and reason, the run gate's lost probes."""
    verdict: Verdict | None = report.probes
    lost = verdict.as_json()["lost"] if verdict is not None else []
    return {"landed": report.merged, "refusal": report.refusal, "reason": report.reason,
            "lostCount": verdict.lost_count if verdict is not None else None,
            "probes": verdict.sample_size if verdict is not None else None, "lost": lost,
            "measuredAfterSkipGate": forced is not None and forced.merged}


def measure(locomo: ModuleType, item: Mapping[str, Any], shape: str, *, embed: str, root: Path,
            gate: Callable[[], object], sessions: int | None) -> Outcome:
    """Import ``item`` in ``shape`` at ``root``, search, run one no-model night, merge through both gates, search
    again; return the figures.

    Raises:
        UsageError: the import refused an op, or an unknown shape or embedder.
    """
    sample_id = str(item["sample_id"])
    ops = shape_ops(locomo, item, shape)
    questions = locomo.load_questions([item], sample_id)
    known = locomo.turn_ids(item)
    clock = partial(str, SEARCH_NOW)
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    with imported_memory(root, locomo.dumps_jsonl(ops), sample_id=sample_id, embed=embed, now=IMPORT_NOW) as mem:
        repo, db, embedder = mem.repo, mem.db, mem.embedder
        seconds["import"] = time.perf_counter() - started
        extra = deduped_ids(locomo, ops, mem.result, known)
        state_before = tree_state(locomo, db, known)
        ids_before = stands_for(state_before, extra)
        mark = time.perf_counter()
        before = rank_questions(db, questions, embedder, embed)
        seconds["searchBefore"] = time.perf_counter() - mark
        mark = time.perf_counter()
        run: RunReport = run_sleep(repo, db, date=RUN_DATE, embedder=embedder, clock=clock)
        seconds["night"] = time.perf_counter() - mark
        mark = time.perf_counter()
        settings = ProbeSettings(max_lost=Settings().gate_max_lost)

        def run_gate(name: str, base: str, tip: str) -> Verdict:
            return probe_run(repo, db, name, embedder=embedder, settings=settings, base_sha=base,
                             tip_sha=tip).verdict

        report = merge_run(repo, db, run.run_id, gate=gate, embedder=embedder, clock=clock, run_gate=run_gate)
        forced = None
        if not report.merged:
            forced = merge_run(repo, db, run.run_id, gate=None, embedder=embedder, clock=clock,
                               allow_failed=True)
        seconds["merge"] = time.perf_counter() - mark
        state_after = tree_state(locomo, db, known)
        ids_after = stands_for(state_after, extra)
        mark = time.perf_counter()
        after = rank_questions(db, questions, embedder, embed)
        seconds["searchAfter"] = time.perf_counter() - mark
        changed = repo.changed_paths(run.base_sha, run.head_sha)
    night = night_figures(state_before, state_after, changed)
    created = {p: v for p, v in state_after.live.items() if p not in state_before.live}
    recall_before = {k: _mean(recall_at(r, ids_before, k) for r in before) for k in KS}
    recall_after = {k: _mean(recall_at(r, ids_after, k) for r in after) for k in KS}
    per_question = []
    worse = better = 0
    for b, a in zip(before, after):
        rb, ra = recall_at(b, ids_before, TOP_K), recall_at(a, ids_after, TOP_K)
        worse += ra < rb
        better += ra > rb
        per_question.append({"question": b.question, "category": b.category, "evidence": list(b.evidence),
                             "recall@10Before": round(rb, 4), "recall@10After": round(ra, 4),
                             "top10Before": list(b.paths), "top10After": list(a.paths)})
    seconds["total"] = time.perf_counter() - started
    return Outcome(
        sample_id=sample_id, shape=shape, sessions=sessions, memories=len(mem.result.written),
        deduplicated=sum(1 for r in mem.result.results if r.deduped), questions=len(questions),
        run_id=run.run_id, failed_phases=run.failed_phases, merge=merge_figures(report, forced),
        recall_before=recall_before, recall_after=recall_after, worse=worse, better=better, night=night,
        generated=generated_in_top(after, created),
        phases=[{"phase": p.phase, "status": p.status, "counts": dict(p.counts), "detail": p.detail}
                for p in run.phases],
        seconds=seconds, per_question=per_question,
    )


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else 0.0


# --- output --------------------------------------------------------------------------------------------------

HEADERS = ("conversation", "shape", "mem", "q", "merge", "lost", "R@5 before→after", "R@10 before→after",
           "worse/better", "changed", "folds (x-subj)", "evicted", "arcs", "links", "tasks", "people",
           "gen top10/3/1")


def _arrow(before: float, after: float) -> str:
    return f"{before:.3f}→{after:.3f}"


def summary_row(label: str, shape: str, outcomes: Sequence[Outcome]) -> list[object]:
    """One table row over ``outcomes`` (recall averaged over their questions, counts summed)."""
    n = sum(o.questions for o in outcomes)

    def pooled(attr: str, k: int) -> float:
        return sum(getattr(o, attr)[k] * o.questions for o in outcomes) / n if n else 0.0

    landed = sum(1 for o in outcomes if o.merge["landed"])
    merge = ("lands" if landed == len(outcomes) else f"{landed}/{len(outcomes)} land") if len(outcomes) > 1 else (
        "lands" if landed else f"refused ({outcomes[0].merge['refusal']})")
    lost = sum(o.merge["lostCount"] or 0 for o in outcomes)

    def total(key: str) -> int:
        return sum(int(o.night[key]) for o in outcomes)

    return [label, shape, sum(o.memories for o in outcomes), n, merge, lost,
            _arrow(pooled("recall_before", 5), pooled("recall_after", 5)),
            _arrow(pooled("recall_before", 10), pooled("recall_after", 10)),
            f"{sum(o.worse for o in outcomes)}/{sum(o.better for o in outcomes)}", total("filesChanged"),
            f"{total('folds')} ({total('crossSubjectFolds')})", total("evicted"), total("arcs"), total("links"),
            total("tasks"), total("personFiles"),
            "/".join(str(sum(o.generated[f"questionsTop{k}"] for o in outcomes)) for k in (10, 3, 1))]


def render(outcomes: Sequence[Outcome], config: Mapping[str, Any]) -> str:
    """The table (one row per conversation and shape, then one per shape over all), then the refusals, the worst
    generated hits and the cross-subject folds."""
    rows = [summary_row(o.sample_id, o.shape, [o]) for o in outcomes]
    shapes = [s for s in SHAPES if any(o.shape == s for o in outcomes)]
    if len({o.sample_id for o in outcomes}) > 1:
        rows += [summary_row("all", s, [o for o in outcomes if o.shape == s]) for s in shapes]
    lines = [f"curation on LoCoMo: embed {config['embed']}, sessions {config['sessions'] or 'all'}, import at "
             f"{IMPORT_NOW}, night {RUN_DATE} (no model), search at {SEARCH_NOW}, top {TOP_K}", "",
             table(list(HEADERS), rows), ""]
    for o in outcomes:
        label = f"{o.sample_id} {o.shape}"
        if not o.merge["landed"]:
            lines.append(f"{label}: merge refused ({o.merge['refusal']}): {o.merge['reason']}")
            for item in o.merge["lost"][:EXAMPLES]:
                lines.append(f"    lost {item['path']} ({item['family']} {item['probe']}): {item['why']} "
                             f"[{', '.join(item['phases'])}]")
        for fold in [f for f in o.night["foldList"] if f["crossSubject"]][:EXAMPLES]:
            lines.append(f"{label}: fold across subjects: {fold['droppedTitle']!r} {fold['droppedEntities']} → "
                         f"{fold['keeperTitle']!r} {fold['keeperEntities']}")
        for worst in o.generated["worst"][:3]:
            lines.append(f"{label}: generated #{worst['rank']} {worst['path']} ({worst['kind']}) for "
                         f"{worst['question']!r}")
        if o.failed_phases:
            lines.append(f"{label}: failed phases: {', '.join(o.failed_phases)}")
    return "\n".join(lines).rstrip()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="curation.py", description="one no-model night on real memory, then merge")
    p.add_argument("--conversation", default="all", help="sample id (e.g. conv-26) or all (default)")
    p.add_argument("--shape", choices=(*SHAPES, "both"), default="both", help="import shape (default both)")
    p.add_argument("--sessions", type=int, default=None, help="only the first N sessions of each conversation")
    p.add_argument("--embed", choices=EMBED_CHOICES, default="wordllama", help="embedder (default wordllama)")
    p.add_argument("--data", type=Path, default=None, help="LoCoMo JSON (default ../shared/data/locomo/…)")
    p.add_argument("--workdir", type=Path, default=None, help="keep the repositories under DIR (new or empty)")
    p.add_argument("--out", type=Path, default=None, help="also write every figure as JSON here")
    p.add_argument("--per-question", action="store_true", help="keep each question's top 10s in --out")
    return p


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Measure what ``args`` selects and return the JSON result (``config``, ``runs``, ``gate``).

    Raises:
        UsageError: unknown conversation, bad ``--sessions``, data absent, an import refused.
    """
    if args.sessions is not None and args.sessions < 1:
        raise UsageError(f"--sessions must be 1 or more, got {args.sessions}", hint="e.g. --sessions 3")
    locomo = load_script("locomo")
    data = locomo.load_data(args.data or locomo.DEFAULT_DATA)
    ids = conversation_ids(locomo, data, args.conversation)
    shapes = list(SHAPES) if args.shape == "both" else [args.shape]
    figures = RunFigures()
    gate = DiscriminationOnce()
    outcomes: list[Outcome] = []
    with scratch(args.workdir, "memhtml-curation-") as folder:
        for sample_id in ids:
            item = limit_sessions(locomo, locomo.find_conversation(data, sample_id), args.sessions)
            for shape in shapes:
                log(f"{sample_id} {shape}: import, search, night, merge, search")
                outcome = measure(locomo, item, shape, embed=args.embed, root=folder / f"{sample_id}-{shape}",
                                  gate=gate, sessions=args.sessions)
                if not args.per_question:
                    outcome.per_question = []
                outcomes.append(outcome)
    config = {"conversation": args.conversation, "shapes": shapes, "sessions": args.sessions, "embed": args.embed,
              "importNow": IMPORT_NOW, "runDate": RUN_DATE, "searchNow": SEARCH_NOW, "topK": TOP_K,
              "mmrLambda": Settings().mmr_lambda, **figures.figures()}
    gate_summary = None if gate.report is None else gate.report.to_dict()["summary"]
    return {"config": config, "gate": {"discrimination": gate_summary, "seconds": round(gate.seconds, 2)},
            "runs": [o.as_json() for o in outcomes], "_outcomes": outcomes}


def main(argv: Sequence[str] | None = None) -> int:
    """Script entry: measure, print the table, write ``--out``. A :class:`MemhtmlError` prints ``error:`` and
    ``hint:`` on stderr and returns its exit code."""
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        result = run(args)
    except MemhtmlError as exc:
        log(failure(exc))
        return exc.exit_code
    outcomes = result.pop("_outcomes")
    emit(render(outcomes, result["config"]))
    emit(f"\nwall {result['config']['wall_s']:.1f} s (discrimination gate {result['gate']['seconds']:.1f} s, once)")
    write_json(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
