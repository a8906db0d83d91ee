"""Property: whatever raw spellings a corpus holds, ``resolve_type`` never gives two names one final form unless
their keys are equal or pass the pairwise rule (issue 8 item 4), and every final form is a display spelling that
some claimant wrote."""

from __future__ import annotations

from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from git_memhtml.domain.entities import display_name, may_merge, name_key
from git_memhtml.sleep.phases.entity_resolution import resolve_type

_BASES = ["node-1", "node-10", "node-11", "payments-v1", "payments-v2", "python3.11", "python3.12", "anna", "hanna",
          "checkout-api", "checkout api", "checkout-app", "kubernetes", "kubernets", "observability",
          "observablity", "observbilty", "obsrvblty", "svc1", "svc12", "svc123", "DGIA", "dgia"]


@st.composite
def _spelling(draw: st.DrawFn) -> str:
    base = draw(st.sampled_from(_BASES))
    cased = "".join(c.upper() if draw(st.booleans()) else c for c in base)
    return draw(st.sampled_from(["", " "])) + cased + draw(st.sampled_from(["", "  "]))


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(_spelling(), st.integers(1, 9), min_size=2, max_size=20),
       st.sampled_from(["person", "service", "host"]))
def test_property_merged_raw_names_pass_the_rule(raw_counts: dict[str, int], etype: str) -> None:
    res = resolve_type(etype, raw_counts)
    shown = {display_name(raw) for raw in raw_counts}
    assert set(res.final.values()) <= shown
    for x, y in combinations(raw_counts, 2):
        if res.final[x] == res.final[y]:
            assert may_merge(name_key(x), name_key(y), etype), (x, y, res.final[x])
        if name_key(x) == name_key(y):
            assert res.final[x] == res.final[y]  # one key, one spelling
