"""The run report page ``.memhtml/sleep/<run>.html`` (docs/phases.md §1.17; docs/design.md §3.2).

Plain HTML with no memhtml head (it is not a memory and lives outside the PARA buckets): a summary ``<mark>``, a
``<dl>`` with run, branch, base, head and model calls, a ``<details>`` listing failed phases, one table row
per phase (#, phase, status, 12-character commit sha, calls, ``k=v`` counts, detail), and, when some phase had a
model bound, a "model use" table with one row per such phase (calls, tokens, failed calls, budget skips,
rejections by rail: :mod:`sleep.presentation.model_usage`); a night without a model renders no such table, byte for
byte the page it always was. Pure and byte-deterministic given its inputs; every value is HTML-escaped.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from git_memhtml.sleep.engine.contract import SLEEP_PHASES, phase_ordinal
from git_memhtml.sleep.engine.env import PhaseReport
from git_memhtml.sleep.presentation.model_usage import HEADERS, cells, model_lines

SHA_WIDTH = 12
"""Commit shas are shown abbreviated to 12 characters (docs/phases.md §1.17)."""


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def format_value(value: Any) -> str:
    """One count value as text: ints and strings verbatim, booleans ``true``/``false``, anything else compact JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | str):
        return str(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def format_counts(counts: Mapping[str, Any]) -> str:
    """``k=v`` pairs in insertion order, space-separated (docs/phases.md §1.17)."""
    return " ".join(f"{key}={format_value(value)}" for key, value in counts.items())


def short_sha(sha: str | None) -> str:
    """The first 12 characters of ``sha``, or ``""``."""
    return sha[:SHA_WIDTH] if sha else ""


def summary_line(run_id: str, reports: Sequence[PhaseReport]) -> str:
    """``<run>: N phases, C committed, F failed, S skipped.`` — the page's claim."""
    committed = sum(1 for r in reports if r.commit_sha)
    failed = sum(1 for r in reports if r.status == "failed")
    skipped = sum(1 for r in reports if r.status == "skipped")
    return f"{run_id}: {len(reports)} phases, {committed} committed, {failed} failed, {skipped} skipped."


def _ordinal(phase: str) -> str:
    return str(phase_ordinal(phase)) if phase in SLEEP_PHASES else ""


def model_table(reports: Sequence[PhaseReport]) -> list[str]:
    """The "model use" table's lines (one row per phase that had a model bound), or ``[]`` when none had."""
    used = model_lines((r.phase, r.counts, r.llm_calls) for r in reports)
    if not used:
        return []
    head = "".join(f"<th>{_esc(h)}</th>" for h in HEADERS)
    rows = ["<tr>" + "".join(f"<td>{_esc(cell)}</td>" for cell in cells(line)) + "</tr>" for line in used]
    return ["<table>", "<caption>model use</caption>", f"<thead><tr>{head}</tr></thead>", "<tbody>", *rows,
            "</tbody>", "</table>"]


def render_report(
    *,
    run_id: str,
    branch: str,
    base_sha: str,
    head_sha: str | None,
    reports: Sequence[PhaseReport],
) -> str:
    """Render the report page of one run.

    Args:
        run_id: ``sleep/<date>[-N]``.
        branch: the run's branch (equal to ``run_id``).
        base_sha / head_sha: full shas of ``main`` at the cut and of the branch before the report's own commit.
        reports: every phase line to show, in the order given (the report phase passes all earlier results plus
            its own line).

    Returns:
        The page text, lines joined by ``\\n`` with a trailing newline.
    """
    calls = sum(r.llm_calls for r in reports)
    failures = [r for r in reports if r.status == "failed"]
    lines = [
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>sleep run {_esc(run_id)}</title>",
        "</head>",
        "<body>",
        "<article>",
        f"<p><mark>{_esc(summary_line(run_id, reports))}</mark></p>",
        "<dl>",
        f"<dt>run</dt><dd>{_esc(run_id)}</dd>",
        f"<dt>branch</dt><dd>{_esc(branch)}</dd>",
        f"<dt>base</dt><dd><code>{_esc(base_sha)}</code></dd>",
        f"<dt>head</dt><dd><code>{_esc(head_sha or '')}</code></dd>",
        f"<dt>model calls</dt><dd>{calls}</dd>",
        "</dl>",
        "<details>",
        f"<summary>{len(failures)} failed phases</summary>",
    ]
    if failures:
        lines.append("<ul>")
        lines += [f"<li>{_esc(r.phase)}: {_esc(r.detail or 'failed')}</li>" for r in failures]
        lines.append("</ul>")
    lines += [
        "</details>",
        "<table>",
        "<thead><tr><th>#</th><th>phase</th><th>status</th><th>commit</th><th>calls</th><th>counts</th>"
        "<th>detail</th></tr></thead>",
        "<tbody>",
    ]
    for r in reports:
        lines.append(
            f"<tr><td>{_ordinal(r.phase)}</td><td>{_esc(r.phase)}</td><td>{_esc(r.status)}</td>"
            f"<td><code>{_esc(short_sha(r.commit_sha))}</code></td><td>{r.llm_calls}</td>"
            f"<td>{_esc(format_counts(r.counts))}</td><td>{_esc(r.detail or '')}</td></tr>"
        )
    lines += ["</tbody>", "</table>", *model_table(reports), "</article>", "</body>", "</html>"]
    return "\n".join(lines) + "\n"
