"""The seeded random stream of the fixture corpus: mulberry32 (docs/gate.md §8.1).

mulberry32 is a 32-bit generator with one word of state. Every step adds the golden-ratio-like increment
``0x6D2B79F5`` to the state and mixes it with two multiply-xorshift rounds; the 32-bit result divided by 2**32 is
a float in ``[0, 1)``. All arithmetic wraps at 32 bits, exactly as the JavaScript original's ``Math.imul`` and
``>>> 0`` do, so a seed gives the same stream in both implementations.
"""

from __future__ import annotations

_MASK = 0xFFFFFFFF
_INCREMENT = 0x6D2B79F5
"""The state increment of mulberry32 (docs/gate.md §8.1)."""
_SCALE = 4294967296.0
"""2**32: the divisor that maps a uint32 into [0, 1)."""


def _imul(a: int, b: int) -> int:
    """32-bit wrapping multiplication (the unsigned bits of JavaScript's ``Math.imul``)."""
    return (a * b) & _MASK


class Mulberry32:
    """A mulberry32 stream.

    Args:
        seed: any int; only its low 32 bits are used (a negative seed wraps like JavaScript's ``|0``).

    Call :meth:`next` (or the instance) for the next float in ``[0, 1)``. Not thread-safe; one stream per use.
    """

    __slots__ = ("_state",)

    def __init__(self, seed: int) -> None:
        self._state = seed & _MASK

    def next_uint32(self) -> int:
        """Advance the state and return the next output as an unsigned 32-bit int."""
        self._state = (self._state + _INCREMENT) & _MASK
        a = self._state
        t = _imul(a ^ (a >> 15), 1 | a)
        t = ((t + _imul(t ^ (t >> 7), 61 | t)) & _MASK) ^ t
        return (t ^ (t >> 14)) & _MASK

    def next(self) -> float:
        """Return the next float in ``[0, 1)`` (a uint32 divided by 2**32)."""
        return self.next_uint32() / _SCALE

    __call__ = next
