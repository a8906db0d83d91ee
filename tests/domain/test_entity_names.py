"""Entity name normalisation, LCS ratio and the survivor union-find (docs/entities.md §6; docs/entities.md §6)."""

from __future__ import annotations

from git_memhtml.domain.entities import (
    AUTO_MERGE_RATIO,
    REVIEW_RATIO,
    UnionFind,
    lcs_length,
    lcs_ratio,
    merge_names,
    name_key,
)


def test_constants() -> None:
    assert (AUTO_MERGE_RATIO, REVIEW_RATIO) == (0.85, 0.75)


def test_name_key_is_the_normalised_name() -> None:  # docs/entities.md §6 step 2
    assert name_key("  Checkout   API\t") == "checkout api"
    assert name_key("Cafe\u0301") == "caf\u00e9"  # NFC composes
    assert name_key("Priya\n Raman") == "priya raman"


def test_lcs_examples() -> None:
    assert lcs_length("checkout-api", "checkout api") == 11
    assert round(lcs_ratio("checkout-api", "checkout api"), 2) == 0.92
    assert lcs_ratio("checkout-api", "checkout api") >= AUTO_MERGE_RATIO
    # measured on the live corpus (docs/entities.md §6): a short name and its full form stay below the review band
    assert round(lcs_ratio("laith", "laith al-saadoon"), 3) == 0.476
    assert lcs_ratio("sanju", "sanju kumar") == 0.625
    assert lcs_ratio("sanju", "sanju kumar") < REVIEW_RATIO
    # shared suffixes are not identity: 2*6/24 under this formula
    assert lcs_ratio("checkout-api", "payments-api") == 0.5


def test_lcs_edges() -> None:
    assert lcs_ratio("same", "same") == 1.0
    assert lcs_ratio("", "x") == 0.0 and lcs_ratio("", "") == 0.0
    assert lcs_ratio("ab", "ba") == 0.5


def test_union_find_higher_count_wins() -> None:
    forest = UnionFind({"checkout api": 2, "checkout-api": 7})
    assert forest.union("checkout api", "checkout-api") == "checkout-api"
    assert forest.find("checkout api") == "checkout-api"


def test_union_find_ties_go_to_smaller_name() -> None:
    forest = UnionFind({"zeta": 3, "alpha": 3})
    assert forest.union("zeta", "alpha") == "alpha"


def test_union_find_survivor_is_the_most_used_name_across_chains() -> None:
    forest = UnionFind({"a-svc": 1, "b-svc": 1, "c-svc": 5})
    forest.union("a-svc", "b-svc")  # tie -> a-svc
    assert forest.union("b-svc", "c-svc") == "c-svc"
    assert forest.mapping() == {"a-svc": "c-svc", "b-svc": "c-svc", "c-svc": "c-svc"}


def test_merge_names_is_independent_of_pair_order() -> None:
    counts = {"laith": 4, "laith al-saadoon": 4, "l. al-saadoon": 1, "other": 2}
    pairs = [("l. al-saadoon", "laith al-saadoon"), ("laith al-saadoon", "laith")]
    expected = {
        "l. al-saadoon": "laith", "laith": "laith", "laith al-saadoon": "laith", "other": "other",
    }
    assert merge_names(counts, pairs) == expected
    assert merge_names(counts, list(reversed([(b, a) for a, b in pairs]))) == expected
