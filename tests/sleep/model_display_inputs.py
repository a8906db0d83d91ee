"""Inputs of the model-usage display tests (tests/sleep/test_model_display.py): phase lines with and without a model.

The llm=off lines are the ones whose rendering is kept byte for byte in ``tests/sleep/golden/`` (rendered by the
code before the model display existed), so a page of a night without a model cannot change.
"""

from __future__ import annotations

from typing import Any

from git_memhtml.sleep.engine.env import PhaseReport

BASE = "a" * 40
HEAD = "b" * 40
RUN = "sleep/2026-03-10"


def off_reports() -> list[PhaseReport]:
    """Phase lines of a night with ``memhtml.llm = off`` (model phases say ``no model bound``)."""
    return [
        PhaseReport("integrity", "ok", {"checked": 12, "repaired": 0}, "c" * 40),
        PhaseReport("dedup-merge", "ok", {"pairs": 3, "merged": 1, "vetoed": 1}, "d" * 40, 0, "no model bound"),
        PhaseReport("edge-typing", "ok", {"typed": 0}, None, 0, "no model bound"),
        PhaseReport("compress", "failed", {}, None, 0, "TypeError: <script>alert(1)</script> & \"quoted\""),
        PhaseReport("retention", "skipped", {}, None, 0, "prerequisite failed"),
        PhaseReport("report", "ok", {"phases": 6, "committed": 2, "failed": 1, "skipped": 1}),
    ]


MODEL_COUNTS: dict[str, Any] = {
    "pairs": 4, "merged": 1, "inputTokens": 1200, "outputTokens": 80, "failedCalls": 1, "budgetSkipped": 2,
    "promptTokens": 15000, "largestPrompt": 3900, "overCap": 1, "membersCut": 2, "railUnknownKey": 3, "railVeto": 1,
}


HOSTILE_COUNTS: dict[str, Any] = {
    "inputTokens": "<b>1</b>", "outputTokens": 2, "failedCalls": 0, "budgetSkipped": 0,
    "rail<img src=x onerror=alert(1)>": 4, "railFabricatedQuote": 2,
}
"""Counts as a hand-typed trailer may carry them (read back from JSON, so not only numbers)."""


def model_reports() -> list[PhaseReport]:
    """Phase lines of a night with a model: two model phases bound (one hostile), one without usage keys."""
    return [
        PhaseReport("integrity", "ok", {"checked": 12, "repaired": 0}, "c" * 40),
        PhaseReport("dedup-merge", "ok", dict(MODEL_COUNTS), "d" * 40, 5),
        PhaseReport("edge-typing", "ok", {"typed": 0, "inputTokens": 0, "outputTokens": 0, "failedCalls": 0,
                                          "budgetSkipped": 7}, None, 0),
        PhaseReport("task-detection", "ok", HOSTILE_COUNTS, None, 1),
        PhaseReport("report", "ok", {"phases": 5, "committed": 2, "failed": 0, "skipped": 0}),
    ]


def review_of(reports: list[PhaseReport]) -> dict[str, Any]:
    """A ``review_run`` result over ``reports`` (state rows present, no files), as the markdown renderer reads it."""
    return {
        "runId": RUN, "status": "finished", "baseSha": BASE, "headSha": HEAD,
        "phases": [r.as_json() for r in reports],
        "commits": [{"sha": "c" * 40, "subject": "memhtml(sleep(integrity)): check", "phase": "integrity",
                     "counts": reports[0].counts}],
        "files": [], "summary": {"body-changed": 0, "created": 0}, "artifacts": 0, "diffStat": "", "probes": None,
    }


def trailer_review_of(reports: list[PhaseReport]) -> dict[str, Any]:
    """The same review on a clone without the run's state rows: phases come from the commits' trailers."""
    review = review_of(reports)
    review["phases"] = []
    review["commits"] = [{"sha": (r.commit_sha or "e" * 40), "subject": f"memhtml(sleep({r.phase}))",
                          "phase": r.phase, "counts": r.counts} for r in reports]
    return review
