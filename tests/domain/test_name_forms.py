"""The one rule a model's entity merge and the run gate's rename check both read (issue 27 item 3):
``domain.entities.same_name_forms`` and ``name_merge_refusal`` (docs/entities.md §6 "Model stage")."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_memhtml.domain.entities import (
    CENTROID_AGREEMENT,
    REASON_CENTROIDS_DISAGREE,
    REASON_NO_CENTROID,
    REASON_NOT_ONE_NAME,
    REASON_SHORT_NAME,
    name_key,
    name_merge_refusal,
    role_word_form,
    same_name_forms,
)

FORMS = [
    ("a given name and the full name", "Laith", "Laith Al-Saadoon", True),
    ("a given name and the name with an initial", "Caroline", "Caroline M.", True),
    ("an initial and the word it abbreviates", "Caroline M.", "Caroline Miller", True),
    ("an initial for the given name", "C. Miller", "Caroline Miller", True),
    ("two given names and one", "Mary", "Mary Ann Smith", True),
    ("two different people", "Dana Okafor", "Priya Raman", False),
    ("two initials", "Caroline M.", "Caroline N.", False),
    ("an initial that is not the word's", "Caroline M.", "Caroline Ng", False),
    ("two family names", "Caroline Miller", "Caroline Ng", False),
    ("a family name alone is not a leading part", "Okafor", "Dana Okafor", False),
    ("a nickname", "Bob", "Robert", False),
    ("an initial alone", "M.", "Miller", False),
    ("initials on both sides", "C. Miller", "Caroline M.", False),
    ("the same letters are one spelling, not two forms", "Caroline M", "caroline-m", False),
    ("a title is not a leading part of the name", "Dr. Caroline", "Caroline", False),
]


@pytest.mark.parametrize(("label", "a", "b", "expected"), FORMS, ids=[f[0] for f in FORMS])
def test_same_name_forms_of_persons(label: str, a: str, b: str, expected: bool) -> None:
    ka, kb = name_key(a), name_key(b)
    assert same_name_forms(ka, kb, "person") is expected, label
    assert same_name_forms(kb, ka, "person") is expected, label


@pytest.mark.parametrize(("a", "b"), [("checkout", "checkout-api"), ("kafka", "kafka-connect"),
                                      ("api", "api-gateway"), ("Acme", "Acme Corp")])
def test_the_leading_word_of_a_thing_is_no_shorter_form(a: str, b: str) -> None:
    for etype in ("service", "tool", "project", "org"):
        assert not same_name_forms(name_key(a), name_key(b), etype)


ROLE_FORMS = [
    ("a worker", "notifications", "notifications-worker", True),
    ("a service", "billing", "billing-service", True),
    ("svc after a two-word name", "checkout-api", "checkout-api-svc", True),
    ("a server", "search", "search_server", True),
    ("a daemon", "Sync Agent", "sync-agent-daemon", True),
    ("kafka-connect is another thing", "kafka", "kafka-connect", False),
    ("an exporter is another thing", "postgres", "postgres-exporter", False),
    ("an api is no role word", "checkout", "checkout-api", False),
    ("an indexer is no role word", "search", "search-indexer", False),
    ("two role words are two processes", "notifications-worker", "notifications-server", False),
    ("a role word and a number", "notifications", "notifications-worker-2", False),
    ("two trailing words", "notifications", "notifications-email-worker", False),
    ("a leading role word", "notifications", "worker-notifications", False),
    ("no name proper", "service", "service-worker", False),
    ("two services the prompt calls distinct", "checkout-api", "payments-api", False),
]


@pytest.mark.parametrize(("label", "a", "b", "expected"), ROLE_FORMS, ids=[f[0] for f in ROLE_FORMS])
def test_a_service_and_its_role_word_are_one_name(label: str, a: str, b: str, expected: bool) -> None:
    ka, kb = name_key(a), name_key(b)
    assert same_name_forms(ka, kb, "service") is expected, label
    assert same_name_forms(kb, ka, "service") is expected, label
    assert role_word_form(ka, kb, "service") is role_word_form(kb, ka, "service") is expected, label


@pytest.mark.parametrize("etype", ["project", "tool", "org", "team"])
def test_a_role_word_makes_one_name_of_a_service_only(etype: str) -> None:
    assert not same_name_forms(name_key("atlas"), name_key("atlas-server"), etype)
    assert name_merge_refusal(name_key("atlas"), name_key("atlas-server"), etype, 0.99) == REASON_NOT_ONE_NAME


AGREE = CENTROID_AGREEMENT + 0.05
DISAGREE = CENTROID_AGREEMENT - 0.05

REFUSALS = [
    ("one name in two forms whose memories agree", "person", "Caroline", "Caroline M.", AGREE, None),
    ("the full name", "person", "Laith", "Laith Al-Saadoon", AGREE, None),
    ("at the threshold itself", "person", "Laith", "Laith Al-Saadoon", CENTROID_AGREEMENT, None),
    ("one name in two forms whose memories disagree", "person", "Caroline", "Caroline M.", DISAGREE,
     REASON_CENTROIDS_DISAGREE),
    ("one name in two forms, no centroid", "person", "Caroline", "Caroline M.", None, REASON_NO_CENTROID),
    ("two different people, however alike", "person", "Dana Okafor", "Priya Raman", 0.99, REASON_NOT_ONE_NAME),
    ("every person is Priya Raman", "person", "Tomás Oliveira", "Priya Raman", 0.99, REASON_NOT_ONE_NAME),
    ("two services the prompt calls distinct", "service", "checkout-api", "payments-api", 0.99, REASON_NOT_ONE_NAME),
    ("a band pair of two service words", "service", "order-router", "order-routing", 0.99, REASON_NOT_ONE_NAME),
    ("separators only are one name", "service", "checkout_api", "checkout-api", None, None),
    ("a service and its worker whose memories agree", "service", "notifications", "notifications-worker", AGREE,
     None),
    ("a service and its worker whose memories disagree", "service", "notifications", "notifications-worker",
     DISAGREE, REASON_CENTROIDS_DISAGREE),
    ("a service and its worker, no centroid", "service", "notifications", "notifications-worker", None,
     REASON_NO_CENTROID),
    ("kafka and kafka-connect, however alike", "service", "kafka", "kafka-connect", 0.99, REASON_NOT_ONE_NAME),
    ("a numbered worker", "service", "notifications", "notifications-worker-2", 0.99, "numeric"),
    ("one digit apart", "service", "svc-amber-1", "svc-amber-2", 0.99, "numeric"),
    ("a variant", "service", "checkout-api", "checkout-api-beta", 0.99, "variant"),
    ("one letter apart in a short name", "person", "Anna", "Hanna", 0.99, REASON_SHORT_NAME),
    ("two initials one letter apart", "person", "Caroline M.", "Caroline N.", 0.99, REASON_SHORT_NAME),
]


@pytest.mark.parametrize(("label", "etype", "a", "b", "cosine", "expected"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_name_merge_refusal(label: str, etype: str, a: str, b: str, cosine: float | None,
                            expected: str | None) -> None:
    ka, kb = name_key(a), name_key(b)
    assert name_merge_refusal(ka, kb, etype, cosine) == expected, label
    assert name_merge_refusal(kb, ka, etype, cosine) == expected, label


_WORDS = st.sampled_from(["dana", "okafor", "priya", "raman", "caroline", "miller", "laith", "al", "saadoon",
                          "mei", "lin", "jonah", "berg"])


@settings(deadline=None)  # no wall-clock bound in a test (tests/test_no_wall_clock_asserts.py)
@given(st.lists(_WORDS, min_size=1, max_size=3), st.lists(_WORDS, min_size=1, max_size=3))
def test_property_names_whose_first_words_differ_are_never_one_name(a: list[str], b: list[str]) -> None:
    """No cosine makes two names one when neither starts like the other (the gullible model's merges)."""
    if a[0] == b[0]:
        return
    assert name_merge_refusal(" ".join(a), " ".join(b), "person", 1.0) is not None
