"""Controls are the merge veto read backwards; each must satisfy ITS OWN family's predicate (docs/gate.md §8.2)."""

from __future__ import annotations

from git_memhtml.document.parse import parse_memory
from git_memhtml.domain.merge import negation_divergent, numeric_token_divergent, variant_qualifier_divergent
from git_memhtml.eval.controls import (
    NEGATION,
    NUMERIC,
    VARIANT,
    build_controls,
    is_valid_control,
    negation_transform,
    numeric_transform,
    probe_query,
    qualifier_for,
    topic_of_path,
    variant_transform,
    whole_text,
)
from git_memhtml.eval.corpus import build_corpus

PREDICATE = {NEGATION: negation_divergent, NUMERIC: numeric_token_divergent, VARIANT: variant_qualifier_divergent}


def test_negation_inserts_after_first_anchor_in_list_order_else_prefixes() -> None:
    assert negation_transform("Ops should drain it and it is done.") == "Ops should not drain it and it is done."
    # ' is ' comes before ' was ' in the text, but ' was ' comes first in the anchor list
    assert negation_transform("It is what it was then.") == "It is what it was not then."
    assert negation_transform("Caches warm up quickly.") == "It is not true that caches warm up quickly."


def test_numeric_adds_ten_below_one_hundred_else_doubles() -> None:
    assert numeric_transform("Run 7 batches of 40.") == "Run 17 batches of 40."
    assert numeric_transform("Keep 250 rows.") == "Keep 500 rows."
    assert numeric_transform("Wait 2.5 hours.") == "Wait 5 hours."
    assert numeric_transform("No number here.") is None


def test_variant_inserts_after_anchor_or_appends() -> None:
    path = "areas/checkout-api/x.html"
    q = qualifier_for(path)
    assert q == ("pro", "beta", "legacy", "experimental", "preview")[sum(map(ord, path)) % 5]
    assert variant_transform("Route via the target group now.", path=path) == f"Route via the target group {q} now."
    assert variant_transform("Route it now.", path=path) == f"Route it now, on the {q} variant only."
    assert topic_of_path("resources/search-index/a.html") is not None
    assert topic_of_path("resources/elsewhere/search-index.html") is None


def test_a_control_failing_its_own_predicate_is_rejected() -> None:
    # The target already negates, so the negation twin is not divergent: rejected even though the variant
    # predicate would fire on the same pair (the disjunction is not accepted).
    target = "The shard is not merged."
    twin = "The shard is not not merged pro."
    assert variant_qualifier_divergent(target, twin)
    assert not is_valid_control(NEGATION, target_text=target, control_text=twin)
    controls = build_controls(target, ["Dashboards track it."], path="resources/search-index/a.html")
    assert [c.family for c in controls] == [VARIANT]
    # A target already carrying the qualifier gets no variant control.
    path = "resources/search-index/a.html"
    q = qualifier_for(path)
    assert VARIANT not in {c.family for c in build_controls(f"The {q} shard holds.", ["Body."], path=path)}
    # A number in the body that equals the restated one still diverges as a set, so this one stays valid,
    # while a numeric twin of a number-free claim does not exist.
    assert NUMERIC not in {c.family for c in build_controls("The shard holds.", ["Body."], path=path)}


def test_every_corpus_control_satisfies_its_own_family_predicate() -> None:
    corpus = build_corpus()
    assert len(corpus.probes) == 36
    for probe in corpus.probes:
        target = parse_memory(corpus.files[probe.target_path])
        assert target.memory_type in ("procedural", "semantic")
        assert not probe.target_path.startswith(("archive/", "resources/people/"))
        assert probe.controls
        for control in probe.controls:
            doc = parse_memory(corpus.files[control.path])
            assert control.path.rsplit("/", 1)[0] == probe.target_path.rsplit("/", 1)[0]
            marker = {NEGATION: "Refuted reading", NUMERIC: "Restated quantity", VARIANT: "Qualified variant"}
            assert doc.title == f"{marker[control.family]} — {target.title}"
            assert doc.gist == control.claim
            assert doc.links == ()
            assert doc.updated[:10] > target.updated[:10]
            # same body: the texts differ only in the claim
            assert doc.body_text.replace(doc.gist, "") == target.body_text.replace(target.gist, "")
            assert PREDICATE[control.family](target.body_text, doc.body_text)


def test_query_is_first_twelve_non_stopword_tokens() -> None:
    claim = "The metrics-agent collector is restarted through the nightly scrape pool, one two three four five six."
    assert probe_query(claim) == "metrics agent collector restarted through nightly scrape pool one two three four"
    assert probe_query("Ünïcode wörds_data 42!") == "ünïcode wörds data 42"


def test_whole_text_joins_claim_and_paragraphs() -> None:
    assert whole_text("A.", ["B.", "C."]) == "A. B. C."
