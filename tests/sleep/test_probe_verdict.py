"""The run gate's figures (git_memhtml/sleep/probes/verdict.py): the table of issue 10 item 2, the threshold, and
the refusal naming the lost memories with their phases."""

from __future__ import annotations

from git_memhtml.sleep.probes.gate import refusal
from git_memhtml.sleep.probes.verdict import LostMemory, ProbeResult, Verdict, build_verdict, family_figures

RESULTS = [
    ProbeResult("claim", "a.html", "a.html", "found", 2, 1),
    ProbeResult("claim", "b.html", "b.html", "found", 1, 4),
    ProbeResult("claim", "c.html", "c.html", "explained", 3, 3, via="k.html", how="folded"),
    ProbeResult("claim", "d.html", "d.html", "lost", 5, why="its claim ranks none of d.html (self) in the top 10"),
    ProbeResult("claim", "e.html", "e.html", "not-found-before"),
    ProbeResult("entity", "service:x", "a.html", "found"),
    ProbeResult("entity", "service:y", "b.html", "lost", why="b.html no longer carries service:y"),
]


def test_figures_add_up_and_count_only_what_was_found_before() -> None:
    claim = family_figures([r for r in RESULTS if r.family == "claim"])
    assert (claim.run, claim.found_before, claim.found_after, claim.lost, claim.explained) == (5, 4, 2, 1, 1)
    assert claim.found_before == claim.found_after + claim.explained + claim.lost
    assert claim.mean_rank_change == round(((1 - 2) + (4 - 1) + (3 - 3)) / 3, 4)
    entity = family_figures([r for r in RESULTS if r.family == "entity"])
    assert (entity.run, entity.lost, entity.mean_rank_change) == (2, 1, None)


def _verdict(max_lost: int) -> Verdict:
    lost = [LostMemory(r, ("entity-resolution",), ("abc123",)) for r in RESULTS if r.status == "lost"]
    return build_verdict(run_id="sleep/2026-12-01", base_sha="b" * 40, head_sha="t" * 40, space="fake:hash@1024",
                         k=10, sample_size=5, max_lost=max_lost, results=RESULTS, lost=lost, degraded=False)


def test_the_threshold_counts_the_losses_of_every_family() -> None:
    assert not _verdict(1).passed and _verdict(2).passed
    data = _verdict(0).as_json()
    assert data["lostCount"] == 2 and data["families"]["control"]["run"] == 0
    assert [e["path"] for e in data["explained"]] == ["c.html"]


def test_a_refusal_names_each_lost_memory_its_why_and_phase() -> None:
    error = refusal(_verdict(0))
    assert error is not None and error.code == "ERR_PROBES_FAILED" and error.hint
    assert "d.html" in error.message and "b.html (entity service:y)" in error.message
    assert "[entity-resolution]" in error.message and "memhtml.gatemaxlost" in error.message
    assert refusal(_verdict(2)) is None
