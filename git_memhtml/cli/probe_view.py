"""The run gate at the CLI edge: its settings from the app, one call, and its human table (docs/gate.md §9).

``eval run``, ``sleep review`` and ``sleep merge`` all go through :func:`run_probes`, so the three print the same
verdict for the same run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from git_memhtml.cli.app import App
from git_memhtml.output import table, terminal_text
from git_memhtml.sleep.probes.verdict import TABLE_HEADERS

if TYPE_CHECKING:
    from git_memhtml.index.db import IndexDB
    from git_memhtml.sleep.probes.gate import ProbeReport, ProbeSettings

LOST_SHOWN = 20
"""Lost probes printed under the human table (``--json`` lists all)."""


def probe_settings(app: App, *, sample_size: int | None = None, k: int | None = None,
                   max_lost: int | None = None) -> ProbeSettings:
    """Defaults, ``memhtml.gatemaxlost`` from the settings, then the command's flags."""
    from git_memhtml.sleep.probes.gate import ProbeSettings

    base = ProbeSettings(max_lost=app.settings().settings.gate_max_lost)
    return ProbeSettings(
        sample_size=base.sample_size if sample_size is None else sample_size,
        k=base.k if k is None else k,
        max_lost=base.max_lost if max_lost is None else max_lost,
    )


def run_probes(app: App, db: IndexDB, run_id: str, settings: ProbeSettings, *, base_sha: str | None = None,
               tip_sha: str | None = None) -> ProbeReport:
    """The verdict of ``run_id`` with the app's embedder; the user's index ``db`` is reused for the base when it
    describes it."""
    from git_memhtml.sleep.probes.gate import probe_run

    return probe_run(app.repo(), db, run_id, embedder=app.embedder(), settings=settings, base_sha=base_sha,
                     tip_sha=tip_sha)


def verdict_text(verdict: dict[str, Any], timing: dict[str, Any] | None = None) -> str:
    """The human rendering of a verdict's JSON: a headline, the family table, the lost probes."""
    head = "passed" if verdict["passed"] else "REFUSED"
    size = verdict["sampleSize"]
    lines = [
        f"run gate {head}: {verdict['lostCount']} memories lost (at most {verdict['maxLost']}), {size} claim "
        f"probe{'' if size == 1 else 's'}, top {verdict['k']}, space {verdict['space'] or 'off'}"
        + (" (degraded: lexical only)" if verdict["degraded"] else ""),
    ]
    rows = []
    for name, f in verdict["families"].items():
        change = "—" if f["meanRankChange"] is None else f"{f['meanRankChange']:+.4f}"
        rows.append([name, f["run"], f["foundBefore"], f["foundAfter"], f["lost"], f["explained"], change])
    lines.append(table(list(TABLE_HEADERS), rows))
    lost = verdict["lost"]
    if lost:
        lines.append("lost:")
        for item in lost[:LOST_SHOWN]:
            phases = ", ".join(item["phases"]) or "no phase commit changed it"
            label = "" if item["probe"] == item["path"] else f" ({item['family']} {item['probe']})"
            lines.append(terminal_text(f"  {item['path']}{label}: {item['why']} [{phases}]"))
        if len(lost) > LOST_SHOWN:
            lines.append(f"  … and {len(lost) - LOST_SHOWN} more (--json lists all)")
    if timing:
        base, tip = timing.get("baseIndex", {}), timing.get("tipIndex", {})
        lines.append(f"indexes: base {base.get('source')} {base.get('seconds')} s, tip {tip.get('source')} "
                     f"{tip.get('seconds')} s; probes {timing.get('probeSeconds')} s")
    return "\n".join(lines)
