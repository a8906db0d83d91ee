"""Phase 17, report: the committed run report and the run's pending-mark ledger (docs/phases.md §1.17; docs/ledger.md §1
"The pending-mark ledger"; docs/design.md §3.2).

The page lists every phase the runner reported so far (``env.results``) plus the report's own line, so a resume
that re-runs only the report still accounts for every phase. The pending marks the run earned
(``env.services.ledger``)
are appended to ``.memhtml/sleep/<run>.pending.jsonl``, one compact JSON line per mark, deduplicated by the
rendered line so a resume re-recording a mark appends nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome, PhaseReport
from git_memhtml.sleep.engine.ledger import PendingMark, ledger_lines
from git_memhtml.sleep.engine.runfiles import ledger_file, report_path
from git_memhtml.sleep.presentation.report_html import render_report

PHASE = "report"


@dataclass(frozen=True)
class ReportCounts(PhaseCounts):
    """``phases`` (the report included), ``committed``, ``failed``, ``skipped`` of the earlier lines, ``bytes``
    of the page (``None`` on the page's own line: the page cannot hold its own size), and ``marksPending``: the
    lines of the run's ledger once this pass wrote it, present only when the run earned marks (so a run without
    marks, every run with no model bound among them, keeps the counts it always had; docs/ledger.md §1)."""

    phases: int
    committed: int
    failed: int
    skipped: int
    bytes: int | None = None
    marks_pending: int | None = None


def render_mark(mark: PendingMark) -> str:
    """One ledger line: compact JSON with sorted keys, so equal marks render to equal lines."""
    return json.dumps(mark.as_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def merged_ledger(existing: str, marks: Sequence[PendingMark]) -> str:
    """``existing`` ledger text with each new rendered mark appended once (existing lines kept as they are)."""
    lines = ledger_lines(existing)
    seen = set(lines)
    for mark in marks:
        line = render_mark(mark)
        if line not in seen:
            seen.add(line)
            lines.append(line)
    return "".join(line + "\n" for line in lines)


def stage_ledger(env: PhaseEnv) -> bool:
    """Merge ``env.services.ledger`` into the run's ledger file in the work tree and stage it (nothing on a dry run or
    with no marks); whether the file changed. A phase that must not lose its marks to a kill before the report
    phase stages them with its own last commit; the report phase merges the rest (lines de-duplicated)."""
    marks = env.services.ledger
    if env.dry_run or not marks:
        return False
    target = env.repo.root / ledger_file(env.run_id)
    existing = target.read_text(encoding="utf-8") if target.is_file() else ""
    return _write_if_changed(env, ledger_file(env.run_id), merged_ledger(existing, marks).encode("utf-8"))


def phase_lines(results: Sequence[PhaseReport], own_counts: PhaseCounts) -> list[PhaseReport]:
    """Every earlier result (a stale ``report`` line dropped) plus the report's own ``ok`` line."""
    earlier = [r for r in results if r.phase != PHASE]
    return [*earlier, PhaseReport(PHASE, "ok", own_counts.wire())]


def report_counts(earlier: Sequence[PhaseReport]) -> ReportCounts:
    """The report's counts over the ``earlier`` lines (the report's own line excluded), ``bytes`` not yet known."""
    return ReportCounts(
        phases=len(earlier) + 1,
        committed=sum(1 for r in earlier if r.commit_sha),
        failed=sum(1 for r in earlier if r.status == "failed"),
        skipped=sum(1 for r in earlier if r.status == "skipped"),
    )


def _write_if_changed(env: PhaseEnv, path: str, data: bytes) -> bool:
    target = env.repo.root / path
    if target.is_file() and target.read_bytes() == data:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    env.repo.stage([path])
    return True


def run(env: PhaseEnv) -> PhaseOutcome:
    """Render and stage the report (and the ledger); counts ``phases, committed, failed, skipped, bytes`` and,
    when the run has a ledger (marks earned now or by an earlier pass of a resumed run), ``marksPending``.

    ``phases`` includes the report itself; ``bytes`` is the size of the page. On a dry run nothing is written and
    the counts say what would be.

    Raises:
        OSError/GitError: the files cannot be written or staged.
    """
    earlier = [r for r in env.results if r.phase != PHASE]
    marks = env.services.ledger
    target = env.repo.root / ledger_file(env.run_id)
    existing = target.read_text(encoding="utf-8") if target.is_file() else None
    ledger = merged_ledger(existing or "", marks) if marks else existing
    counts = report_counts(earlier)
    if ledger is not None:  # a resume that earns nothing new still reports the marks the first pass committed
        counts = replace(counts, marks_pending=len(ledger_lines(ledger)))
    page = render_report(
        run_id=env.run_id,
        branch=env.run_id,
        base_sha=env.base_sha,
        head_sha=env.repo.head_sha(),
        reports=phase_lines(env.results, counts),
    ).encode("utf-8")
    if not env.dry_run:
        _write_if_changed(env, report_path(env.run_id), page)
        if marks and ledger is not None:
            _write_if_changed(env, ledger_file(env.run_id), ledger.encode("utf-8"))
    return PhaseOutcome(replace(counts, bytes=len(page)), subject=f"record run {env.run_id}")


register(PhaseSpec("report", run, ReportCounts, sweep=True))
