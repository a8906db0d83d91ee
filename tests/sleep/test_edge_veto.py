"""Typed edges obey the merge veto (issue 27 item 3; docs/veto.md §6, docs/models.md §7).

A gullible model that answers ``supports`` (or any directional rel) for every pair it is shown must not link a claim
to its own negation, to the same claim with another number, or to another variant: such a pair states two things
about one matter and can only be ``contradicts``. Every night runs the real runner over the real HTTP client against
the scripted model server, in both dialects.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memhtml.document import editors
from git_memhtml.llm.contract import Dialect
from git_memhtml.llm.scripted import Script
from tests.sleep.sleep_corpus_helpers import make_repo, memory
from tests.sleep.test_edge_typing import verdicts_by
from tests.sleep.wire_night import wire_night

PHASES = ("preflight", "relationship-mining", "edge-typing")

ON = "areas/ops/cache-on.html"
OFF = "areas/ops/cache-off.html"
T30 = "areas/ops/timeout-30.html"
T45 = "areas/ops/timeout-45.html"
PRO = "areas/ops/plan-pro.html"
LEGACY = "areas/ops/plan-legacy.html"
WARM = "areas/ops/cache-warm.html"
COLD = "areas/ops/cache-cold.html"

CORPUS = {
    ON: memory("The response cache of checkout-api is enabled in production."),
    OFF: memory("The response cache of checkout-api is not enabled in production."),
    T30: memory("The request timeout of checkout-api calls to payments-api is 30 seconds."),
    T45: memory("The request timeout of checkout-api calls to payments-api is 45 seconds."),
    PRO: memory("The checkout-api pro plan includes priority support and a dedicated region."),
    LEGACY: memory("The checkout-api legacy plan includes priority support and a dedicated region."),
    WARM: memory("Warming the cache of checkout-api before the deploy cuts latency spikes."),
    COLD: memory("Warming the cache of checkout-api before the deploy cuts the latency spikes."),
}
"""Three divergent pairs (negation, number, variant) and one pair that agrees."""

DIVERGENT = {(OFF, ON): "negation", (T30, T45): "numeric", (LEGACY, PRO): "variant"}


def gullible(rel: str) -> Script:
    return {"EdgeVerdicts": verdicts_by(lambda text: (rel, "src_to_dst", 0.99))}


def memory_links(html: str) -> list[tuple[str, str]]:
    return [(ln.rel, ln.href) for ln in editors.get_links(html) if ln.rel != "about_person"]


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
@pytest.mark.parametrize("rel", ["supports", "leads_to", "example_of", "part_of", "caused_by"])
def test_a_directional_edge_between_divergent_memories_is_refused_on_the_veto_rail(
        tmp_path: Path, rel: str, dialect: Dialect) -> None:
    night = wire_night(make_repo(tmp_path, CORPUS), PHASES, gullible(rel), dialect=dialect)
    counts = night.line("edge-typing").counts
    offered = {tuple(sorted(p)) for p in DIVERGENT} | {(COLD, WARM)}
    assert counts["candidates"] == 4 and counts["judged"] == 4, counts
    for src, dst in offered:  # each divergent pair was offered and refused; the agreeing pair is linked
        html = night.file(src)
        assert html is not None
        expected = [(rel, "/" + dst)] if (src, dst) == (COLD, WARM) else []
        assert memory_links(html) == expected, (src, dst)
    assert counts["typed"] == 1 and counts["railVeto"] == 3
    refused = {(p["subject"], p["object"]): p["reasons"] for p in night.refused("veto")}
    assert refused == {pair: [reason] for pair, reason in DIVERGENT.items()}
    assert all(p["rel"] == rel for p in night.refused("veto"))


def test_a_divergent_pair_can_still_be_called_contradicts(tmp_path: Path) -> None:
    night = wire_night(make_repo(tmp_path, CORPUS), PHASES, gullible("contradicts"))
    counts = night.line("edge-typing").counts
    assert counts["contradictions"] == 4 and counts.get("railVeto", 0) == 0
    assert counts["tasksMinted"] == 4  # first look: a review task per pair, as for any contradiction


MON = "areas/ops/handoff-mon.html"
TUE = "areas/ops/handoff-tue.html"
WILL = "areas/ops/runbook-will.html"
DID = "areas/ops/runbook-did.html"
WHEN_CORPUS = {
    MON: memory("The on-call handoff of the platform team happens in the channel on Monday."),
    TUE: memory("The on-call handoff of the platform team happens in the channel on Tuesday."),
    WILL: memory("Jonah Berg will update the orders-db failover runbook with the new steps."),
    DID: memory("Jonah Berg updated the orders-db failover runbook with the new steps."),
}
"""Two times of one slot, and a promise and its completion (issue 27 round 2, docs/veto.md §3 "When", "Done")."""


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_two_clashing_times_take_no_directional_edge_and_a_promise_leads_to_its_completion(
        tmp_path: Path, dialect: Dialect) -> None:
    """An edge keeps both texts: only a clash refuses it (docs/veto.md §6). "on Monday" / "on Tuesday" is one slot
    stated twice, so it can only be ``contradicts``; a promise and its completion both hold, and the one leads to the
    other."""
    night = wire_night(make_repo(tmp_path, WHEN_CORPUS), PHASES, gullible("leads_to"), dialect=dialect)
    counts = night.line("edge-typing").counts
    assert counts["judged"] == 2 and counts["typed"] == 1 and counts["railVeto"] == 1, counts
    refused = [(p["subject"], p["object"], p["reasons"]) for p in night.refused("veto")]
    assert refused == [(MON, TUE, ["time"])]
    for path in (MON, TUE):
        html = night.file(path)
        assert html is not None and memory_links(html) == [], path
    linked = [memory_links(html) for path in (WILL, DID) if (html := night.file(path)) is not None]
    assert sorted(linked) == [[], [("leads_to", "/" + WILL)]] or sorted(linked) == [[], [("leads_to", "/" + DID)]]
