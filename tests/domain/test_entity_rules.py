"""The entity pairwise rule, complete linkage and matching keys (issue 8 item 4): no false merges, by class.

Every merged pair in a resolved name set must pass the pairwise rule on its own; names differing in a number or a
version token, a variant qualifier, or one letter of a short token are different entities.
"""

from __future__ import annotations

from itertools import combinations, pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_memhtml.domain.entities import (
    DISTINCT,
    MERGE,
    REVIEW,
    complete_linkage,
    display_name,
    entity_key,
    may_merge,
    name_key,
    pair_verdict,
    pair_verdicts,
    resolve_names,
)
from git_memhtml.domain.merge import identity_veto_reasons, numeric_token_divergent, variant_qualifier_divergent

# (entity type, a, b, expected verdict)
PAIRS = [
    # a number or a version token: different entities by rule (the memory-merge numeric veto)
    ("service", "payments-v1", "payments-v2", DISTINCT),
    ("host", "node-1", "node-10", DISTINCT),
    ("tool", "python3.11", "python3.12", DISTINCT),
    ("service", "svc12", "svc123", DISTINCT),
    ("model", "gpt-4", "gpt-4o", DISTINCT),
    ("host", "node-1-0", "node-10", DISTINCT),  # same letters and digits, different numbers
    # a variant qualifier (the memory-merge variant veto)
    ("product", "checkout-api", "checkout-api-beta", DISTINCT),
    ("product", "checkout-service-pro", "checkout-service", DISTINCT),
    # one letter of a short name is not evidence
    ("person", "anna", "hanna", REVIEW),
    ("service", "anna", "hanna", REVIEW),
    ("service", "checkout-api", "checkout-app", REVIEW),
    ("person", "andrea", "andreas", REVIEW),
    # a person's spelling never merges by edit distance, however long
    ("person", "alexander", "alexandra", REVIEW),
    # separators, spacing and case are the same name
    ("service", "checkout-api", "checkout api", MERGE),
    ("person", "laith al-saadoon", "laith al saadoon", MERGE),
    # an edit inside two long tokens may merge
    ("tool", "kubernetes", "kubernets", MERGE),
    # the character band
    ("tool", "grafana-prod", "grafana-dev", REVIEW),
]


@pytest.mark.parametrize(("etype", "a", "b", "expected"), PAIRS)
def test_pair_verdict_by_class(etype: str, a: str, b: str, expected: str) -> None:
    verdict = pair_verdict(a, b, etype)
    assert verdict is not None and verdict.verdict == expected, verdict
    assert pair_verdict(b, a, etype) == verdict  # symmetric


@pytest.mark.parametrize(("etype", "a", "b", "expected"), [p for p in PAIRS if p[3] != MERGE])
def test_no_listed_pair_merges_when_resolved(etype: str, a: str, b: str, expected: str) -> None:
    counts = {a: 5, b: 1}
    survivors = resolve_names(counts, pair_verdicts(counts, etype))
    assert survivors[a] == a and survivors[b] == b


def test_unrelated_names_have_no_verdict() -> None:
    assert pair_verdict("checkout-api", "payments-api") is None
    assert pair_verdict("same", "same") is None


def test_identity_veto_reuses_the_memory_merge_predicates() -> None:
    for a, b in [("payments-v1", "payments-v2"), ("node-1", "node-10"), ("api", "api beta")]:
        reasons = identity_veto_reasons(a, b)
        assert reasons
        assert ("numeric" in reasons) == numeric_token_divergent(a, b)
        assert ("variant" in reasons) == variant_qualifier_divergent(a, b)
    assert identity_veto_reasons("checkout-api", "checkout api") == ()
    assert identity_veto_reasons("not-a-service", "a-service") == ()  # names carry no polarity


def test_four_hundred_numbered_services_stay_four_hundred() -> None:
    counts = {f"svc{i}": 25 for i in range(400)}
    survivors = resolve_names(counts, pair_verdicts(counts, "service"))
    assert all(survivors[name] == name for name in counts)


CHAIN = ["observability", "observablity", "observbilty", "obsrvbilty", "obsrvblty"]
"""Each neighbour passes the rule, the ends do not (0.818 < 0.85)."""


def test_a_chain_does_not_grow_a_cluster_past_its_pairs() -> None:
    assert all(may_merge(x, y) for x, y in pairwise(CHAIN))
    assert not may_merge(CHAIN[0], CHAIN[-1])
    counts = dict.fromkeys(CHAIN, 1)
    survivors = resolve_names(counts, pair_verdicts(counts))
    assert len(set(survivors.values())) > 1
    _assert_every_merged_pair_passes(survivors)


def test_complete_linkage_joins_only_when_every_cross_pair_passes() -> None:
    allowed = {("a", "b"), ("b", "c"), ("c", "d"), ("a", "c")}

    def passes(x: str, y: str) -> bool:
        return (min(x, y), max(x, y)) in allowed

    clusters = complete_linkage("abcd", [("a", "b", 0.9), ("b", "c", 0.95), ("c", "d", 0.99)], passes)
    # c-d first (0.99), then b-c would need b-d: refused; a-b joins a and b
    assert clusters == [("a", "b"), ("c", "d")]


def test_alias_pairs_join_whole_clusters() -> None:
    counts = {"laith al-saadoon": 3, "laith al saadoon": 1, "laith": 1}
    survivors = resolve_names(counts, pair_verdicts(counts, "person"), [("laith", "laith al-saadoon")])
    assert set(survivors.values()) == {"laith al-saadoon"}


def test_keys_and_display_forms() -> None:
    assert name_key("  DGIA ") == name_key("dgia") == "dgia"
    assert name_key("Cafe\u0301") == name_key("CAFÉ") == "café"  # NFC on both sides of the case fold
    assert name_key("Straße") == name_key("STRASSE")  # full case folding, not lower()
    assert display_name("  Anna   Smith ") == "Anna Smith"  # case kept
    assert entity_key("org:DGIA") == entity_key("ORG: dgia") == entity_key("org:dgia") == "org:dgia"
    assert entity_key("noColon") == "unknown:nocolon"


# -- properties -----------------------------------------------------------------------------------------------

_STEMS = st.sampled_from(["node", "svc", "payments", "python", "kafka", "api", "anna", "observability", "db"])
_SEPARATORS = st.sampled_from(["", "-", " ", "_", "."])


@st.composite
def _versioned(draw: st.DrawFn) -> str:
    stem = draw(_STEMS)
    sep = draw(_SEPARATORS)
    version = draw(st.sampled_from(["", "v"])) + ".".join(
        str(draw(st.integers(0, 12))) for _ in range(draw(st.integers(1, 3)))
    )
    return f"{stem}{sep}{version}"


@st.composite
def _near_miss(draw: st.DrawFn) -> str:
    """A stem with one letter inserted, dropped or replaced (near-miss short names and long-token typos)."""
    stem = draw(st.sampled_from(["anna", "hanna", "jon", "mark", "andrea", "kubernetes", "observability", "grafana"]))
    i = draw(st.integers(0, len(stem) - 1))
    letter = draw(st.sampled_from("aehnosy"))
    edit = draw(st.sampled_from(["keep", "insert", "drop", "replace"]))
    if edit == "insert":
        return stem[:i] + letter + stem[i:]
    if edit == "drop" and len(stem) > 2:
        return stem[:i] + stem[i + 1 :]
    if edit == "replace":
        return stem[:i] + letter + stem[i + 1 :]
    return stem


@st.composite
def _chain(draw: st.DrawFn) -> list[str]:
    """Successive one-letter deletions from a long name: neighbours pass, far ends do not."""
    name = draw(st.sampled_from(["observability", "authentication", "infrastructure", "kubernetesoperator"]))
    out = [name]
    for _ in range(draw(st.integers(2, 6))):
        i = draw(st.integers(0, len(name) - 1))
        name = name[:i] + name[i + 1 :]
        out.append(name)
    return out


_NAMES = st.one_of(_versioned(), _near_miss(), st.sampled_from(["checkout-api", "checkout api", "Checkout API"]))


def _assert_every_merged_pair_passes(survivors: dict[str, str], etype: str = "") -> None:
    clusters: dict[str, list[str]] = {}
    for name, root in survivors.items():
        clusters.setdefault(root, []).append(name)
    for members in clusters.values():
        for x, y in combinations(members, 2):
            assert may_merge(x, y, etype), (x, y, sorted(members))


@settings(max_examples=200, deadline=None)
@given(st.lists(_NAMES, min_size=2, max_size=25), st.sampled_from(["", "person", "service"]))
def test_property_no_merged_pair_fails_the_pairwise_rule(names: list[str], etype: str) -> None:
    counts = {name_key(n): i + 1 for i, n in enumerate(names)}
    survivors = resolve_names(counts, pair_verdicts(counts, etype))
    _assert_every_merged_pair_passes(survivors, etype)


@settings(max_examples=100, deadline=None)
@given(st.lists(_chain(), min_size=1, max_size=3))
def test_property_chains_stay_within_the_pairwise_rule(chains: list[list[str]]) -> None:
    counts = {n: 1 for chain in chains for n in chain}
    _assert_every_merged_pair_passes(resolve_names(counts, pair_verdicts(counts)))


@settings(max_examples=200, deadline=None)
@given(_versioned(), _versioned())
def test_property_names_differing_in_a_number_never_merge(a: str, b: str) -> None:
    if numeric_token_divergent(a, b):
        assert not may_merge(name_key(a), name_key(b))
