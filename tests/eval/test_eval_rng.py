"""mulberry32 must reproduce the JavaScript original bit for bit (docs/gate.md §8.1)."""

from __future__ import annotations

from git_memhtml.eval.rng import Mulberry32


def test_first_output_of_seed_zero_by_hand() -> None:
    # state = 0 + 0x6D2B79F5 = 0x6D2B79F5
    # t = imul(a ^ a>>>15, 1|a):  a>>>15 = 0xDA56, a ^ that = 0x6D2BA3A3, times 0x6D2B79F5 mod 2**32 = 0xFE7CA5FF
    # t = (t + imul(t ^ t>>>7, 61|t)) ^ t = 0x4435A4B4;  (t ^ t>>>14) >>> 0 = 0x4434B462 = 1144304738
    a = 0x6D2B79F5
    t = ((a ^ (a >> 15)) * (1 | a)) & 0xFFFFFFFF
    t = (((t + ((t ^ (t >> 7)) * (61 | t))) & 0xFFFFFFFF) ^ t) & 0xFFFFFFFF
    assert t == 0x4435A4B4
    expected = (t ^ (t >> 14)) & 0xFFFFFFFF
    assert expected == 0x4434B462 == 1144304738
    assert Mulberry32(0).next_uint32() == expected
    assert Mulberry32(0).next() == expected / 2**32


def test_matches_javascript_reference_values() -> None:
    # Values printed by the JavaScript reference implementation (node, Math.imul).
    rng = Mulberry32(0)
    assert [rng() for _ in range(3)] == [0.26642920868471265, 0.0003297457005828619, 0.2232720274478197]
    rng = Mulberry32(20260802)
    assert [rng() for _ in range(3)] == [0.3173061306588352, 0.12828454095870256, 0.475802437402308]
    rng = Mulberry32(20260802 ^ 0x5F3759DF)
    assert [rng() for _ in range(3)] == [0.5011588358320296, 0.33006264362484217, 0.4496976851951331]


def test_negative_and_wide_seeds_wrap_to_32_bits() -> None:
    assert Mulberry32(-1).next_uint32() == Mulberry32(0xFFFFFFFF).next_uint32()
    assert Mulberry32(1 << 32).next_uint32() == Mulberry32(0).next_uint32()


def test_outputs_stay_in_unit_interval() -> None:
    rng = Mulberry32(7)
    values = [rng() for _ in range(5000)]
    assert all(0.0 <= v < 1.0 for v in values)
    assert 0.45 < sum(values) / len(values) < 0.55
