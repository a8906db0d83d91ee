"""Entity merges and retention evictions on the synthetic corpus after its import (issue 8 item 4 "Measure").

``python bench/entities_retention.py --size 10000`` takes the cached corpus of ``bench/synth.py`` (built on first
use; every file is created and updated at ``synth.NOW``, never read), copies it to a scratch folder (the cache is
never written), and runs ``sleep run`` there with the phases :data:`PHASES` (preflight through retention-triage) on
``--days`` (default 14) days after the import, with the fake embedder and no model. ``--first-read D`` records one
explicit read (``index.access.record_read``, as ``git memhtml read`` does) of the first memory D days after the
import, before the run: the store's observation start. It prints one JSON object: the entity-resolution counts
(``fuzzyMerges`` = entity merges, ``filesRewritten``), the retention-triage counts (``evicted``; ``unobserved`` =
evict-band memories held because their disuse was observed for under 30 days), the observation start, the bands,
and the run's failed phases.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synth

from git_memhtml.document.editors import get_meta
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.embed.registry import get_embedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index import indexer
from git_memhtml.index.access import observation_start, record_read
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.engine.contract import SLEEP_PHASES
from git_memhtml.sleep.engine.run import run_sleep

PHASES = tuple(p for p in SLEEP_PHASES if p not in ("compress", "reprieve", "trace-consolidation", "task-detection",
                                                       "placement-triage", "integrity", "state-export", "report"))
"""The phases up to retention-triage, in run order (docs/phases.md §1): every one that can change what triage scores
(relationship-mining's derived edges feed PageRank and bridges; confidence-decay lowers confidence)."""


def _archived_by_type(repo: GitRepo, branch: str) -> dict[str, int]:
    """``{memory type: files moved into archive/}`` between the trunk and the run's branch tip."""
    base, tip = repo.branch_sha("main"), repo.branch_sha(branch)
    out: dict[str, int] = {}
    if base is None or tip is None:
        return out
    for change in repo.diff(base, tip):
        if change.status in ("R", "A") and change.path.startswith("archive/"):  # past the rename limit: A + D
            data = repo.read_path_at(tip, change.path) or b""
            kind = get_meta(data.decode("utf-8", "replace"), "type") or "?"
            out[kind] = out.get(kind, 0) + 1
    return dict(sorted(out.items()))


def _day(days: int) -> str:
    """The date ``days`` days after ``synth.NOW`` (``YYYY-MM-DD``)."""
    return (datetime.fromisoformat(synth.NOW.replace("Z", "+00:00")) + timedelta(days=days)).date().isoformat()


def measure(size: int, days: int, embed: str = "fake", first_read: int | None = None) -> dict[str, object]:
    """Run :data:`PHASES` on a copy of the ``size`` corpus ``days`` days after its import; return the counts.

    ``embed`` other than ``fake`` re-indexes the copy with that embedder first (``wordllama`` gives the mined
    ``relates_to`` edges a real embedder finds, so PageRank is not uniform). ``first_read`` (days after the
    import) records one read of ``synth.memory_path(0)`` at midnight UTC of that day before the run.
    """
    source = synth.corpus(size, log=False)
    date = _day(days)
    with tempfile.TemporaryDirectory(prefix="memhtml-entret-") as scratch:
        root = Path(scratch) / "corpus"
        shutil.copytree(source, root, symlinks=True)
        repo = GitRepo.discover(root)
        ticks = iter(range(10**6))
        embedder = FakeEmbedder(dim=synth.DIM) if embed == "fake" else get_embedder(embed)
        with IndexDB.for_repo(repo) as db:
            if embed != "fake":
                indexer.rebuild(repo, db, embedder, now=synth.NOW)
            if first_read is not None:
                record_read(db, synth.memory_path(0), now=f"{_day(first_read)}T00:00:00Z")
            since = observation_start(db)
            report = run_sleep(repo, db, date=date, phases=PHASES, embedder=embedder,
                               clock=lambda: f"{date}T09:{next(ticks) % 60:02d}:00Z")
        counts = {p.phase: p.counts for p in report.phases}
        by_type = _archived_by_type(repo, report.run_id)
    entities = counts.get("entity-resolution", {})
    triage = counts.get("retention-triage", {})
    return {
        "size": size,
        "embed": embed,
        "date": date,
        "minedEdges": counts.get("relationship-mining", {}).get("mined"),
        "entityMerges": entities.get("fuzzyMerges"),
        "aliasMerges": entities.get("aliasMerges"),
        "entityFilesRewritten": entities.get("filesRewritten"),
        "entityCounts": entities,
        "observationStart": since,
        "evicted": triage.get("evicted"),
        "unobserved": triage.get("unobserved"),
        "evictedByType": by_type,
        "triageCounts": triage,
        "failed": list(report.failed_phases),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--days", type=int, default=14, help="run date = import date + DAYS (default 14)")
    parser.add_argument("--embed", default="fake", help="fake (default) or wordllama (re-indexes the copy)")
    parser.add_argument("--first-read", type=int, default=None, metavar="DAYS",
                        help="record one read DAYS after the import, before the run (default: never read)")
    args = parser.parse_args()
    print(json.dumps(measure(args.size, args.days, args.embed, args.first_read), indent=2))


if __name__ == "__main__":
    main()
