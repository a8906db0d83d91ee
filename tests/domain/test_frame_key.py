"""Frame key per docs/veto.md §3 "Frame key" and docs/store.md §5.2."""

from __future__ import annotations

import pytest

from git_memhtml.domain.frame import frame_key_of


@pytest.mark.parametrize(
    ("gist", "key"),
    [
        ("The deploy window of checkout-api is 10 minutes.", "the deploy window of checkout-api is"),
        ("The deploy window of checkout-api is 30 minutes", "the deploy window of checkout-api is"),
        # greedy: the frame runs to the LAST linking word
        ("the owner of the queue in staging is Priya Raman.", "the owner of the queue in staging is"),
        # whitespace is collapsed and trimmed first
        ("  The deploy\n window\tof checkout-api  is 10 minutes ", "the deploy window of checkout-api is"),
        # value of exactly 6 tokens is allowed
        ("the preferred editor of sanju is one two three four five six", "the preferred editor of sanju is"),
        # frame of exactly 3 tokens
        ("sanju moved to berlin", "sanju moved to"),
    ],
)
def test_frame_keys(gist: str, key: str) -> None:
    assert frame_key_of(gist) == key


@pytest.mark.parametrize(
    "gist",
    [
        "Sanju is tall",  # frame has 2 tokens
        "Priya owns the roadmap",  # no linking word
        "the preferred editor of sanju is one two three four five six seven",  # value of 7 tokens
        "The deploy window IS ten minutes",  # linking words are case-sensitive
        "the deploy window is",  # nothing after the linking word
        "the deploy windowis ten minutes",  # whole words only
        "",
    ],
)
def test_no_frame(gist: str) -> None:
    assert frame_key_of(gist) is None


def test_competing_values_share_a_key_but_different_slots_do_not() -> None:
    a = frame_key_of("The retry budget of payments-gateway is 3 attempts.")
    b = frame_key_of("The retry budget of payments-gateway is 5 attempts.")
    c = frame_key_of("The retry budget of checkout-api is 3 attempts.")
    assert a == b and a != c
