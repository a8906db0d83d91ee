"""Deep-sleep grouping counts on the six LoCoMo dev conversations (issue 13 "Measure"; docs/deep-sleep.md).

Per conversation: its observations are converted by ``locomo.py`` and written by ``apply_batch`` into a new
repository at ``--now`` (as ``import_sleep.py --units observations`` does), indexed with ``--embed``, and one
``run_sleep --deep`` of ``preflight, relationship-mining, compress`` runs on ``--date`` with an in-process scripted
model whose compress answer absorbs every member it is offered (its canonical carries every member's text, so the
``not-carried`` rail lets them through and the merge veto decides). The folds measure the mechanism (how many
groups each pass finds after the previous pass folded), not a model's judgement.

Two imports per conversation (``--as``):

- ``imported``: the ops as the converter writes them, type ``episodic``. Compress never offers an episodic record
  (docs/phases.md §1.10), so deep grouping has no candidate; the band and the hubs are still measured.
- ``semantic``: the same ops with ``type`` set to ``semantic`` and an explicit path in ``areas/inbox/`` (the paths
  stay what they were when placement still filed a fact naming a person under ``resources/people/``, docs/layout.md
  §2.2, so the figures compare): a bulk import of facts into the inbox, the corpus state deep sleep is for.

Figures per row: memories; the routine reach (compress candidates with a community over the plain graph, mined
in memory: what a night without ``--deep`` could offer); mined ``relates_to`` pairs and band edges (``grouped``);
compress's deep counts (candidates, widened communities, entity groups, hubs skipped); groups and canonicals per
pass; members archived; batches the veto refused.

Usage::

    python bench/deep_grouping.py                                   # six conversations, wordllama, both imports
    python bench/deep_grouping.py --embed fake --conversation conv-26 --as semantic

Exit 2 on a bad argument or absent data, 1 when a phase failed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from git_memhtml.embed.base import Embedder
from git_memhtml.errors import MemhtmlError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.llm.scripted import Answer, Reply, ScriptedClient, ScriptedRequest, blocks
from git_memhtml.output import emit, log
from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.sleep.engine.run import ModelBinding, run_sleep
from git_memhtml.sleep.phases import compress, relationship_mining
from git_memhtml.sleep.phases.scoring import retention_pass

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import timing  # noqa: E402  (a script beside this one)

DEFAULT_NOW = "2026-11-30T09:00:00Z"
"""The import instant (every memory's ``created``/``updated``), as ``import_sleep.py``."""
DEFAULT_DATE = "2027-02-28"
"""The run date: 90 days after the import, so un-read memories have left the keep band (docs/retention.md §4.2)."""
EMBED_CHOICES = ("wordllama", "fake")
IMPORTS = ("imported", "semantic")
PHASES = ("preflight", "relationship-mining", "compress")


def absorb_all(req: ScriptedRequest) -> Reply:
    """Absorb every member offered; the canonical carries each member's text whole."""
    texts = {k: " ".join(v.split()) for k, v in blocks(req.prompt).items()}
    if not texts:
        return Answer({"title": "", "claim": "", "paragraphs": [], "absorbedKeys": []})
    first = next(iter(texts.values()))
    return Answer({"title": f"Deep canonical {req.index + 1}", "claim": first[:300], "paragraphs": list(texts.values()),
                   "absorbedKeys": list(texts)})


def _ops(data: Sequence[Mapping[str, Any]], sample_id: str, as_type: str) -> str:
    locomo = timing.load_script("locomo")
    ops = locomo.convert(data, sample_id, "observations")
    if as_type == "semantic":  # into the inbox, by explicit path (the figures of bench/README.md were taken so)
        ops = [{**{k: v for k, v in op.items() if k != "workspace"}, "type": "semantic",
                "path": f"areas/inbox/{sample_id}-{i:04d}.html"} for i, op in enumerate(ops)]
    return str(locomo.dumps_jsonl(ops))


def routine_reach(repo: GitRepo, db: IndexDB, embedder: Embedder | None, date: str) -> tuple[int, dict[str, int]]:
    """Compress candidates a night without ``--deep`` could offer (community over the plain graph, ``relates_to``
    mined in memory), and the retention band sizes."""
    head = repo.head_sha() or ""
    env = PhaseEnv(repo=repo, db=db, embedder=embedder, run_id="bench", base_sha=head, date=date,
                   at=f"{date}T00:00:00Z", dry_run=True)
    mined = relationship_mining.mine(env, deep=False)
    scored = retention_pass(db, at=env.at, root=repo.root, related=mined.related if mined is not None else None)
    bands: dict[str, int] = {}
    for s in scored:
        bands[s.band] = bands.get(s.band, 0) + 1
    return len(compress.candidates(env, scored)), bands


def measure(data: Sequence[Mapping[str, Any]], sample_id: str, as_type: str, *, embed: str, root: Path, now: str,
            date: str) -> dict[str, Any]:
    """Import, index and run one deep night; return the row's figures.

    Raises:
        UsageError: the import refused an op.
    """
    with timing.imported_memory(root, _ops(data, sample_id, as_type), sample_id=sample_id, embed=embed, now=now) as mem:
        repo, db, embedder = mem.repo, mem.db, mem.embedder
        memories = db.query("SELECT count(*) FROM files WHERE archived = 0")[0][0]
        routine, bands = routine_reach(repo, db, embedder, date)
        watch = timing.Stopwatch()
        report = run_sleep(repo, db, date=date, phases=PHASES, deep=True, embedder=embedder,
                           clock=lambda: f"{date}T09:00:00Z",
                           model=ModelBinding(ScriptedClient({"CompressSynthesis": absorb_all})))
        wall, cpu = watch.wall(), watch.cpu()
    lines = {p.phase: p for p in report.phases}
    mining, folding = lines["relationship-mining"].counts, lines["compress"].counts
    return {
        "conversation": sample_id, "import": as_type, "memories": int(memories), "bands": bands,
        "routine_candidates": routine, "relates_to": mining.get("mined", 0), "band_edges": mining.get("grouped", 0),
        "candidates": folding.get("candidates", 0), "communities": folding.get("communities", 0),
        "entity_groups": folding.get("entityGroups", 0), "hubs_skipped": folding.get("hubsSkipped", 0),
        "passes": folding.get("passes", 0),
        "groups_per_pass": [folding[f"pass{n}Groups"] for n in (1, 2, 3) if f"pass{n}Groups" in folding],
        "canonicals_per_pass": [folding[f"pass{n}Canonicals"] for n in (1, 2, 3) if f"pass{n}Canonicals" in folding],
        "archived": folding.get("archived", 0), "vetoed": folding.get("railVeto", 0),
        "calls": lines["compress"].llm_calls, "failed": report.failed_phases,
        "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
    }


COLUMNS = ("conversation", "import", "memories", "routine reach", "relates_to", "band edges", "candidates",
           "communities", "entity groups", "hubs skipped", "passes", "groups / pass", "canonicals / pass", "archived",
           "vetoed", "calls")


def table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The markdown table of ``rows``."""
    out = ["| " + " | ".join(COLUMNS) + " |", "| " + " | ".join("---" for _ in COLUMNS) + " |"]
    for r in rows:
        cells = [r["conversation"], r["import"], r["memories"], r["routine_candidates"], r["relates_to"],
                 r["band_edges"], r["candidates"], r["communities"], r["entity_groups"], r["hubs_skipped"],
                 r["passes"], " / ".join(map(str, r["groups_per_pass"])) or "—",
                 " / ".join(map(str, r["canonicals_per_pass"])) or "—", r["archived"], r["vetoed"], r["calls"]]
        out.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bench; print the table (and ``--json`` the figures)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversation", default="all")
    parser.add_argument("--embed", default="wordllama", choices=EMBED_CHOICES)
    parser.add_argument("--as", dest="imports", default="both", choices=(*IMPORTS, "both"))
    parser.add_argument("--now", default=DEFAULT_NOW)
    parser.add_argument("--date", default=DEFAULT_DATE)
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    locomo = timing.load_script("locomo")
    try:
        data = locomo.load_data(args.data or locomo.DEFAULT_DATA)
        ids = timing.conversation_ids(locomo, data, args.conversation)
        imports = IMPORTS if args.imports == "both" else (args.imports,)
        run = timing.RunFigures()
        with timing.scratch(args.workdir, "deep-grouping-") as work:
            rows = []
            for sid in ids:
                for as_type in imports:
                    log(f"{sid} ({as_type})")
                    rows.append(measure(data, sid, as_type, embed=args.embed, root=work / sid / as_type / "memory",
                                        now=args.now, date=args.date))
    except MemhtmlError as exc:
        print(timing.failure(exc), file=sys.stderr)
        return 2
    emit(table(rows))
    config: dict[str, Any] = {"conversations": ids, "embed": args.embed, "imports": list(imports), "now": args.now,
                              "date": args.date, **run.figures()}
    timing.write_json(args.json, {"config": config, "rows": rows})
    return 1 if any(r["failed"] for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
