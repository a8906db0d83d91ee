"""Merge veto predicates, tokenizer, role guard, cap and components (docs/veto.md §3; docs/phases.md §0.4, docs/veto.md
§3)."""

from __future__ import annotations

from typing import Any

import pytest

from git_memhtml.domain import claim_names, merge
from git_memhtml.domain.merge import (
    MAX_MERGE_PAIRS,
    NEAR_DUPLICATE_THRESHOLD,
    MergeProposal,
    MergeText,
    carry_gaps,
    connected_components,
    merge_candidates,
    negation_divergent,
    numeric_token_divergent,
    subject_divergent,
    tokenize,
    variant_qualifier_divergent,
    veto_reasons,
)


def test_constants() -> None:
    assert NEAR_DUPLICATE_THRESHOLD == 0.92
    assert MAX_MERGE_PAIRS == 100


def test_tokenize_keeps_dotted_versions_and_lowercases() -> None:
    assert tokenize("V2.1 ships in 3.5 days, Café!") == ["v2.1", "ships", "in", "3.5", "days", "caf"]


def test_tokenize_nfc_normalises_before_matching() -> None:
    # "Ａ" (fullwidth) is not touched by NFC; a combining sequence is composed and then dropped as non-ASCII.
    assert tokenize("e\u0301x") == tokenize("\u00e9x") == ["x"]


def test_tokenize_contractions_in_order() -> None:
    assert tokenize("It isn't safe") == ["it", "is", "not", "safe"]
    assert tokenize("we won't ship") == ["we", "will", "not", "ship"]  # not "wo not"
    assert tokenize("you can't") == ["you", "can", "not"]  # not "ca not"
    assert tokenize("you cannot") == ["you", "can", "not"]
    assert tokenize("they shouldn't") == ["they", "should", "not"]
    assert tokenize("it ain't so") == ["it", "ai", "not", "so"]  # generic n't rule


def test_tokenize_handles_only_ascii_apostrophes() -> None:
    assert "not" not in tokenize("it isn\u2019t safe")


def test_negation_example_is_vetoed() -> None:
    a, b = "the deploy step is safe", "the deploy step is not safe"
    assert negation_divergent(a, b) and negation_divergent(b, a)
    assert veto_reasons(a, b) == ("negation",)


def test_negation_via_contraction_and_markers() -> None:
    assert negation_divergent("the deploy step is safe", "the deploy step isn't safe")
    assert negation_divergent("the token is valid", "the token is invalid")
    assert negation_divergent("retries succeed", "retries fail")


def test_negation_both_sides_or_neither_is_not_divergent() -> None:
    assert not negation_divergent("never deploy on friday", "do not deploy on friday")
    assert not negation_divergent("deploy on monday", "deploy on tuesday")


def test_numeric_example_is_vetoed() -> None:
    a, b = "v2.1 ships in 3 days", "v2.2 ships in 3 days"
    assert numeric_token_divergent(a, b) and numeric_token_divergent(b, a)
    assert veto_reasons(a, b) == ("numeric",)


def test_numeric_tokens_include_identifiers_and_ignore_order() -> None:
    assert numeric_token_divergent("paged for sev1", "paged for sev2")
    assert not numeric_token_divergent("m1 then 3", "3 then m1")
    assert not numeric_token_divergent("no numbers here", "none here either")
    assert numeric_token_divergent("takes 5 minutes", "takes minutes")


def test_variant_example_is_vetoed() -> None:
    a, b = "the pro plan includes sso", "the plan includes sso"
    assert variant_qualifier_divergent(a, b) and variant_qualifier_divergent(b, a)
    assert veto_reasons(a, b) == ("variant",)
    assert not variant_qualifier_divergent("the beta flag", "beta flag on")


def test_multiple_reasons_are_all_named_in_fixed_order() -> None:
    assert veto_reasons("the pro plan costs 5", "the plan does not cost 6") == ("negation", "numeric", "variant")


def test_numeric_reads_claim_only_negation_and_variant_read_article() -> None:
    left = MergeText("the deploy step is safe", "checked on 2026-01-03 in INC-41")
    right = MergeText("the deploy step is safe", "checked on 2026-02-09 in INC-77")
    assert veto_reasons(left, right) == ()  # body numbers differ, claim numbers do not
    body_negated = MergeText("the deploy step is safe", "it is not safe on the legacy runner")
    assert veto_reasons(left, body_negated) == ("negation", "variant")


def _p(keep: str, drop: str, sim: float = 0.95, **texts: Any) -> MergeProposal:
    return MergeProposal(keep, drop, sim, **texts)


def test_threshold_is_strict() -> None:
    out = merge_candidates([_p("a", "b", 0.92), _p("c", "d", 0.9200001)])
    assert [p.drop for p in out.below_threshold] == ["b"]
    assert [(d.keep, d.drop) for d in out.decisions] == [("c", "d")]


def test_custom_threshold_zero_admits_model_pairs() -> None:
    out = merge_candidates([_p("a", "b", 0.86)], threshold=0)
    assert len(out.decisions) == 1


def test_vetoed_pair_names_predicates_and_is_not_decided() -> None:
    out = merge_candidates(
        [
            _p(
                "old.html",
                "new.html",
                0.97,
                keep_claim="the deploy step is safe",
                drop_claim="the deploy step is not safe",
                keep_text="",
                drop_text="",
            )
        ]
    )
    assert out.decisions == ()
    assert [(v.keep, v.drop, v.reasons) for v in out.vetoed] == [("old.html", "new.html", ("negation",))]


def test_veto_skipped_when_a_text_is_missing() -> None:
    out = merge_candidates([_p("a", "b", 0.97, keep_claim="the deploy step is safe")])
    assert len(out.decisions) == 1 and out.vetoed == ()


def test_self_pair_is_skipped() -> None:
    out = merge_candidates([_p("a", "a")])
    assert out.decisions == () and [p.keep for p in out.self_pairs] == ["a"]


def test_role_guard_chain_gf_a_then_b_gf() -> None:
    out = merge_candidates([_p("gf", "a"), _p("b", "gf")])
    assert [(d.keep, d.drop) for d in out.decisions] == [("gf", "a")]
    assert [(p.keep, p.drop) for p in out.role_guarded] == [("b", "gf")]
    assert out.vetoed == ()


def test_role_guard_keeper_may_keep_again() -> None:
    out = merge_candidates([_p("k", "a"), _p("k", "b"), _p("k", "c")])
    assert [d.drop for d in out.decisions] == ["a", "b", "c"]


def test_role_guard_dropped_path_is_never_dropped_again_nor_keeps() -> None:
    out = merge_candidates([_p("k", "a"), _p("j", "a"), _p("a", "z")])
    assert [(d.keep, d.drop) for d in out.decisions] == [("k", "a")]
    assert [(p.keep, p.drop) for p in out.role_guarded] == [("j", "a"), ("a", "z")]


def test_cap_counts_decisions_not_proposals() -> None:
    vetoed_first = _p("x", "y", 0.99, keep_claim="is safe", drop_claim="is not safe")
    proposals = [vetoed_first] + [_p(f"k{i:03d}", f"d{i:03d}") for i in range(150)]
    out = merge_candidates(proposals)
    assert len(out.decisions) == 100
    assert len(out.capped) == 50
    assert out.capped[0].keep == "k100"
    assert len(out.vetoed) == 1


def test_connected_components_sorted_and_ordered_by_root() -> None:
    comps = connected_components([("d", "c"), ("z", "y"), ("c", "b"), ("y", "a"), ("e", "f")])
    assert comps == [["a", "y", "z"], ["b", "c", "d"], ["e", "f"]]
    assert connected_components([("a", "b", 0.9)]) == [["a", "b"]]
    assert connected_components([]) == []


def test_marker_vocabularies_are_complete() -> None:
    from git_memhtml.domain.merge import NEGATION_MARKERS, VARIANT_QUALIFIERS

    assert {
        "not", "no", "never", "none", "cannot", "without", "neither", "nor", "avoid", "disallow", "disallowed",
        "forbidden", "unsafe", "invalid", "false", "fail", "fails", "failed", "deny", "denied", "reject",
        "rejected",
    } == NEGATION_MARKERS
    assert {
        "pro", "max", "beta", "alpha", "rc", "preview", "legacy", "deprecated", "experimental",
    } == VARIANT_QUALIFIERS
    for marker in sorted(NEGATION_MARKERS - {"cannot"}):
        assert negation_divergent(f"the step is {marker} here", "the step is here"), marker
    for qualifier in sorted(VARIANT_QUALIFIERS):
        assert variant_qualifier_divergent(f"the {qualifier} plan", "the plan"), qualifier


# --- the subject predicate and the carry reading (docs/veto.md §3 "Subjects", §4) ----------------------------------

MEL, CAR = frozenset({"person:melanie"}), frozenset({"person:caroline"})


@pytest.mark.parametrize(("a", "b", "fires"), [
    (MEL, CAR, True),                                                    # one kind, disjoint names
    (MEL, MEL | CAR, False),                                             # one person in common
    (frozenset(), CAR, False),                                           # no subject: no say
    (MEL, frozenset({"service:checkout"}), False),                       # no kind in common
    (MEL | frozenset({"service:a"}), MEL | frozenset({"service:b"}), True),  # the people agree, the services do not
])
def test_subject_divergence_is_per_kind_and_disjoint(a: frozenset[str], b: frozenset[str], fires: bool) -> None:
    assert subject_divergent(a, b) is fires and subject_divergent(b, a) is fires


def test_the_subject_predicate_is_the_fourth_and_runs_only_when_both_sides_were_read() -> None:
    text = "values the friendship"
    assert veto_reasons(MergeText(text, subjects=MEL), MergeText(text, subjects=CAR)) == ("subject",)
    assert veto_reasons(MergeText(text, subjects=MEL), MergeText(text)) == ()
    assert veto_reasons(MergeText("is not 5", subjects=MEL), MergeText("is 6", subjects=CAR)) == (
        "negation", "numeric", "subject")
    out = merge_candidates([_p("a", "b", keep_claim=text, drop_claim=text, keep_subjects=MEL, drop_subjects=CAR)])
    assert out.decisions == () and out.vetoed[0].reasons == ("subject",)


@pytest.mark.parametrize(("member", "carrier", "gaps"), [
    ("Checkout p95 latency is 300 ms.", "Checkout latency: p95 is 300 ms and p99 is 900 ms.", ()),  # says more
    ("Checkout timeout is 10 seconds.", "Checkout timeout is 30 seconds.", ("numeric",)),
    ("The pro plan costs more.", "The plan costs more.", ("variant",)),
    ("Migrations should not run in business hours.", "Migrations should run in business hours.", ("negation",)),
    ("Migrations run at night.", "Migrations do not run at night.", ("negation",)),
    # the clause that states the member decides, not a clause that shares a word with it
    ("The edge cache is enabled for checkout.",
     "The edge cache serves assets. The edge cache is not enabled for checkout.", ("negation",)),
    ("The edge cache is not enabled for search.", "The cache is enabled for checkout but not for search.", ()),
    ("The edge cache is enabled for checkout.", "The cache is enabled for checkout but not for search.", ()),
    ("The edge cache is enabled for checkout.",
     "The edge cache is enabled for checkout. The edge cache is not enabled for search.", ()),
])
def test_carry_gaps_read_the_member_against_what_carries_it(member: str, carrier: str,
                                                            gaps: tuple[str, ...]) -> None:
    assert carry_gaps(member, carrier) == gaps


def test_carry_gaps_read_subjects_only_when_both_sides_carry_them() -> None:
    assert carry_gaps(MergeText("a fact", subjects=MEL), MergeText("a fact", subjects=MEL | CAR)) == ()
    assert carry_gaps(MergeText("a fact", subjects=MEL), MergeText("a fact", subjects=CAR)) == ("subject",)
    assert carry_gaps(MergeText("a fact", subjects=MEL), MergeText("a fact")) == ()


def test_subject_identities_key_names_and_collapse_declared_aliases() -> None:
    from git_memhtml.domain.entities import alias_representatives, subject_identities

    aliases = alias_representatives([("caroline", "caroline m."), ("caro", "caroline")])
    values = ["person:Caroline M.", "Person: CARO ", "concept:friendship", "lang:py", "nocolon",
              "service:Checkout_API", "service:checkout-api"]
    assert subject_identities(values, aliases) == {"person:caro", "service:checkoutapi"}
    assert subject_identities(["person:Caroline M."]) == {"person:carolinem"}


@pytest.mark.parametrize(("a", "b", "reasons"), [
    ("The edge cache is enabled for checkout.", "The edge cache is not enabled for checkout.", ("negation",)),
    ("The edge cache is not enabled for checkout anymore.", "The edge cache is enabled for checkout.", ("negation",)),
    ("The checkout timeout is 10 seconds.", "The checkout timeout is 30 seconds.", ("numeric",)),
    ("The pro plan includes the dashboard.", "The plan includes the dashboard.", ("variant",)),
    # different facts, whatever their numbers or polarity
    ("Checkout p95 latency stays under 300 ms.", "Checkout latency is tracked on the payments dashboard.", ()),
    ("The checkout timeout is 10 seconds.", "Checkout retries wait 30 seconds after a timeout.", ()),
    ("The edge cache is not enabled for search.", "The edge cache serves checkout assets.", ()),
    ("The checkout timeout is 10 seconds.", "The checkout timeout is 10 seconds.", ()),  # one fact, one way
])
def test_contradiction_reasons_name_one_fact_stated_two_ways(a: str, b: str, reasons: tuple[str, ...]) -> None:
    from git_memhtml.domain.merge import contradiction_reasons

    assert contradiction_reasons(a, b) == reasons and contradiction_reasons(b, a) == reasons


# --- when and done: a weekday, a month or a part of the day is one value of a slot; a promise is not its completion
# (docs/veto.md §3 "When", "Done"; issue 27 round 2: the floor folded "on Monday" into "on Tuesday" and a promise into
# its completion, and a gullible model folded "Thursday morning" into "Tuesday afternoon") ---------------------------


@pytest.mark.parametrize(("a", "b", "reasons"), [
    ("The sync runs on Monday.", "The sync runs on Tuesday.", ("time",)),
    ("The on-call handoff of the platform team is on Monday.",
     "The on-call handoff of the platform team is on Tuesday.", ("time",)),
    ("The deploy window of checkout-api is Tuesday afternoon.",
     "The deploy window of checkout-api is Thursday morning.", ("time",)),
    ("The deploy window is Tuesday afternoon.", "The deploy window is Tuesday morning.", ("time",)),
    ("Jonah was on call for orders-db in January.", "Jonah was on call for orders-db in February.", ("time",)),
    ("Ana moved to Porto in May.", "Ana moved to Porto in June.", ("time",)),
    ("The sync runs on Monday.", "The sync runs on Monday morning.", ("time",)),  # a value one side lacks is lost
    ("The report is sent weekly.", "The report is sent monthly.", ("time",)),
    ("Audrey learned dog grooming in August.", "Audrey learned dog grooming.", ("time",)),
    ("The deploy window of checkout-api is Tuesday afternoon.",  # abbreviations and plurals are one spelling
     "The deploy window of checkout-api is Tue afternoons.", ()),
    ("Priya Raman runs the weekly incident review on Thursdays.",
     "Priya Raman chairs the weekly incident review every Thursday.", ()),
    ("The deploy window of checkout-api is Tuesday afternoon.",
     "The deploy window of checkout-api is Tuesday afternoon, after the release train.", ()),
    ("Ana may update the runbook.", "Ana can update the runbook.", ()),  # the modal verb is no month
    ("Caroline went to the support group today.", "Caroline went to the support group.", ()),  # deictic
    ("Caroline went to the support group yesterday.", "Caroline went to the support group today.", ()),
])
def test_time_divergence_reads_when_values_of_the_claims(a: str, b: str, reasons: tuple[str, ...]) -> None:
    assert veto_reasons(a, b) == reasons and veto_reasons(b, a) == reasons


@pytest.mark.parametrize(("a", "b", "reasons"), [
    ("Jonah Berg will update the orders-db failover runbook.", "Jonah Berg updated the orders-db failover runbook.",
     ("commitment",)),
    ("Melanie will book the camping site for the summer trip.",
     "Melanie booked the camping site for the summer trip.", ("commitment",)),
    ("Tomás will fix the flaky contract test.", "Tomás fixed the flaky contract test.", ("commitment",)),
    ("Ana is going to send the launch checklist.", "Ana sent the launch checklist.", ("commitment",)),
    ("Ana plans to rewrite the runbook.", "Ana rewrote the runbook.", ("commitment",)),
    ("I'll rotate the staging certificate.", "I rotated the staging certificate.", ("commitment",)),
    ("The runbook will be updated by Ana.", "The runbook was updated by Ana.", ("commitment",)),
    ("Caroline wants to adopt a child.", "Caroline adopted a child.", ("commitment",)),
    # restatements still fold: two promises, two completions, a habit, a future perfect, a modal
    ("Ana will update the runbook.", "Ana is going to update the runbook.", ()),
    ("Ana updated the runbook.", "The runbook was updated by Ana.", ()),
    ("Ana will update the runbook.", "Ana updates the runbook.", ()),
    ("Ana will update the runbook.", "Ana will have updated the runbook.", ()),
    ("Ana may update the runbook.", "Ana updated the runbook.", ()),
    ("Ana will read the runbook.", "Ana read the runbook.", ()),  # a past that is its base tells nothing
])
def test_commitment_divergence_keeps_a_promise_apart_from_its_completion(a: str, b: str,
                                                                         reasons: tuple[str, ...]) -> None:
    assert veto_reasons(a, b) == reasons and veto_reasons(b, a) == reasons


def test_time_and_commitment_read_the_claims_alone_and_fold_nothing_on_the_floor() -> None:
    # the article names the event day (an agent-shaped memory: "8 May 2023"): no say
    left = MergeText("Caroline went to the support group.", "Caroline went to the support group. 8 May 2023")
    right = MergeText("Caroline went to the support group.", "Caroline went to the support group. 3 June 2023")
    assert veto_reasons(left, right) == ()
    out = merge_candidates([
        _p("a", "b", keep_claim="The sync runs on Monday.", drop_claim="The sync runs on Tuesday.", keep_text=""),
        _p("c", "d", keep_claim="Ana will update the runbook.", drop_claim="Ana updated the runbook.", drop_text=""),
    ])
    assert out.decisions == ()
    assert [v.reasons for v in out.vetoed] == [("time",), ("commitment",)]


@pytest.mark.parametrize(("member", "carrier", "gaps"), [
    ("The sync runs on Monday.", "The sync runs every week.", ("time",)),
    ("The sync runs on Monday.", "The sync runs on Tuesday.", ("time",)),
    ("The sync runs on Monday.", "The sync runs on Monday and Thursday.", ()),  # says more
    ("Ana will update the runbook.", "Ana updated the runbook.", ("commitment",)),
    ("Ana updated the runbook.", "Ana will update the runbook.", ("commitment",)),
    ("Ana updated the runbook.", "Ana promised to update the runbook and updated it.", ()),
    ("Ana will update the runbook.", "Ana promised to update the runbook and updated it.", ()),
])
def test_carry_gaps_read_times_and_promises(member: str, carrier: str, gaps: tuple[str, ...]) -> None:
    assert carry_gaps(member, carrier) == gaps


@pytest.mark.parametrize(("a", "b", "reasons"), [
    ("The on-call handoff is on Monday.", "The on-call handoff is on Tuesday.", ("time",)),
    ("The deploy window is Tuesday afternoon.", "The deploy window is Thursday morning.", ("time",)),
    ("The on-call handoff is on Monday.", "The on-call handoff is on Monday morning.", ()),  # refines, no clash
    ("Ana will update the runbook.", "Ana updated the runbook.", ()),  # two true facts, not a contradiction
])
def test_contradiction_reasons_read_clashing_times(a: str, b: str, reasons: tuple[str, ...]) -> None:
    from git_memhtml.domain.merge import contradiction_reasons

    assert contradiction_reasons(a, b) == reasons and contradiction_reasons(b, a) == reasons


@pytest.mark.parametrize(("a", "b", "reasons"), [
    ("The on-call handoff is on Monday.", "The on-call handoff is on Tuesday.", ("time",)),
    ("The deploy window is Tuesday afternoon.", "The deploy window is Thursday morning.", ("time",)),
    ("Caroline joined a running club in January.", "Caroline finished her first half marathon.", ()),
    ("The sync runs on Monday.", "The sync runs on Monday morning.", ()),
    ("Ana will update the runbook.", "Ana updated the runbook.", ()),  # the promise leads to its completion
    ("The cache is enabled.", "The cache is not enabled.", ("negation",)),
])
def test_an_edge_is_refused_by_clashing_times_and_never_by_a_promise(a: str, b: str,
                                                                     reasons: tuple[str, ...]) -> None:
    from git_memhtml.domain.merge import edge_veto_reasons

    assert edge_veto_reasons(a, b) == reasons and edge_veto_reasons(b, a) == reasons


# --- leading names (issue 27: a new user's night folded two facts written without a subject entity) ---------------

@pytest.mark.parametrize(("a", "b"), [
    ("The checkout-api calls the payments-api.", "The checkout-api is called by the payments-api."),
    ("Mei Lin is mentored by Omar Haddad.", "Omar Haddad is mentored by Mei Lin."),
    ("The inventory-api is queried by the pricing-api.", "The pricing-api is queried by the inventory-api."),
    ("Melanie values friendship with Caroline.", "Caroline values friendship with Melanie."),
    ("The checkout-api calls the payments-api.", "The payments-api calls the checkout-api."),
    ("Melanie loves hiking in the hills.", "Caroline loves hiking in the hills."),
    ("cache-node-3 holds the session keys.", "cache-node-8 holds the session keys."),
])
def test_two_claims_that_lead_with_different_names_never_fold(a: str, b: str) -> None:
    assert claim_names.leading_name_divergent(a, b) and claim_names.leading_name_divergent(b, a)
    assert merge.VETO_LEADING_NAME in merge.veto_reasons(a, b)
    assert merge.VETO_LEADING_NAME not in merge.edge_veto_reasons(a, b)  # an edge keeps both texts


@pytest.mark.parametrize(("a", "b"), [
    ("Caroline expresses appreciation for her friendship with Melanie.", "Caroline is grateful to Melanie."),
    ("Yesterday Caroline went to a support group.", "Caroline went to a support group yesterday."),
    ("The staging TLS certificate expires in May.", "Staging TLS cert expires in May."),
    ("Deploys of checkout-api happen on Tuesdays.", "checkout-api deploys on Tuesdays."),
    ("Priya Raman rotated the staging TLS certificate.", "The staging TLS certificate was rotated by Priya Raman."),
    ("The cache is warmed at startup.", "The cache gets warmed when the service starts."),
    ("Mei Lin maintains the web-storefront design system.",
     "The web-storefront design system is maintained by Mei Lin."),
    ("Priya Raman runs the weekly incident review on Thursdays.",
     "The weekly incident review on Thursdays is run by Priya Raman."),
    ("The payments-api is called by the checkout-api.", "The checkout-api calls the payments-api."),
])
def test_claims_that_lead_with_one_name_or_name_nothing_are_not_kept_apart_by_it(a: str, b: str) -> None:
    assert not claim_names.leading_name_divergent(a, b)


def test_named_things_are_names_and_system_names_not_sentence_starters_months_or_acronyms() -> None:
    assert claim_names.named_things("On Monday Dana Okafor moved checkout-api's TLS to AWS in May.") == [
        "dana", "okafor", "checkout-api"]
    assert claim_names.named_things("Staging is slow.", "staging is slow") == []
    assert claim_names.named_things("Staging is slow.") == ["staging"]  # alone, a capitalised first word may be a name


@pytest.mark.parametrize(("a", "b", "apart"), [
    ("The cache calls the database on every miss.", "The database calls the cache on every miss.", True),
    ("the billing worker sends invoices to the ledger service.",
     "the ledger service sends invoices to the billing worker.", True),
    ("The cache calls the database on every miss.", "The cache calls the database on every single miss.", False),
    ("The cache calls the database.", "The cache calls the database.", False),
    ("Cache calls database.", "Database calls cache.", True),
    ("Cache database.", "Database cache.", False),  # two parts trading places with nothing between: a paraphrase
    ("Dana Okafor prefers status updates as a short written summary.",
     "Dana Okafor prefers a short written summary for status updates.", False),
    ("search-indexer pauses indexing while a catalogue import is running.",
     "While a catalogue import is running, search-indexer pauses indexing.", False),
    ("Ana updated the runbook.", "The runbook was updated by Ana.", False),  # an active and a passive
])
def test_the_same_words_in_another_order_never_fold(a: str, b: str, apart: bool) -> None:
    """A new user's night (issue 27): with no name in either claim, a relation and its reverse folded."""
    assert merge.word_order_divergent(a, b) is apart
    assert (merge.VETO_WORD_ORDER in merge.veto_reasons(a, b)) is apart
    assert merge.VETO_WORD_ORDER not in merge.edge_veto_reasons(a, b)
